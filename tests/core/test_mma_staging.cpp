// The tensor-core kernels' staged layout (gpu/kernels/mma_staging.h), checked on the host with no
// GPU: the step's images placed as the arranging pass places them, every product row's runs read
// where the kernel's ldmatrix would read them, and the sums over the runs' taps, times the weights
// the fragments hold, against the convolution written from its definition (in double). Fresh
// random shapes each run: channel counts that are and are not multiples of 4, kernels 1 to 7
// wide and high, strides, asymmetric padding, odd sizes, several images a step, pooled rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpu/kernels/mma_staging.h"
#include "tests/core/course_layers.h"
#include "tests/core/direct_convolution.h"

namespace convscope {
namespace {

using gpu::implicit_gemm::kRunTaps;
using gpu::implicit_gemm::kShiftedCopies;
using gpu::implicit_gemm::ProductRow;
using gpu::implicit_gemm::StagedLayout;
using gpu::implicit_gemm::StagingMode;

// The step's images as the kernel arranges them: zeros, then each input at its place (in each of
// the four copies where shifted).
std::vector<float> arranged(const StagedLayout& l, int images, const std::vector<float>& input) {
  std::vector<float> staged(static_cast<size_t>(stagedFloats(l, images)), 0.0f);
  size_t i = 0;
  for (int image = 0; image < images; ++image)
    for (int c = 0; c < l.channels; ++c)
      for (int y = 0; y < l.height; ++y)
        for (int x = 0; x < l.width; ++x, ++i) {
          const int origin = stagedInputOffset(l, image, c, y, x);
          if (l.mode == StagingMode::kChannelsLast) {
            staged.at(static_cast<size_t>(origin)) = input[i];
            continue;
          }
          for (int s = 0; s < kShiftedCopies; ++s)
            if (origin >= s) staged.at(static_cast<size_t>(s * l.copyStride + origin - s)) = input[i];
        }
  return staged;
}

struct Shape {
  ConvProblem problem;
  bool pooled = false;
};

Shape randomShape(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int kernels[] = {1, 2, 3, 4, 5, 7};
  const int sizes[] = {7, 11, 13, 17, 21, 23, 29};
  Shape s;
  ConvProblem& p = s.problem;
  p.batch = pick(1, 3);
  p.inChannels = pick(0, 2) == 0 ? 4 * pick(1, 4) : pick(1, 13);
  p.outChannels = pick(1, 20);
  p.kernelHeight = kernels[pick(0, 5)];
  p.kernelWidth = kernels[pick(0, 5)];
  if (pick(0, 1)) {
    p.strideHeight = pick(1, 3);
    p.strideWidth = pick(1, 3);
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

TEST(MmaStaging, RunsOverTheArrangedImagesReproduceTheConvolution) {
  const unsigned seed = std::random_device{}();
  std::printf("mma staging: seed %u\n", seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<Shape> shapes;
  for (int i = 0; i < 60; ++i) shapes.push_back(randomShape(rng));
  shapes.push_back({testing::courseConv1(2), true});
  shapes.push_back({testing::courseConv2(3), true});
  std::map<StagingMode, int> modes;
  for (const Shape& shape : shapes) {
    const ConvProblem& p = shape.problem;
    SCOPED_TRACE(p.describe() + (shape.pooled ? ", pooled rows" : ""));
    const int rowPad = kRunTaps * std::uniform_int_distribution<int>(0, 7)(rng);
    const int copyResidue = kRunTaps * std::uniform_int_distribution<int>(0, 7)(rng);
    const StagedLayout l = gpu::implicit_gemm::stagedLayoutFor(p, p.batch, rowPad, copyResidue);
    ++modes[l.mode];
    ASSERT_EQ(l.runs % 2, 0) << "a k-step is two runs";
    ASSERT_EQ(l.rowPitch % kRunTaps, 0);
    ASSERT_EQ(l.imageStride % kRunTaps, 0);

    // Every tap of the kernel is weighted by exactly one (run, column) pair; the rest by none.
    const int taps = p.inChannels * p.kernelHeight * p.kernelWidth;
    std::vector<int> uses(static_cast<size_t>(taps), 0);
    for (int q = 0; q < l.runs; ++q) {
      ASSERT_EQ(runOffset(l, q) % kRunTaps, 0) << "run " << q << " would start a 16-byte row unaligned";
      for (int t = 0; t < kRunTaps; ++t)
        if (const int tap = weightIndexOfTap(l, q, t); tap >= 0) ++uses.at(static_cast<size_t>(tap));
    }
    for (int tap = 0; tap < taps; ++tap) ASSERT_EQ(uses[static_cast<size_t>(tap)], 1) << "tap " << tap;

    std::vector<float> x(static_cast<size_t>(p.inputElements())), w(static_cast<size_t>(p.weightElements()));
    for (float& v : x) v = value(rng);
    for (float& v : w) v = value(rng);
    const std::vector<double> want = testing::directConvolution(p, x.data(), w.data());
    const std::vector<float> staged = arranged(l, p.batch, x);

    const int pooledWidth = shape.pooled ? p.outWidth() / 2 : p.outWidth();
    const int pixels = shape.pooled ? 4 * (p.outHeight() / 2) * pooledWidth : p.outHeight() * p.outWidth();
    int wrong = 0;
    for (int m = 0; m < p.batch * pixels && wrong < 3; ++m) {
      const ProductRow r = gpu::implicit_gemm::productRow(m, pixels, shape.pooled, pooledWidth, p.outWidth());
      const int base = stagedOffset(l, windowOrigin(l, r.image, r.oh, r.ow));
      ASSERT_EQ(base % kRunTaps, 0) << "row " << m << " would start its 16-byte rows unaligned";
      for (int n = 0; n < p.outChannels; ++n) {
        double sum = 0.0;
        for (int q = 0; q < l.runs; ++q)
          for (int t = 0; t < kRunTaps; ++t) {
            const int at = base + runOffset(l, q) + t;
            ASSERT_TRUE(at >= 0 && at < static_cast<int>(staged.size()))
                << "row " << m << " run " << q << " reads outside the staged images";
            const int tap = weightIndexOfTap(l, q, t);
            if (tap >= 0) sum += double{staged[static_cast<size_t>(at)]} * w[static_cast<size_t>(n * taps + tap)];
          }
        const double expected = want[static_cast<size_t>(
            ((int64_t{r.image} * p.outChannels + n) * p.outHeight() + r.oh) * p.outWidth() + r.ow)];
        if (std::fabs(sum - expected) > 1e-9 * (1.0 + std::fabs(expected)))
          ++wrong, ADD_FAILURE() << "image " << r.image << " map " << n << " pixel (" << r.oh << ", " << r.ow
                                 << "): " << sum << ", want " << expected;
      }
    }
  }
  EXPECT_GT(modes[StagingMode::kChannelsLast], 0);
  EXPECT_GT(modes[StagingMode::kShiftedCopies], 0);
}

// The weights as the kernels stage them (read in order, each scattered through runTapOfWeight and
// weightOperandOffset), read back the way each path's tensor cores take them -- mma.sync's lane
// fragments, and wgmma's core matrices addressed as the PTX ISA defines a K-major, unswizzled
// shared-memory operand from the fields of the descriptor the kernel builds -- against the
// weights indexed from their definition: each k-step's B[k][n] is the weight of tap k % 4 of run
// 2 ks + k / 4 for map n, or 0 for a tap weighted 0 and a map past the layer's.
TEST(MmaStaging, StagedWeightsReadAsEachPathReadsThem) {
  using gpu::implicit_gemm::MmaPath;
  const unsigned seed = std::random_device{}();
  std::printf("mma weights: seed %u\n", seed);
  std::mt19937 rng(seed);
  std::vector<Shape> shapes;
  for (int i = 0; i < 40; ++i) shapes.push_back(randomShape(rng));
  shapes.push_back({testing::courseConv1(1), true});
  shapes.push_back({testing::courseConv2(1), true});
  for (const Shape& shape : shapes) {
    const ConvProblem& p = shape.problem;
    const StagedLayout l = gpu::implicit_gemm::stagedLayoutFor(p, 1, 0, 0);
    const int taps = p.inChannels * p.kernelHeight * p.kernelWidth;
    const int nTilesPerWarp = std::min((p.outChannels + 7) / 8, 4);
    const int nTiles = roundUp((p.outChannels + 7) / 8, nTilesPerWarp);  // as the plan rounds them
    const int kSteps = l.runs / 2;
    std::vector<float> w(static_cast<size_t>(p.weightElements()));
    for (size_t i = 0; i < w.size(); ++i) w[i] = 1.0f + static_cast<float>(i);  // distinct, never 0
    for (const MmaPath path : {MmaPath::kSync, MmaPath::kWarpgroup})
      for (const bool split : {false, true}) {
        SCOPED_TRACE(p.describe() + (path == MmaPath::kSync ? ", mma.sync" : ", wgmma") + (split ? ", 3xTF32" : ""));
        const int floats = gpu::implicit_gemm::weightOperandFloats(nTiles, kSteps, split);
        std::vector<float> staged(static_cast<size_t>(floats), 0.0f);
        std::vector<int> writes(staged.size(), 0);
        for (int e = 0; e < p.outChannels * taps; ++e) {
          const int n = e / taps, tap = e % taps;
          const int c = tap / (p.kernelHeight * p.kernelWidth);
          const int kh = tap % (p.kernelHeight * p.kernelWidth) / p.kernelWidth, kw = tap % p.kernelWidth;
          const gpu::implicit_gemm::RunTap at = runTapOfWeight(l, c, kh, kw);
          ASSERT_EQ(weightIndexOfTap(l, at.run, at.tap), tap) << "weight " << e << " scattered under another tap";
          for (int part = 0; part < (split ? 2 : 1); ++part) {
            const int offset = weightOperandOffset(path, nTiles, kSteps, split, at.run, at.tap, n, part);
            ASSERT_TRUE(offset >= 0 && offset < floats) << "weight " << e << " staged outside the weights";
            ASSERT_EQ(++writes[static_cast<size_t>(offset)], 1) << "two weights staged at float " << offset;
            staged[static_cast<size_t>(offset)] = part == 0 ? w[static_cast<size_t>(e)] : -w[static_cast<size_t>(e)];
          }
        }
        const auto want = [&](int ks, int k, int n) {
          const int tap = weightIndexOfTap(l, 2 * ks + k / 4, k % 4);
          return tap < 0 || n >= p.outChannels ? 0.0f : w[static_cast<size_t>(n * taps + tap)];
        };
        for (int ks = 0; ks < kSteps; ++ks)
          for (int n = 0; n < 8 * nTiles; ++n)
            for (int k = 0; k < 8; ++k)
              for (int part = 0; part < (split ? 2 : 1); ++part) {
                float got = 0.0f;
                if (path == MmaPath::kSync) {  // lane 4 (n % 8) + k % 4's pair, value k / 4
                  const int lane = 4 * (n % 8) + k % 4;
                  got = staged.at(
                      static_cast<size_t>(((ks * nTiles + n / 8) * 32 + lane) * (split ? 4 : 2) + 2 * part + k / 4));
                } else {  // byte address of B(k, n) from the k-step's descriptor, decoded as PTX defines it
                  const int stepBytes = nTiles * 64 * 4;  // as the kernel advances its descriptor
                  const uint64_t descriptor = gpu::implicit_gemm::coreMatrixDescriptor(
                      static_cast<uint32_t>(part * kSteps * stepBytes + ks * stepBytes));
                  const int start = static_cast<int>(descriptor & 0x3FFF) * 16;
                  const int leading = static_cast<int>(descriptor >> 16 & 0x3FFF) * 16;  // between core matrices in K
                  const int stride = static_cast<int>(descriptor >> 32 & 0x3FFF) * 16;   // between them in N
                  ASSERT_EQ(descriptor >> 62, 0u) << "not swizzled";
                  const int bytes = start + k / 4 * leading + n / 8 * stride + n % 8 * 16 + k % 4 * 4;
                  got = staged.at(static_cast<size_t>(bytes / 4));
                }
                const float expected = part == 0 ? want(ks, k, n) : -want(ks, k, n);
                ASSERT_EQ(got, expected) << "k-step " << ks << " k " << k << " map " << n << " part " << part;
              }
      }
  }
}

// The bank-conflict count that chooses the padding, on layouts whose answer is known: eight
// pixels 32 channels apart (128 bytes) all fall in one 16-byte bank group, seven extra wavefronts
// a matrix; 8 channels apart (32 bytes) two share each of four groups, one extra; 4 channels
// apart (16 bytes) they fill the eight groups, none.
TEST(MmaStaging, BankConflictCountMatchesHandCountedLayouts) {
  for (const auto& [channels, extra] : {std::pair{32, 7}, std::pair{4, 0}, std::pair{8, 1}}) {
    SCOPED_TRACE(std::to_string(channels) + " channels");
    const ConvProblem p{1, channels, 1, 16, 1, 1, 1};  // one row of 16 pixels, a 1x1 kernel
    const StagedLayout l = gpu::implicit_gemm::stagedLayoutFor(p, 1, 0, 0);
    ASSERT_EQ(l.mode, StagingMode::kChannelsLast);
    // 16 rows: two matrices of 8 pixels each.
    EXPECT_EQ(ldmatrixBankConflicts(l, 16, 16, false, 16, 16), 2 * extra);
  }
}

}  // namespace
}  // namespace convscope
