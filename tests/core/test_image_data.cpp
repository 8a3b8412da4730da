// Preprocessing shared by every input path: bilinear resizing with half-pixel centres (as PyTorch
// trained the 48x48 course models) and image files decoded to [0, 1] gray.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "app/core/data/image_file.h"
#include "app/core/data/image_set.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

using testing::expectError;
using testing::TempDir;

TEST(BilinearResize, MatchesPyTorchInterpolateWithoutAlignedCorners) {
  // torch.nn.functional.interpolate(torch.tensor([[[[0.,1.],[2.,3.]]]]), size=(4,4),
  //                                 mode='bilinear', align_corners=False)
  const float src[] = {0, 1, 2, 3};
  const float expected[] = {0.0f, 0.25f, 0.75f, 1.0f, 0.5f, 0.75f, 1.25f, 1.5f,
                            1.5f, 1.75f, 2.25f, 2.5f, 2.0f, 2.25f, 2.75f, 3.0f};
  float dst[16];
  resizeBilinearHalfPixel(src, 2, 2, dst, 4, 4);
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(dst[i], expected[i]) << "pixel " << i;
}

TEST(BilinearResize, HalvingAveragesPixelPairsAndSameSizeCopies) {
  const float src[] = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
  float half[4];
  resizeBilinearHalfPixel(src, 4, 4, half, 2, 2);
  EXPECT_FLOAT_EQ(half[0], (0 + 2 + 8 + 10) / 4.0f);
  EXPECT_FLOAT_EQ(half[3], (20 + 22 + 28 + 30) / 4.0f);
  float same[16];
  resizeBilinearHalfPixel(src, 4, 4, same, 4, 4);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(same[i], src[i]);
}

// A wide picture: 28 rows x 56 columns, a bright garment with a gradient and dark edges on a
// background of 0.1, one outlier pixel on the border that must not change the padding.
Picture widePicture() {
  Picture image{28, 56, std::vector<float>(28 * 56, 0.1f)};
  for (int y = 3; y < 25; ++y)
    for (int x = 5; x < 51; ++x)
      image.pixels[static_cast<size_t>(y) * 56 + x] = 0.3f + 0.7f * static_cast<float>(x) / 56.0f;
  image.pixels[0] = 1.0f;
  return image;
}

TEST(ResizeToFit, AWidePictureIsPaddedWithItsBackgroundNotSquashed) {
  const Picture wide = widePicture();
  EXPECT_FLOAT_EQ(backgroundValue(wide), 0.1f);
  // Independently: the 56 x 56 canvas (14 background rows above and below the picture), then a
  // halving, which for half-pixel bilinear resampling is the mean of each 2 x 2 block.
  std::vector<float> canvas(56 * 56, 0.1f);
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 56; ++x) canvas[static_cast<size_t>(y + 14) * 56 + x] = wide.at(y, x);
  const Picture fitted = resizedToFit(wide, 28, 28);
  ASSERT_EQ(fitted.height, 28);
  ASSERT_EQ(fitted.width, 28);
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x) {
      const auto c = [&](int yy, int xx) { return canvas[static_cast<size_t>(yy) * 56 + xx]; };
      const float expected =
          (c(2 * y, 2 * x) + c(2 * y, 2 * x + 1) + c(2 * y + 1, 2 * x) + c(2 * y + 1, 2 * x + 1)) / 4;
      ASSERT_NEAR(fitted.at(y, x), expected, 1e-6f) << "pixel y " << y << ", x " << x;
    }
  // Squashing would have put the garment in the top rows; padding keeps them background.
  EXPECT_FLOAT_EQ(fitted.at(0, 14), 0.1f);
  EXPECT_GT(fitted.at(14, 14), 0.5f);
  EXPECT_NE(fitted.pixels, resized(wide, 28, 28).pixels);
}

TEST(ResizeToFit, ATallPictureIsPaddedLeftAndRightAndASquareOneIsOnlyResized) {
  // 9 rows x 3 columns (odd sizes) into 6 x 6: a 9 x 9 canvas, the picture in columns 3..5.
  Picture tall{9, 3, {}};
  for (int i = 0; i < 27; ++i) tall.pixels.push_back(i % 4 == 0 ? -0.5f : 0.25f * static_cast<float>(i % 5));
  Picture canvas{9, 9, std::vector<float>(81, 0.7f)};
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 3; ++x) canvas.pixels[static_cast<size_t>(y) * 9 + x + 3] = tall.at(y, x);
  EXPECT_EQ(resizedToFit(tall, 6, 6, 0.7f).pixels, resized(canvas, 6, 6).pixels);
  const Picture square{4, 4, std::vector<float>(16, 0.5f)};
  EXPECT_EQ(resizedToFit(square, 7, 7).pixels, resized(square, 7, 7).pixels);
}

// resizedToFit as it was first written: the picture pasted on a canvas of the target's aspect
// ratio, then the whole canvas resized. The function now reads the canvas without building it.
Picture fitOnABuiltCanvas(const Picture& image, int height, int width, float background) {
  const int64_t tall = int64_t{image.height} * width, wide = int64_t{image.width} * height;
  int canvasHeight = image.height, canvasWidth = image.width;
  if (wide > tall)
    canvasHeight = static_cast<int>((int64_t{image.width} * height + width - 1) / width);
  else if (tall > wide)
    canvasWidth = static_cast<int>((int64_t{image.height} * width + height - 1) / height);
  Picture canvas{canvasHeight, canvasWidth,
                 std::vector<float>(static_cast<size_t>(canvasHeight) * canvasWidth, background)};
  const int top = (canvasHeight - image.height) / 2, left = (canvasWidth - image.width) / 2;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      canvas.pixels[static_cast<size_t>(top + y) * canvasWidth + left + x] = image.at(y, x);
  return resized(canvas, height, width);
}

TEST(ResizeToFit, GivesTheBuiltCanvasResultToTheBitForPicturesOfManyShapes) {
  uint32_t state = 7;
  const auto next = [&] { return static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) / 16777216.0f; };
  const std::vector<std::pair<int, int>> shapes = {{28, 56}, {56, 28}, {9, 3},   {3, 9},     {100, 37}, {37, 100},
                                                   {1, 5},   {5, 1},   {48, 24}, {24, 48},   {13, 200}, {211, 17},
                                                   {49, 48}, {48, 49}, {1, 1},   {40, 2000}, {2000, 40}};
  const std::vector<std::pair<int, int>> targets = {{48, 48}, {28, 28}, {28, 48}, {48, 28}, {6, 6}, {7, 12}};
  for (const auto& [h, w] : shapes) {
    Picture image{h, w, {}};
    for (int i = 0; i < h * w; ++i) image.pixels.push_back(next());
    for (const auto& [th, tw] : targets) {
      SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w) + " into " + std::to_string(th) + "x" +
                   std::to_string(tw));
      EXPECT_EQ(resizedToFit(image, th, tw, 0.3f).pixels, fitOnABuiltCanvas(image, th, tw, 0.3f).pixels);
    }
  }
}

TEST(ResizeToFit, APanoramaIsFittedWithoutACanvasAsWideAsItIs) {
  // One row of 8 million pixels (32 MB): a canvas of its width would hold 6.4e13 floats, 233 TiB,
  // more than a process can address, so building it throws std::bad_alloc. Only the result is
  // allocated now. The row itself lies between the two canvas rows that bilinear resampling
  // reads for the middle of the result, so every pixel is the background.
  const Picture panorama{1, 8'000'000, std::vector<float>(8'000'000, 0.9f)};
  const Picture fitted = resizedToFit(panorama, 48, 48, 0.25f);
  ASSERT_EQ(fitted.height, 48);
  ASSERT_EQ(fitted.width, 48);
  for (const float pixel : fitted.pixels) ASSERT_NEAR(pixel, 0.25f, 1e-6f);
}

TEST(ResizeToFit, AWidePanoramaShowsAsABandAcrossTheMiddleRows) {
  // 1000 x 20000 (a canvas would be 20000 x 20000, 1.6 GB): fitted into 48 x 48 it is a band 2.4
  // rows high. The rows resampling reads, scale * (i + 0.5) - 0.5 with scale 20000 / 48, are in
  // the picture (canvas rows 9500..10499) for i = 23 and 24 only.
  const int height = 1000, width = 20000;
  Picture panorama{height, width, std::vector<float>(static_cast<size_t>(height) * width, 0.9f)};
  const Picture fitted = resizedToFit(panorama, 48, 48, 0.1f);
  ASSERT_EQ(fitted.pixels.size(), 48u * 48u);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 48; ++x)
      ASSERT_NEAR(fitted.at(y, x), y == 23 || y == 24 ? 0.9f : 0.1f, 1e-5f) << "y " << y << ", x " << x;
}

TEST(ResizeToFit, AGarmentTheFullHeightOfAWidePictureDoesNotBecomeTheBackground) {
  // 20 x 40, background 0.1, a garment of 0.8 over the full height in columns 4..35: it covers 64
  // of the 80 pixels of the top and bottom rows, so the median of the whole border would be the
  // garment. The short sides, the left and right columns, are background.
  Picture picture{20, 40, std::vector<float>(20 * 40, 0.1f)};
  for (int y = 0; y < 20; ++y)
    for (int x = 4; x < 36; ++x) picture.pixels[static_cast<size_t>(y) * 40 + x] = 0.8f;
  EXPECT_FLOAT_EQ(backgroundValue(picture), 0.1f);
  // The same, standing: a garment the full width of a tall picture.
  Picture standing{40, 20, std::vector<float>(40 * 20, 0.1f)};
  for (int y = 4; y < 36; ++y)
    for (int x = 0; x < 20; ++x) standing.pixels[static_cast<size_t>(y) * 20 + x] = 0.8f;
  EXPECT_FLOAT_EQ(backgroundValue(standing), 0.1f);
  // The padding above and below is the background, not the garment.
  const Picture fitted = resizedToFit(picture, 48, 48);
  EXPECT_NEAR(fitted.at(2, 24), 0.1f, 1e-6f);
  EXPECT_NEAR(fitted.at(24, 24), 0.8f, 1e-6f);
}

TEST(ImageSetBatch, UpsamplesToTheModelInputAndChecksRanges) {
  std::vector<Picture> images = {{2, 2, {0.0f, 0.25f, 0.5f, 1.0f}}, {2, 2, {1.0f, 1.0f, 1.0f, 1.0f}}};
  const ImageSet set = ImageSet::fromImages("two pictures", images, fashionMnistClassNames());
  EXPECT_FALSE(set.hasLabels());
  const Tensor batch = set.batch(0, 2, 4, 4);
  EXPECT_EQ(batch.shape(), (Shape{2, 1, 4, 4}));
  EXPECT_FLOAT_EQ(batch[0], 0.0f);
  EXPECT_FLOAT_EQ(batch[15], 1.0f);
  EXPECT_FLOAT_EQ(batch[16 + 5], 1.0f);
  expectError([&] { set.batch(1, 2, 4, 4); }, {"two pictures", "holds 2"});
  expectError([&] { set.image(5); }, {"index 5"});
}

// A binary PGM written by hand: the simplest image file every OpenCV build decodes.
std::vector<uint8_t> pgm(int width, int height, const std::vector<uint8_t>& pixels) {
  const std::string header = "P5\n" + std::to_string(width) + " " + std::to_string(height) + "\n255\n";
  std::vector<uint8_t> bytes(header.begin(), header.end());
  bytes.insert(bytes.end(), pixels.begin(), pixels.end());
  return bytes;
}

TEST(ImageFile, DecodesToGrayInUnitRangeAndInvertsOnRequest) {
  TempDir dir;
  const auto file = dir.write("sample.pgm", pgm(3, 2, {0, 51, 255, 255, 102, 0}));
  if (!imageFilesSupported()) {
    expectError([&] { loadImageFile(file, false); }, {"sample.pgm", "no OpenCV"});
    return;
  }
  const Picture image = loadImageFile(file, false);
  ASSERT_EQ(image.height, 2);
  ASSERT_EQ(image.width, 3);
  EXPECT_FLOAT_EQ(image.at(0, 1), 0.2f);
  EXPECT_FLOAT_EQ(image.at(1, 0), 1.0f);
  const Picture inverted = loadImageFile(file, true);
  EXPECT_FLOAT_EQ(inverted.at(1, 0), 0.0f);
  EXPECT_FLOAT_EQ(inverted.at(0, 0), 1.0f);
}

// The window and classify --images share this rule: a light border means a dark object on a
// light background, inverted into the data set's form; a dark border is left alone.
TEST(ImageFile, APictureWithALightBorderIsInvertedForTheDataSet) {
  if (!imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV to read image files";
  TempDir dir;
  // 4x3, a dark middle on a light border (border mean 0.9), and its negative.
  const std::vector<uint8_t> light = {230, 230, 230, 230, 230, 20, 40, 230, 230, 230, 230, 230};
  std::vector<uint8_t> dark;
  for (uint8_t v : light) dark.push_back(static_cast<uint8_t>(255 - v));
  const auto lightFile = dir.write("light.pgm", pgm(4, 3, light));
  const auto darkFile = dir.write("dark.pgm", pgm(4, 3, dark));
  EXPECT_TRUE(hasLightBackground(loadImageFile(lightFile, false)));
  EXPECT_FALSE(hasLightBackground(loadImageFile(darkFile, false)));

  const DataSetPicture automatic = loadPictureForDataSet(lightFile, PictureInversion::Automatic);
  EXPECT_TRUE(automatic.inverted);
  EXPECT_NEAR(automatic.image.at(1, 1), 1.0f - 20.0f / 255.0f, 1e-6);
  EXPECT_NEAR(automatic.image.at(0, 0), 1.0f - 230.0f / 255.0f, 1e-6);
  const DataSetPicture alreadyDark = loadPictureForDataSet(darkFile, PictureInversion::Automatic);
  EXPECT_FALSE(alreadyDark.inverted);
  for (size_t i = 0; i < light.size(); ++i) EXPECT_NEAR(alreadyDark.image.pixels[i], automatic.image.pixels[i], 1e-6);
  const DataSetPicture never = loadPictureForDataSet(lightFile, PictureInversion::Never);
  EXPECT_FALSE(never.inverted);
  EXPECT_NEAR(never.image.at(1, 1), 20.0f / 255.0f, 1e-6);
  const DataSetPicture always = loadPictureForDataSet(darkFile, PictureInversion::Always);
  EXPECT_TRUE(always.inverted);
  EXPECT_NEAR(always.image.at(1, 1), 20.0f / 255.0f, 1e-6);
  // A border of exactly one half is not "mostly light".
  EXPECT_FALSE(hasLightBackground(Picture{2, 2, {0.5f, 0.5f, 0.5f, 0.5f}}));
  EXPECT_FALSE(hasLightBackground(Picture{}));
}

TEST(ImageFile, RefusesMissingAndNonImageFilesNamingThem) {
  TempDir dir;
  expectError([&] { loadImageFile(dir.path() / "absent.png", false); }, {"absent.png"});
  const auto text = dir.write("notes.png", {'h', 'e', 'l', 'l', 'o'});
  expectError([&] { loadImageFile(text, false); }, {"notes.png"});
}

}  // namespace
}  // namespace convscope
