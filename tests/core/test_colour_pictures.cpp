// Colour end to end on the host: pictures decoded in R, G, B (8 and 16 bits, alpha, gray, CMYK),
// framed by the model's rule (centre crop as torchvision's Resize + CenterCrop, stretch, fit) and
// mapped to its input values (range, mean, deviation, channel order), each against a computation
// made another way.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/core/data/image_file.h"
#include "app/core/data/image_set.h"
#include "app/core/data/picture.h"
#include "app/core/data/preprocessing.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

const std::string kPictures = std::string(CONVSCOPE_SOURCE_DIR) + "/tests/data/pictures/";

Picture randomPicture(int height, int width, int channels, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> value(0.0f, 1.0f);
  Picture picture = blankPicture(height, width, channels);
  for (float& v : picture.pixels) v = value(random);
  return picture;
}

// The crop taken the long way: the whole resize built (resized()), then the centre rows and
// columns copied, with the sizes and offsets written out as torchvision computes them.
Picture cropOfFullResize(const Picture& picture, int height, int width, double fraction) {
  const int shorter = static_cast<int>(std::lround(std::min(height, width) / fraction));
  int resizedHeight = shorter, resizedWidth = shorter;
  if (picture.height <= picture.width)
    resizedWidth = static_cast<int>(static_cast<int64_t>(shorter) * picture.width / picture.height);
  else
    resizedHeight = static_cast<int>(static_cast<int64_t>(shorter) * picture.height / picture.width);
  resizedHeight = std::max(resizedHeight, height);
  resizedWidth = std::max(resizedWidth, width);
  const Picture whole = resized(picture, resizedHeight, resizedWidth);
  const int top = static_cast<int>(std::nearbyint((resizedHeight - height) / 2.0));
  const int left = static_cast<int>(std::nearbyint((resizedWidth - width) / 2.0));
  Picture out = blankPicture(height, width, picture.channels);
  for (int c = 0; c < picture.channels; ++c)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) out.plane(c)[static_cast<size_t>(y) * width + x] = whole.at(c, top + y, left + x);
  return out;
}

TEST(CentreCrop, IsTheCentreOfTheWholeResizeToTheBitForPicturesOfManyShapes) {
  // Odd sizes, portrait and landscape, smaller and larger than the input, non-square inputs.
  const int shapes[][4] = {{300, 451, 224, 224}, {451, 300, 224, 224}, {17, 5, 224, 224},    {224, 224, 224, 224},
                           {1000, 999, 31, 47},  {3, 2000, 13, 13},    {255, 256, 224, 224}, {7, 7, 5, 9}};
  unsigned seed = 1;
  for (const auto& s : shapes)
    for (double fraction : {0.875, 1.0, 0.5}) {
      const Picture picture = randomPicture(s[0], s[1], 3, seed++);
      const Picture cropped = centreCropped(picture, s[2], s[3], fraction);
      const Picture expected = cropOfFullResize(picture, s[2], s[3], fraction);
      ASSERT_EQ(cropped.channels, 3);
      ASSERT_EQ(cropped.pixels.size(), expected.pixels.size());
      for (size_t i = 0; i < expected.pixels.size(); ++i)
        ASSERT_EQ(cropped.pixels[i], expected.pixels[i])
            << s[0] << "x" << s[1] << " to " << s[2] << "x" << s[3] << " fraction " << fraction << " value " << i;
    }
}

TEST(CentreCrop, TakesTorchvisionsSizesAndOffsets) {
  // chelsea.png is 300 x 451: Resize(256) makes it 256 x 384 (384.85 rounded down) and
  // CenterCrop(224) starts at row 16, column 80. A picture whose column x holds x shows which
  // source columns the crop's first and last columns come from.
  Picture ramp = blankPicture(300, 451, 1);
  for (int y = 0; y < 300; ++y)
    for (int x = 0; x < 451; ++x) ramp.pixels[static_cast<size_t>(y) * 451 + x] = static_cast<float>(x);
  const Picture cropped = centreCropped(ramp, 224, 224, 0.875);
  const float scale = 451.0f / 384.0f;
  EXPECT_FLOAT_EQ(cropped.at(0, 0), scale * (80 + 0.5f) - 0.5f);
  EXPECT_FLOAT_EQ(cropped.at(0, 223), scale * (303 + 0.5f) - 0.5f);
  // A picture already at the input is left as it is, whatever the fraction says of bigger ones.
  const Picture exact = randomPicture(224, 224, 3, 99);
  EXPECT_EQ(centreCropped(exact, 224, 224, 1.0).pixels, exact.pixels);
}

TEST(CentreCrop, AFiftyMillionPixelLineCostsOnlyTheCropsTaps) {
  // 1 x 5,000,000 pixels to 224 x 224 at 0.875 is a resize to 256 x 1,280,000,000 columns: its
  // taps alone would be 20 GB. Only the 224 kept are computed.
  const Picture line = blankPicture(1, 5'000'000, 1);
  const Picture cropped = centreCropped(line, 224, 224, 0.875);
  EXPECT_EQ(cropped.height, 224);
  EXPECT_EQ(cropped.width, 224);
}

TEST(Picture, GrayOfColourUsesBt601WeightsAndColourFitUsesEachChannelsBackground) {
  Picture colour = blankPicture(1, 2, 3);
  colour.pixels = {1.0f, 0.2f, 0.0f, 0.4f, 0.0f, 0.6f};  // R plane, G plane, B plane
  const Picture gray = grayOf(colour);
  ASSERT_EQ(gray.channels, 1);
  EXPECT_FLOAT_EQ(gray.at(0, 0), 0.299f * 1.0f + 0.587f * 0.0f + 0.114f * 0.0f);
  EXPECT_FLOAT_EQ(gray.at(0, 1), 0.299f * 0.2f + 0.587f * 0.4f + 0.114f * 0.6f);

  // A wide picture fitted to a square is padded above and below with each channel's own
  // background: a red border pads red, not gray.
  Picture wide = blankPicture(2, 8, 3);
  for (size_t i = 0; i < wide.planeSize(); ++i) wide.plane(0)[i] = 0.9f, wide.plane(2)[i] = 0.1f;
  const Picture fitted = resizedToFit(wide, 8, 8);
  EXPECT_FLOAT_EQ(fitted.at(0, 0, 0), 0.9f);
  EXPECT_FLOAT_EQ(fitted.at(1, 0, 0), 0.0f);
  EXPECT_FLOAT_EQ(fitted.at(2, 0, 0), 0.1f);
}

TEST(Preprocessing, TheBatchMapsEveryValueByTheRuleInTheModelsChannelOrder) {
  // Two 3 x 5 colour pictures at the input size (no resize), with values from 0 to 1.
  std::vector<Picture> pictures = {randomPicture(3, 5, 3, 7), randomPicture(3, 5, 3, 8)};
  pictures[0].pixels[0] = 0.0f;
  pictures[1].pixels.back() = 1.0f;
  const ImageSet set = ImageSet::fromImages("two pictures", pictures, {});
  Preprocessing rule = defaultPreprocessing(3);
  rule.valueRange = 255.0f;
  rule.mean = {127.0f, 10.0f, -3.5f};
  rule.deviation = {128.0f, 0.5f, 2.0f};
  for (ChannelOrder order : {ChannelOrder::Rgb, ChannelOrder::Bgr}) {
    rule.channelOrder = order;
    const Tensor batch = set.batch(0, 2, 3, 5, rule);
    ASSERT_EQ(batch.shape(), (Shape{2, 3, 3, 5}));
    for (int n = 0; n < 2; ++n)
      for (int c = 0; c < 3; ++c) {
        const int from = order == ChannelOrder::Bgr ? 2 - c : c;
        for (int i = 0; i < 15; ++i) {
          const double v = pictures[static_cast<size_t>(n)].pixels[static_cast<size_t>(from * 15 + i)];
          const double expected =
              (v * 255.0 - rule.mean[static_cast<size_t>(c)]) / rule.deviation[static_cast<size_t>(c)];
          EXPECT_NEAR(batch.data()[(n * 3 + c) * 15 + i], expected, 1e-5 * std::max(1.0, std::abs(expected)))
              << "image " << n << " channel " << c << " value " << i;
        }
      }
  }
  // A gray model's default rule leaves the values as they are, to the bit.
  const ImageSet gray = ImageSet::fromImages("gray", {randomPicture(4, 4, 1, 3)}, {});
  const Tensor same = gray.batch(0, 1, 4, 4, defaultPreprocessing(1));
  const Picture original = gray.image(0);
  for (size_t i = 0; i < original.pixels.size(); ++i) EXPECT_EQ(same.data()[i], original.pixels[i]);
}

TEST(Preprocessing, CardFieldsOverTheDefaultsAndOneLineForPeople) {
  const Preprocessing lite = preprocessingFromJson(
      nlohmann::json::parse(R"({"value_range": 255, "mean": [127], "std": [128], "channel_order": "bgr"})"),
      defaultPreprocessing(3), "lite.json");
  EXPECT_EQ(lite.framing, PictureFraming::CentreCrop);  // from the colour default
  EXPECT_EQ(lite.mean[2], 127.0f);
  EXPECT_EQ(lite.deviation[1], 128.0f);
  EXPECT_EQ(describePreprocessing(lite, 3), "centre crop 0.875, BGR, (x * 255 - 127) / 128");
  EXPECT_EQ(describePreprocessing(defaultPreprocessing(1), 1),
            "fit, inverted when the background is light, values as they are (0 to 1)");
  EXPECT_EQ(describePreprocessing(defaultPreprocessing(3), 3),
            "centre crop 0.875, RGB, (x - (0.485 0.456 0.406)) / (0.229 0.224 0.225)");
  // What is written reads back as the same rule.
  const Preprocessing again = preprocessingFromJson(preprocessingToJson(lite), Preprocessing{}, "again.json");
  EXPECT_EQ(describePreprocessing(again, 3), describePreprocessing(lite, 3));
  EXPECT_EQ(again.inversion, lite.inversion);
}

// The colours make_pictures.py wrote, row-major 3 x 4.
const int kColours[3][4][3] = {{{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}},
                               {{0, 0, 0}, {10, 20, 30}, {200, 100, 50}, {128, 128, 128}},
                               {{1, 2, 3}, {250, 251, 252}, {60, 0, 200}, {0, 90, 255}}};

TEST(ColourImageFile, EightAndSixteenBitPngsDecodeToTheirRgbValues) {
  if (!imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV to read image files";
  for (const char* name : {"rgb.png", "rgba.png", "rgb16.png"}) {
    const Picture picture = loadImageFile(kPictures + name, false, 3);
    ASSERT_EQ(picture.channels, 3) << name;
    ASSERT_EQ(picture.height, 3) << name;
    ASSERT_EQ(picture.width, 4) << name;
    const bool sixteen = std::string(name) == "rgb16.png";
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x)
        for (int c = 0; c < 3; ++c) {
          const int v = kColours[y][x][c];
          // 16 bits: 257 v + 1 below 255 (the file's values), so not the 8-bit value widened.
          const float expected =
              sixteen ? static_cast<float>((257.0 * v + (v < 255 ? 1 : 0)) / 65535.0) : static_cast<float>(v) / 255.0f;
          EXPECT_NEAR(picture.at(c, y, x), expected, sixteen ? 1e-7 : 0.0) << name << " " << y << "," << x << " c" << c;
        }
  }
  // The transparent red pixel of rgba.png is red: the alpha is dropped, as torchvision's loader does.
  EXPECT_EQ(loadImageFile(kPictures + "rgba.png", false, 3).at(0, 0, 0), 1.0f);
}

TEST(ColourImageFile, AGrayFileGivesThreeEqualChannelsAndColourGivesGrayForAGrayModel) {
  if (!imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV to read image files";
  const Picture gray = loadImageFile(kPictures + "gray.png", false, 3);
  ASSERT_EQ(gray.channels, 3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(gray.at(c, y, x), static_cast<float>(kColours[y][x][1]) / 255.0f);
  const Picture oneChannel = loadImageFile(kPictures + "rgb.png", false, 1);
  ASSERT_EQ(oneChannel.channels, 1);
  EXPECT_NEAR(oneChannel.at(0, 0), 0.299f, 1.0f / 255.0f);  // pure red, BT.601's weight rounded to a byte
  EXPECT_NEAR(oneChannel.at(0, 1), 0.587f, 1.0f / 255.0f);
}

TEST(ColourImageFile, ACmykJpegComesOutInRgb) {
  if (!imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV to read image files";
  const Picture picture = loadImageFile(kPictures + "cmyk.jpg", false, 3);
  ASSERT_EQ(picture.channels, 3);
  ASSERT_EQ(picture.width, 32);
  // The left block was pure red, the right pure blue (JPEG keeps flat blocks within a few levels).
  EXPECT_NEAR(picture.at(0, 8, 8), 1.0f, 0.05f);
  EXPECT_NEAR(picture.at(1, 8, 8), 0.0f, 0.05f);
  EXPECT_NEAR(picture.at(2, 8, 8), 0.0f, 0.05f);
  EXPECT_NEAR(picture.at(0, 8, 24), 0.0f, 0.05f);
  EXPECT_NEAR(picture.at(2, 8, 24), 1.0f, 0.05f);
}

}  // namespace
}  // namespace convscope
