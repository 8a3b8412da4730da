// Preprocessing shared by every input path: bilinear resizing with half-pixel centres (as PyTorch
// trained the 48x48 course models) and image files decoded to [0, 1] gray.
#include <gtest/gtest.h>

#include "core/test_support.h"
#include "data/image_file.h"
#include "data/image_set.h"

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

TEST(ImageSetBatch, UpsamplesToTheModelInputAndChecksRanges) {
  std::vector<GrayImage> images = {{2, 2, {0.0f, 0.25f, 0.5f, 1.0f}}, {2, 2, {1.0f, 1.0f, 1.0f, 1.0f}}};
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
  const GrayImage image = loadImageFile(file, false);
  ASSERT_EQ(image.height, 2);
  ASSERT_EQ(image.width, 3);
  EXPECT_FLOAT_EQ(image.at(0, 1), 0.2f);
  EXPECT_FLOAT_EQ(image.at(1, 0), 1.0f);
  const GrayImage inverted = loadImageFile(file, true);
  EXPECT_FLOAT_EQ(inverted.at(1, 0), 0.0f);
  EXPECT_FLOAT_EQ(inverted.at(0, 0), 1.0f);
}

TEST(ImageFile, RefusesMissingAndNonImageFilesNamingThem) {
  TempDir dir;
  expectError([&] { loadImageFile(dir.path() / "absent.png", false); }, {"absent.png"});
  const auto text = dir.write("notes.png", {'h', 'e', 'l', 'l', 'o'});
  expectError([&] { loadImageFile(text, false); }, {"notes.png"});
}

}  // namespace
}  // namespace convscope
