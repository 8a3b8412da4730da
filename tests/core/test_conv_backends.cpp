// Every CPU conv backend in the registry against a direct double-precision formula, on fresh
// random shapes and values each run: odd sizes, strides, asymmetric padding, kernels 1 to 7.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "conv/conv_registry.h"
#include "gpu_device.h"
#include "util/error.h"

namespace convscope {
namespace {

// The convolution written straight from its definition, accumulated in double.
std::vector<double> directConvolution(const ConvProblem& p, const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<double> y(static_cast<size_t>(p.outputElements()));
  size_t i = 0;
  for (int n = 0; n < p.batch; ++n)
    for (int m = 0; m < p.outChannels; ++m)
      for (int oh = 0; oh < p.outHeight(); ++oh)
        for (int ow = 0; ow < p.outWidth(); ++ow, ++i) {
          double sum = 0.0;
          for (int c = 0; c < p.inChannels; ++c)
            for (int kh = 0; kh < p.kernelHeight; ++kh)
              for (int kw = 0; kw < p.kernelWidth; ++kw) {
                const int ih = oh * p.strideHeight - p.padTop + kh;
                const int iw = ow * p.strideWidth - p.padLeft + kw;
                if (ih < 0 || iw < 0 || ih >= p.inHeight || iw >= p.inWidth) continue;
                sum += static_cast<double>(x[((size_t(n) * p.inChannels + c) * p.inHeight + ih) * p.inWidth + iw]) *
                       w[((size_t(m) * p.inChannels + c) * p.kernelHeight + kh) * p.kernelWidth + kw];
              }
          y[i] = sum;
        }
  return y;
}

ConvProblem randomProblem(std::mt19937& rng, bool withStrideAndPadding) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int kernels[] = {1, 3, 5, 7};
  ConvProblem p;
  p.batch = pick(1, 9);
  p.inChannels = pick(1, 13);
  p.outChannels = pick(1, 17);
  p.kernelHeight = kernels[pick(0, 3)];
  p.kernelWidth = withStrideAndPadding && pick(0, 1) ? kernels[pick(0, 3)] : p.kernelHeight;
  if (withStrideAndPadding) {
    p.strideHeight = pick(1, 3);
    p.strideWidth = pick(1, 3);
    p.padTop = pick(0, 3);
    p.padLeft = pick(0, 3);
    p.padBottom = pick(0, 3);
    p.padRight = pick(0, 3);
  }
  // Sizes that are multiples of no tile: primes and odd numbers around the course's 28/48.
  const int sizes[] = {7, 11, 13, 17, 23, 29, 31, 37, 41, 47};
  p.inHeight = std::max(sizes[pick(0, 9)], p.kernelHeight);
  p.inWidth = std::max(sizes[pick(0, 9)], p.kernelWidth);
  return p;
}

class CpuConvBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuConvBackend, MatchesDoublePrecisionFormulaOnRandomProblems) {
  std::random_device seeds;
  const unsigned seed = seeds();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::unique_ptr<ConvBackend> backend = createConvBackend(GetParam());
  for (int trial = 0; trial < 24; ++trial) {
    const ConvProblem p = randomProblem(rng, trial % 2 == 1);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + p.describe());
    ASSERT_TRUE(backend->unsupportedReason(p).empty());
    std::vector<float> x(static_cast<size_t>(p.inputElements()));
    std::vector<float> w(static_cast<size_t>(p.weightElements()));
    for (float& v : x) v = value(rng);
    for (float& v : w) v = value(rng);
    // Poisoned output: an element the backend forgets to write stays NaN and fails below.
    std::vector<float> y(static_cast<size_t>(p.outputElements()), std::numeric_limits<float>::quiet_NaN());
    backend->forward(p, x.data(), w.data(), y.data());
    const std::vector<double> expected = directConvolution(p, x, w);
    double errorSquared = 0.0, normSquared = 0.0;
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_TRUE(std::isfinite(y[i])) << "output element " << i << " was not written";
      errorSquared += (y[i] - expected[i]) * (y[i] - expected[i]);
      normSquared += expected[i] * expected[i];
    }
    EXPECT_LE(std::sqrt(errorSquared / normSquared), 1e-5);
  }
}

std::vector<std::string> cpuVariants() {
  std::vector<std::string> ids;
  for (const ConvVariant& v : convVariants())
    if (v.requirement == "CPU") ids.push_back(v.id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Registry, CpuConvBackend, ::testing::ValuesIn(cpuVariants()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(ConvRegistry, ListsBothCpuBackendsWithDescriptions) {
  EXPECT_GE(cpuVariants().size(), 2u);
  for (const ConvVariant& v : convVariants()) {
    EXPECT_FALSE(v.displayName.empty()) << v.id;
    EXPECT_FALSE(v.description.empty()) << v.id;
    EXPECT_FALSE(v.courseStep.empty()) << v.id;
  }
  EXPECT_NO_THROW(findConvVariant("cpu-reference"));
}

TEST(ConvRegistry, UnknownVariantIsRefusedWithTheKnownIds) {
  try {
    createConvBackend("gpu-warp-drive");
    FAIL() << "an unknown variant was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown kernel variant 'gpu-warp-drive'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu-reference"), std::string::npos) << e.what();
  }
}

TEST(GpuDevice, ReportsAReasonWhenThereIsNoGpu) {
  const gpu::GpuDevice& device = gpu::gpuDevice();
  if (device.usable)
    EXPECT_FALSE(device.name.empty());
  else
    EXPECT_FALSE(device.unusableReason.empty());
}

}  // namespace
}  // namespace convscope
