// The wgmma-from-shared-memory path's entry layout (gpu/kernels/wgmma_operand_layout.h), checked
// on the host with no GPU: every entry filled as the staging pass fills it, every product tile's
// k-steps read through the descriptors' arithmetic (start + the k-step's offset, the second core
// matrix a leading offset on, output row j a stride on), times the weights placed where the
// staging of the weights places them, against the convolution written from its definition (in
// double). Fresh random stride-1 shapes each run: 1 to 16 channels (both packings), kernels 1 to 7
// and 8 to 9 wide (two groups of eight taps), asymmetric padding, sizes no tile divides, pooled
// and not; plus the course's two layers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "gpu/kernels/wgmma_operand_layout.h"
#include "tests/core/course_layers.h"
#include "tests/core/direct_convolution.h"

namespace convscope {
namespace {

using gpu::implicit_gemm::EntryPacking;
using gpu::implicit_gemm::kEntryFloats;
using gpu::implicit_gemm::kStepTaps;
using gpu::implicit_gemm::kTileSide;
using gpu::implicit_gemm::OperandLayout;

// One image's entries, as the staging pass writes them.
std::vector<float> stagedImage(const OperandLayout& l, const float* image) {
  std::vector<float> entries(static_cast<size_t>(l.imageEntries) * kEntryFloats);
  for (int plane = 0; plane < l.planes; ++plane)
    for (int y = 0; y < l.stagedHeight; ++y)
      for (int x = 0; x < l.stagedWidth; ++x)
        for (int t = 0; t < kEntryFloats; ++t) {
          const auto s = gpu::implicit_gemm::entrySource(l, plane, y, x, t);
          const size_t at = ((static_cast<size_t>(plane) * l.stagedHeight + y) * l.stagedWidth + x) * kEntryFloats + t;
          entries[at] = s.valid ? image[(s.c * l.inHeight + s.y) * l.inWidth + s.x] : 0.0f;
        }
  return entries;
}

struct Shape {
  ConvProblem problem;
  bool pooled = false;
};

Shape randomShape(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int sizes[] = {5, 7, 11, 13, 17, 21, 23};
  Shape s;
  ConvProblem& p = s.problem;
  p.batch = pick(1, 2);
  p.inChannels = pick(0, 2) == 0 ? 4 * pick(1, 4) : pick(1, 13);
  p.outChannels = pick(1, 40);
  p.kernelHeight = pick(1, 7);
  p.kernelWidth = pick(0, 5) == 0 ? pick(8, 9) : pick(1, 7);
  if (pick(0, 1)) {
    p.padTop = pick(0, 3);
    p.padLeft = pick(0, 3);
    p.padBottom = pick(0, 3);
    p.padRight = pick(0, 3);
  }
  p.inHeight = std::max(sizes[pick(0, 6)], p.kernelHeight);
  p.inWidth = std::max(sizes[pick(0, 6)], p.kernelWidth);
  s.pooled = pick(0, 1) && p.outHeight() >= 2 && p.outWidth() >= 2;
  return s;
}

TEST(WgmmaOperandLayout, DescriptorReadsOfTheStagedEntriesReproduceTheConvolution) {
  const unsigned seed = std::random_device{}();
  std::printf("wgmma operand layout: seed %u\n", seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<Shape> shapes;
  for (int i = 0; i < 60; ++i) shapes.push_back(randomShape(rng));
  shapes.push_back({testing::courseConv1(1), true});
  shapes.push_back({testing::courseConv2(2), true});
  std::map<EntryPacking, int> packings;
  for (const Shape& shape : shapes) {
    const ConvProblem& p = shape.problem;
    SCOPED_TRACE(p.describe() + (shape.pooled ? ", pooled" : ""));
    const int rows = shape.pooled ? p.outHeight() / 2 * 2 : p.outHeight();
    const int cols = shape.pooled ? p.outWidth() / 2 * 2 : p.outWidth();
    const OperandLayout l = gpu::implicit_gemm::operandLayoutFor(p, rows, cols);
    ++packings[l.packing];
    ASSERT_GE(l.tileRows * kTileSide, rows);
    ASSERT_GE(l.tileCols * kTileSide, cols);

    // The weights' k-step slots: each (k-step, core matrix, tap) holds at most one weight, and
    // every weight has one inside the k-steps.
    const int taps = p.inChannels * p.kernelHeight * p.kernelWidth;
    std::vector<int> slotWeight(static_cast<size_t>(l.kSteps) * kStepTaps, -1);
    for (int c = 0; c < p.inChannels; ++c)
      for (int kh = 0; kh < p.kernelHeight; ++kh)
        for (int kw = 0; kw < p.kernelWidth; ++kw) {
          const auto at = gpu::implicit_gemm::kStepTapOfWeight(l, c, kh, kw);
          ASSERT_TRUE(at.kStep >= 0 && at.kStep < l.kSteps && (at.half == 0 || at.half == 1) && at.tap >= 0 &&
                      at.tap < kEntryFloats)
              << "weight (" << c << ", " << kh << ", " << kw << ") placed outside the k-steps";
          int& slot = slotWeight[static_cast<size_t>(at.kStep * kStepTaps + at.half * kEntryFloats + at.tap)];
          ASSERT_EQ(slot, -1) << "two weights in one slot of k-step " << at.kStep;
          slot = (c * p.kernelHeight + kh) * p.kernelWidth + kw;
        }

    std::vector<float> x(static_cast<size_t>(p.inputElements())), w(static_cast<size_t>(p.weightElements()));
    for (float& v : x) v = value(rng);
    for (float& v : w) v = value(rng);
    const std::vector<double> want = testing::directConvolution(p, x.data(), w.data());
    const int imageFloats = p.inChannels * p.inHeight * p.inWidth;
    int wrong = 0;
    for (int image = 0; image < p.batch && wrong < 3; ++image) {
      const std::vector<float> entries = stagedImage(l, x.data() + static_cast<size_t>(image) * imageFloats);
      for (int tile = 0; tile < l.tileRows * l.tileCols && wrong < 3; ++tile) {
        const int oy0 = kTileSide * (tile / l.tileCols), ox0 = kTileSide * (tile % l.tileCols);
        const int origin = oy0 * l.stagedWidth + ox0;
        for (int m = 0; m < kTileSide * kTileSide; ++m) {
          const int oy = oy0 + m / kTileSide, ox = ox0 + m % kTileSide;
          // Row m: core matrix m / 8 along M (a stride of one staged row), its row m % 8 (16 bytes on).
          const int rowEntry = origin + m / kTileSide * l.stagedWidth + m % kTileSide;
          std::vector<double> sums(static_cast<size_t>(p.outChannels), 0.0);
          for (int ks = 0; ks < l.kSteps; ++ks)
            for (int half = 0; half < 2; ++half) {
              const int entry = rowEntry + kStepEntryOffset(l, ks) + half * l.leadingEntries;
              // Every read stays inside the image's first plane's origin ... its last entry.
              ASSERT_TRUE(entry >= 0 && entry < l.imageEntries) << "tile " << tile << " row " << m << " k-step " << ks
                                                                << " reads entry " << entry << " of " << l.imageEntries;
              for (int t = 0; t < kEntryFloats; ++t) {
                const int weight = slotWeight[static_cast<size_t>(ks * kStepTaps + half * kEntryFloats + t)];
                if (weight < 0) continue;
                const double a = entries[static_cast<size_t>(entry) * kEntryFloats + t];
                for (int n = 0; n < p.outChannels; ++n)
                  sums[static_cast<size_t>(n)] += a * w[static_cast<size_t>(n) * taps + weight];
              }
            }
          if (oy >= rows || ox >= cols) continue;  // computed, never stored
          for (int n = 0; n < p.outChannels && wrong < 3; ++n) {
            const double expected = want[static_cast<size_t>(
                ((int64_t{image} * p.outChannels + n) * p.outHeight() + oy) * p.outWidth() + ox)];
            if (std::fabs(sums[static_cast<size_t>(n)] - expected) > 1e-9 * (1.0 + std::fabs(expected)))
              ++wrong, ADD_FAILURE() << "image " << image << " map " << n << " pixel (" << oy << ", " << ox
                                     << "): " << sums[static_cast<size_t>(n)] << ", want " << expected;
          }
        }
      }
    }
  }
  // Both packings were exercised (the course's layers take one each).
  EXPECT_GT(packings[EntryPacking::kChannelQuads], 0);
  EXPECT_GT(packings[EntryPacking::kTapQuads], 0);
}

// The course's layers: conv1 (one channel) packs taps, one k-step a kernel row; conv2 (12
// channels) packs channels, a k-step a pair of taps of one quad. The counts the kernel's speed
// rests on.
TEST(WgmmaOperandLayout, CourseLayersTakeTheirPackings) {
  const OperandLayout conv1 = gpu::implicit_gemm::operandLayoutFor(testing::courseConv1(1), 42, 42);
  EXPECT_EQ(conv1.packing, EntryPacking::kTapQuads);
  EXPECT_EQ(conv1.kSteps, 7);
  EXPECT_EQ(conv1.tileRows * conv1.tileCols, 36);
  const OperandLayout conv2 = gpu::implicit_gemm::operandLayoutFor(testing::courseConv2(1), 14, 14);
  EXPECT_EQ(conv2.packing, EntryPacking::kChannelQuads);
  EXPECT_EQ(conv2.kSteps, 7 * 3 * 4);
  EXPECT_EQ(conv2.tileRows * conv2.tileCols, 4);
}

TEST(WgmmaOperandLayout, DescriptorFieldsDecode) {
  const uint64_t d = gpu::implicit_gemm::sharedMatrixDescriptor(0x12340u, 64, 23 * 16);
  EXPECT_EQ(d & 0x3FFF, 0x12340u >> 4);
  EXPECT_EQ((d >> 16) & 0x3FFF, 64u >> 4);
  EXPECT_EQ((d >> 32) & 0x3FFF, 23u);
  EXPECT_EQ(d >> 62, 0u) << "no swizzle";
}

}  // namespace
}  // namespace convscope
