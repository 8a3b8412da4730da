// Every conv variant in the registry, CPU and GPU, against a direct double-precision formula on
// fresh random shapes and values each run: batches to 64, channels to 16, maps to 64, sizes that
// are multiples of no tile, strides, asymmetric padding, kernels 1 to 7. GPU variants skip,
// saying why, where no GPU can be used.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/util/error.h"
#include "app/core/util/host_epilogue.h"
#include "tests/core/course_layers.h"
#include "tests/core/direct_convolution.h"
#include "tests/core/epilogue_backend.h"
#include "tests/core/tensor_core_path_check.h"
#include "tests/core/test_support.h"
#include "tests/core/tf32.h"

namespace convscope {
namespace {

using testing::directConvolution;

ConvProblem randomProblem(std::mt19937& rng, bool withStrideAndPadding) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int kernels[] = {1, 3, 5, 7};
  // Sizes that are multiples of no tile: primes and odd numbers around the course's 28 and 48.
  const int sizes[] = {7, 11, 13, 17, 23, 29, 31, 37, 41, 47, 53};
  for (;;) {
    ConvProblem p;
    p.batch = pick(1, 64);
    p.inChannels = pick(1, 16);
    p.outChannels = pick(1, 64);
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
    p.inHeight = std::max(sizes[pick(0, 10)], p.kernelHeight);
    p.inWidth = std::max(sizes[pick(0, 10)], p.kernelWidth);
    // Keep each trial to at most ~20 million multiply-adds so the double reference stays quick.
    if (p.flops() / 2 <= 20'000'000) return p;
  }
}

struct Trial {
  ConvProblem problem;
  std::vector<float> input, weights;
  std::vector<double> expected;
};

// Drawn once per test run from a fresh seed and shared by every variant: random problems (half
// of them with strides and padding) plus the course's two layer shapes.
const std::vector<Trial>& trials() {
  static const std::vector<Trial> all = [] {
    const unsigned seed = std::random_device{}();
    std::printf("conv trials: seed %u\n", seed);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    std::vector<ConvProblem> problems;
    for (int i = 0; i < 24; ++i) problems.push_back(randomProblem(rng, i % 2 == 1));
    // Grouped, depthwise and dilated layers (students' models, real CNNs): the CPU variants and
    // cuDNN's compute them, the course's GPU rows decline them (the plan gives them to cuDNN).
    for (int i = 0; i < 8; ++i) {
      ConvProblem p = randomProblem(rng, true);
      const int group = std::uniform_int_distribution<int>(1, 4)(rng);
      if (i % 4 == 0) {
        p.group = p.inChannels;  // depthwise, with a channel multiplier of 1 or 2
        p.outChannels = p.inChannels * (1 + i % 8 / 4);
      } else if (i % 4 != 3) {
        p.group = group;
        p.inChannels = group * std::uniform_int_distribution<int>(1, 5)(rng);
        p.outChannels = group * std::uniform_int_distribution<int>(1, 6)(rng);
      }
      if (i % 2 == 1 || i % 4 == 3) {
        p.dilationHeight = std::uniform_int_distribution<int>(1, 3)(rng);
        p.dilationWidth = std::uniform_int_distribution<int>(2, 3)(rng);
        p.inHeight = std::max(p.inHeight, p.kernelExtentHeight());
        p.inWidth = std::max(p.inWidth, p.kernelExtentWidth());
      }
      problems.push_back(p);
    }
    problems.push_back(testing::courseConv1(7));
    problems.push_back(testing::courseConv2(64));
    std::vector<Trial> list;
    for (const ConvProblem& p : problems) {
      Trial t{p,
              std::vector<float>(static_cast<size_t>(p.inputElements())),
              std::vector<float>(static_cast<size_t>(p.weightElements())),
              {}};
      for (float& v : t.input) v = value(rng);
      for (float& v : t.weights) v = value(rng);
      t.expected = directConvolution(p, t.input.data(), t.weights.data());
      list.push_back(std::move(t));
    }
    return list;
  }();
  return all;
}

// Every variant of the registry, CPU and GPU: one test, the same trials.
class ConvVariantCorrectness : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvVariantCorrectness, MatchesDoublePrecisionFormulaOnRandomProblems) {
  const ConvVariant& variant = findConvVariant(GetParam());
  if (const std::string reason = variant.unavailableReason(); !reason.empty())
    GPU_TEST_SKIP() << variant.id << " cannot run here: " << reason;
  std::unique_ptr<ConvBackend> backend = createConvBackend(variant.id);
  const gpu::TensorCoreLaunches launchesBefore = gpu::tensorCoreLaunches();
  int ran = 0;
  bool strideOne = false;
  for (const Trial& t : trials()) {
    const ConvProblem& p = t.problem;
    SCOPED_TRACE(p.describe());
    if (const std::string reason = variant.unsupportedReasonFor(p); !reason.empty()) {
      // The plan gives such a layer to the fallback, whose own test run covers it.
      std::printf("%s declines %s: %s (fallback: %s)\n", variant.id.c_str(), p.describe().c_str(), reason.c_str(),
                  fallbackConvVariant(variant, p).id.c_str());
      continue;
    }
    ++ran;
    strideOne = strideOne || (p.strideHeight == 1 && p.strideWidth == 1);
    // Poisoned output: an element the backend forgets to write stays NaN and fails below.
    std::vector<float> y(static_cast<size_t>(p.outputElements()), std::numeric_limits<float>::quiet_NaN());
    backend->forward(p, t.input.data(), t.weights.data(), y.data());
    double errorSquared = 0.0, normSquared = 0.0;
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_TRUE(std::isfinite(y[i])) << "output element " << i << " was not written";
      errorSquared += (y[i] - t.expected[i]) * (y[i] - t.expected[i]);
      normSquared += t.expected[i] * t.expected[i];
    }
    // FP32 variants to 1e-5; TF32 ones to what rounding both factors to 11 bits allows.
    EXPECT_LE(std::sqrt(errorSquared / normSquared), variant.relativeTolerance) << variant.arithmetic;
    if (variant.arithmetic == "TF32") {
      // On data already in TF32 the products are exact: FP32 tolerance (see tests/core/tf32.h).
      const std::vector<float> x = testing::roundedToTf32(t.input), w = testing::roundedToTf32(t.weights);
      const std::vector<double> want = directConvolution(p, x.data(), w.data());
      std::fill(y.begin(), y.end(), std::numeric_limits<float>::quiet_NaN());
      backend->forward(p, x.data(), w.data(), y.data());
      double error = 0.0, norm = 0.0;
      for (size_t i = 0; i < y.size(); ++i) {
        error += (y[i] - want[i]) * (y[i] - want[i]);
        norm += want[i] * want[i];
      }
      EXPECT_LE(std::sqrt(error / norm), 1e-5) << "TF32 products of TF32 data are exact";
    }
  }
  // A variant may decline shapes (the plan then falls back, visibly), but never the course's two;
  // a whole-network variant runs no layer alone (tests/gpu/test_whole_network.cpp checks it).
  for (const Trial* course : {&trials()[trials().size() - 2], &trials().back()}) {
    if (!variant.runNetwork) {
      EXPECT_EQ(variant.unsupportedReasonFor(course->problem), "") << variant.id << " declines a course layer";
    }
  }
  std::printf("%s computed %d of %zu shapes itself\n", variant.id.c_str(), ran, trials().size());
  // The tensor-core variants: the path CONVSCOPE_TENSOR_MMA asks for is the one that ran.
  if (ran > 0) testing::expectTheAskedTensorCorePathRan(variant.id, launchesBefore, strideOne);
}

std::vector<std::string> allVariants() {
  std::vector<std::string> ids;
  for (const ConvVariant& v : convVariants()) ids.push_back(v.id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Registry, ConvVariantCorrectness, ::testing::ValuesIn(allVariants()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
});

// Every CPU row that fuses an epilogue: forwardFused() on fresh random chains (odd sizes, strides,
// asymmetric conv padding; a bias, the activations and poolings the row lists; max pooling and
// average pooling counting the padding or not, with pads up to the window's size so that some
// windows lie wholly in the padding; inputs, weights and biases with negatives and outliers)
// against the epilogue written from its definition in double precision (epilogue_backend.h).
class FusedEpilogueCorrectness : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedEpilogueCorrectness, MatchesDoublePrecisionEpilogueOnRandomChains) {
  const ConvVariant& variant = findConvVariant(GetParam());
  std::unique_ptr<ConvBackend> backend = createConvBackend(variant.id);
  testing::EpilogueBackend yardstick;
  const unsigned seed = std::random_device{}();
  std::printf("%s fused epilogues: seed %u\n", variant.id.c_str(), seed);
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  // Some values far outside [-1, 1]: saturated activations, and maxima that win every window.
  const auto draw = [&] { return pick(0, 49) == 0 ? 40.0f * value(rng) : value(rng); };
  std::vector<Activation> activations;
  for (Activation a : kFusableActivations)
    if (variant.canFuse(onnxTypeOf(a))) activations.push_back(a);
  std::vector<int> pools;  // 0 max, 1 average excluding the padding, 2 average counting it
  if (variant.canFuse("MaxPool")) pools.push_back(0);
  if (variant.canFuse("AveragePool")) pools.insert(pools.end(), {1, 2});
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    ConvProblem p = randomProblem(rng, trial % 2 == 1);
    p.batch = pick(1, 9);
    ConvEpilogue e;
    const bool withBias = pick(0, 3) != 0;
    e.hasActivation = !activations.empty() && pick(0, 3) != 0;
    if (e.hasActivation) e.activation = activations[static_cast<size_t>(pick(0, int(activations.size()) - 1))];
    e.hasPool = !pools.empty() && pick(0, 4) != 0;
    std::ostringstream what;
    what << p.describe() << (withBias ? ", bias" : "") << (e.hasActivation ? ", activation " : "")
         << (e.hasActivation ? int(e.activation) : -1);
    if (e.hasPool) {
      const int kind = pools[static_cast<size_t>(pick(0, int(pools.size()) - 1))];
      e.maxPool = kind == 0;
      PoolGeometry& g = e.pool;
      g.countIncludePad = kind == 2;
      g.planes = int64_t{p.batch} * p.outChannels;
      g.inHeight = p.outHeight();
      g.inWidth = p.outWidth();
      g.kernelHeight = std::min(pick(1, 3), g.inHeight);
      g.kernelWidth = std::min(pick(1, 3), g.inWidth);
      g.strideHeight = pick(1, 3);
      g.strideWidth = pick(1, 3);
      g.padTop = pick(0, g.kernelHeight);
      g.padLeft = pick(0, g.kernelWidth);
      g.padBottom = pick(0, g.kernelHeight);
      g.padRight = pick(0, g.kernelWidth);
      // Floor or ceil mode, with the ONNX rule that drops a last window starting in the end padding.
      const bool ceil = pick(0, 1) == 1;
      const auto extent = [&](int in, int kernel, int stride, int padBegin, int padEnd) {
        const int span = in + padBegin + padEnd - kernel;
        int out = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
        if (ceil && (out - 1) * stride >= in + padBegin) --out;
        return out;
      };
      g.outHeight = extent(g.inHeight, g.kernelHeight, g.strideHeight, g.padTop, g.padBottom);
      g.outWidth = extent(g.inWidth, g.kernelWidth, g.strideWidth, g.padLeft, g.padRight);
      what << ", "
           << (e.maxPool           ? "max"
               : g.countIncludePad ? "average counting pads"
                                   : "average")
           << " pool " << g.kernelHeight << "x" << g.kernelWidth << "/" << g.strideHeight << "x" << g.strideWidth
           << " pads " << g.padTop << "," << g.padLeft << "," << g.padBottom << "," << g.padRight << " -> "
           << g.outHeight << "x" << g.outWidth;
    }
    SCOPED_TRACE(what.str());
    if (!variant.unsupportedReasonFor(p).empty()) continue;
    std::vector<float> x(static_cast<size_t>(p.inputElements())), w(static_cast<size_t>(p.weightElements()));
    std::vector<float> bias(static_cast<size_t>(p.outChannels));
    for (float& v : x) v = draw();
    for (float& v : w) v = draw() * 0.3f;
    for (float& v : bias) v = draw();
    if (withBias) e.bias = bias.data();
    const int64_t outputs = e.hasPool ? e.pool.planes * e.pool.outHeight * e.pool.outWidth : p.outputElements();
    std::vector<float> want(static_cast<size_t>(outputs));
    yardstick.forwardFused(p, x.data(), w.data(), want.data(), e);
    // Poisoned output: an element the backend forgets to write stays NaN and fails below.
    std::vector<float> got(want.size(), std::numeric_limits<float>::quiet_NaN());
    backend->forwardFused(p, x.data(), w.data(), got.data(), e);
    ++checked;
    // Each output's error bound comes from the magnitudes it sums: the same chain on |x|, |w| and
    // |bias|, without the activation (each is 1-Lipschitz or flatter), max-pooled (no average
    // exceeds the window's largest). Float sums of up to 16x7x7 products are off by about 1e-6 of
    // that; a wrong bias, activation, window or divisor is off by far more.
    std::vector<float> absX(x.size()), absW(w.size()), absBias(bias.size());
    std::transform(x.begin(), x.end(), absX.begin(), [](float v) { return std::fabs(v); });
    std::transform(w.begin(), w.end(), absW.begin(), [](float v) { return std::fabs(v); });
    std::transform(bias.begin(), bias.end(), absBias.begin(), [](float v) { return std::fabs(v); });
    ConvEpilogue magnitudes = e;
    magnitudes.bias = withBias ? absBias.data() : nullptr;
    magnitudes.hasActivation = false;
    magnitudes.maxPool = true;
    std::vector<float> bound(want.size());
    yardstick.forwardFused(p, absX.data(), absW.data(), bound.data(), magnitudes);
    int wrong = 0;
    for (size_t i = 0; i < got.size() && wrong < 5; ++i) {
      // A window wholly in the padding: max pooling gives -inf, average pooling exactly 0.
      const double tolerance = 1e-5 * std::max(0.0f, bound[i]) + (std::isinf(bound[i]) ? 0.0 : 1e-6);
      const bool equal = std::isinf(want[i]) ? got[i] == want[i] : std::fabs(got[i] - want[i]) <= tolerance;
      if (!equal) ++wrong, ADD_FAILURE() << "element " << i << ": " << got[i] << ", want " << want[i];
    }
  }
  std::printf("%s: %d fused chains checked\n", variant.id.c_str(), checked);
  EXPECT_GT(checked, 20);
}

// A CPU backend keeps state between calls of one shape (primitives, reordered weights, the
// buffers' memory objects). Each call must still read the buffers it is given, with the values
// they hold now: new buffers, the same buffers refilled, and a bias, weights or output moved.
// Shapes: lenet5's two layers for one image (run on the calling thread alone), one image of a
// layer large enough for oneDNN to spread over the cores, and a batch cut into chunks.
TEST(HostBackends, RepeatedCallsOfOneShapeReadTheBuffersOfEachCall) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const auto pool2x2 = [](const ConvProblem& p) {
    PoolGeometry g;
    g.planes = int64_t{p.batch} * p.outChannels;
    g.inHeight = p.outHeight();
    g.inWidth = p.outWidth();
    g.kernelHeight = g.kernelWidth = g.strideHeight = g.strideWidth = 2;
    g.outHeight = g.inHeight / 2;
    g.outWidth = g.inWidth / 2;
    return g;
  };
  ConvProblem lenet1{1, 1, 28, 28, 6, 5, 5};
  lenet1.padTop = lenet1.padLeft = lenet1.padBottom = lenet1.padRight = 2;
  const ConvProblem lenet2{1, 6, 14, 14, 16, 5, 5};
  const ConvProblem wide{1, 8, 41, 41, 24, 5, 5};    // 36 MFLOP: oneDNN's threads
  const ConvProblem batch{13, 3, 23, 23, 10, 3, 3};  // chunks on several threads
  testing::EpilogueBackend yardstick;
  for (const ConvVariant& variant : convVariants()) {
    if (variant.runsOnGpu() || !variant.canFuse("AveragePool") || !variant.canFuse("Relu")) continue;
    std::unique_ptr<ConvBackend> backend = createConvBackend(variant.id);
    for (const ConvProblem& p : {lenet1, lenet2, wide, batch}) {
      for (const bool fused : {false, true}) {
        SCOPED_TRACE(variant.id + " " + p.describe() + (fused ? ", bias, relu, average pool" : ""));
        struct Buffers {
          std::vector<float> x, w, bias, y;
        };
        ConvEpilogue e;
        if (fused) {
          e.hasActivation = true;
          e.activation = Activation::Relu;
          e.hasPool = true;
          e.pool = pool2x2(p);
        }
        const size_t outputs =
            static_cast<size_t>(fused ? e.pool.planes * e.pool.outHeight * e.pool.outWidth : p.outputElements());
        const auto fill = [&](Buffers& b) {
          b.x.resize(static_cast<size_t>(p.inputElements()));
          b.w.resize(static_cast<size_t>(p.weightElements()));
          b.bias.resize(static_cast<size_t>(p.outChannels));
          for (std::vector<float>* v : {&b.x, &b.w, &b.bias})
            for (float& f : *v) f = value(rng);
          b.y.assign(outputs, std::numeric_limits<float>::quiet_NaN());
        };
        const auto check = [&](Buffers& b, const char* call) {
          SCOPED_TRACE(call);
          ConvEpilogue withBias = e;
          if (fused) withBias.bias = b.bias.data();
          std::vector<float> want(outputs);
          yardstick.forwardFused(p, b.x.data(), b.w.data(), want.data(), withBias);
          if (fused)
            backend->forwardFused(p, b.x.data(), b.w.data(), b.y.data(), withBias);
          else
            backend->forward(p, b.x.data(), b.w.data(), b.y.data());
          int wrong = 0;
          for (size_t i = 0; i < outputs && wrong < 3; ++i)
            if (!(std::fabs(b.y[i] - want[i]) <= 1e-4f))
              ++wrong, ADD_FAILURE() << i << ": " << b.y[i] << ", want " << want[i];
        };
        Buffers first, second;
        fill(first);
        check(first, "first call");
        fill(second);
        check(second, "other buffers");
        fill(first);  // new values in the first call's buffers (same addresses)
        check(first, "the first buffers refilled");
        std::vector<float> movedBias = second.bias;  // the bias alone moves
        second.bias.swap(movedBias);
        fill(second);
        check(second, "a moved bias, new values");
      }
    }
  }
}

// A chain as EfficientNet's blocks run on a CPU variant through forwardHeld: a conv, a depthwise
// conv (stride 2), two pointwise convs whose outputs are summed (a residual connection), and a
// pointwise conv to 12 channels (not whole blocks of 8: written as NCHW). Each stage reads the last
// one's output as the backend returned it (held, or NCHW) and is checked against the epilogue
// written from its definition, reading a held value through its NCHW copy. Two layers of one
// shape with different weights, both marked constant (a model's initializers), keep their own
// reordered copies: a second pass over the chain must still give each layer its own weights.
TEST(HostBackends, HeldValuesCarryAChainWithAResidualSumThroughEveryLayer) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  testing::EpilogueBackend yardstick;
  struct Layer {
    ConvProblem problem;
    bool activation;
    std::vector<float> weights, bias;
  };
  const auto layer = [&](ConvProblem p, bool activation) {
    Layer l{p, activation, std::vector<float>(static_cast<size_t>(p.weightElements())),
            std::vector<float>(static_cast<size_t>(p.outChannels))};
    for (float& v : l.weights) v = value(rng) * (value(rng) > 0.95f ? 30.0f : 0.5f);  // with outliers
    for (float& v : l.bias) v = value(rng);
    return l;
  };
  for (const int batch : {1, 13}) {
    ConvProblem first{batch, 3, 17, 19, 16, 3, 3};
    first.padTop = first.padLeft = first.padBottom = first.padRight = 1;
    ConvProblem depthwise{batch, 16, 17, 19, 16, 3, 3, 2, 2, 1, 1, 1, 1};  // to 9 x 10
    depthwise.group = 16;
    ASSERT_EQ(depthwise.outHeight(), 9);
    ASSERT_EQ(depthwise.outWidth(), 10);
    const ConvProblem pointwise{batch, 16, 9, 10, 24, 1, 1};
    const ConvProblem residual{batch, 24, 9, 10, 24, 1, 1};
    const ConvProblem last{batch, 24, 9, 10, 12, 1, 1};
    // The two `residual` layers: one shape, different weights.
    std::vector<Layer> layers{layer(first, true),     layer(depthwise, true), layer(pointwise, false),
                              layer(residual, false), layer(residual, false), layer(last, true)};
    std::vector<float> image(static_cast<size_t>(first.inputElements()));
    for (float& v : image) v = value(rng);
    for (const ConvVariant& variant : convVariants()) {
      if (variant.runsOnGpu() || !variant.canFuse("Clip")) continue;
      std::unique_ptr<ConvBackend> backend = createConvBackend(variant.id);
      for (const int pass : {1, 2}) {
        SCOPED_TRACE(variant.id + ", batch " + std::to_string(batch) + ", pass " + std::to_string(pass));
        struct Value {
          std::unique_ptr<HeldValue> held;
          std::vector<float> plain;
          std::vector<float> values() const {  // NCHW, as any other reader sees it
            if (!held) return plain;
            std::vector<float> copy(plain.size(), std::numeric_limits<float>::quiet_NaN());
            held->copyTo(copy.data());
            return copy;
          }
          ConvInput input() const { return held ? ConvInput{nullptr, held.get()} : ConvInput{plain.data(), nullptr}; }
        };
        const auto run = [&](const Layer& l, const Value& in, const std::vector<float>& inValues, const char* name) {
          SCOPED_TRACE(name);
          ConvEpilogue e;
          e.bias = l.bias.data();
          e.hasActivation = l.activation;
          e.activation = Activation::Clip;
          e.constantWeights = true;
          Value out;
          out.plain.assign(static_cast<size_t>(l.problem.outputElements()), std::numeric_limits<float>::quiet_NaN());
          out.held = backend->forwardHeld(l.problem, in.input(), l.weights.data(), e, [&] { return out.plain.data(); });
          if (out.held)
            EXPECT_EQ(out.held->shape(),
                      (Shape{batch, l.problem.outChannels, l.problem.outHeight(), l.problem.outWidth()}));
          std::vector<float> want(out.plain.size());
          yardstick.forwardFused(l.problem, inValues.data(), l.weights.data(), want.data(), e);
          const std::vector<float> got = out.values();
          int wrong = 0;
          for (size_t i = 0; i < want.size() && wrong < 3; ++i)
            if (!(std::fabs(got[i] - want[i]) <= 1e-4f * (1.0f + std::fabs(want[i]))))
              ++wrong, ADD_FAILURE() << i << ": " << got[i] << ", want " << want[i];
          return out;
        };
        Value input;
        input.plain = image;
        const Value a = run(layers[0], input, image, "conv");
        const Value b = run(layers[1], a, a.values(), "depthwise");
        const Value c = run(layers[2], b, b.values(), "pointwise");
        const Value d = run(layers[3], c, c.values(), "residual branch, no activation");
        const Value d2 = run(layers[4], c, c.values(), "the same shape, other weights");
        // The residual sum: kept held where both are held by one backend.
        Value sum;
        const std::vector<float> dValues = d.values(), d2Values = d2.values();
        std::vector<float> want(dValues.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = dValues[i] + d2Values[i];
        if (d.held && d2.held) {
          sum.held = d.held->plus(*d2.held);
          ASSERT_TRUE(sum.held) << "two values held alike are summed held";
          sum.plain.resize(want.size());
          EXPECT_EQ(sum.values(), want);
        } else {
          sum.plain = want;
        }
        if (variant.id == "cpu-onednn") EXPECT_TRUE(a.held && b.held && c.held && d.held && sum.held);
        const Value e = run(layers[5], sum, want, "to 12 channels");
        EXPECT_FALSE(e.held) << "12 channels do not fill blocks of 8";
      }
    }
  }
}

// oneDNN's conv output is channel-blocked; the pooling reads it as it is. It must give exactly
// what the plane-by-plane pooling of the MaxPool and AveragePool operators gives, bit for bit,
// NaN and infinities included, for every window geometry.
TEST(HostEpilogue, BlockedPoolingEqualsPlanePoolingBitForBit) {
  const unsigned seed = std::random_device{}();
  std::printf("blocked pooling: seed %u\n", seed);
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  for (int trial = 0; trial < 200; ++trial) {
    const int block = pick(0, 1) ? 16 : 8, channels = pick(1, 40), images = pick(1, 3);
    PoolGeometry g;
    g.inHeight = pick(1, 13);
    g.inWidth = pick(1, 13);
    g.planes = int64_t{images} * channels;
    g.kernelHeight = pick(1, 3), g.kernelWidth = pick(1, 3);
    g.strideHeight = pick(1, 3), g.strideWidth = pick(1, 3);
    g.padTop = pick(0, g.kernelHeight), g.padLeft = pick(0, g.kernelWidth);
    g.padBottom = pick(0, g.kernelHeight), g.padRight = pick(0, g.kernelWidth);
    if (g.inHeight + g.padTop + g.padBottom < g.kernelHeight || g.inWidth + g.padLeft + g.padRight < g.kernelWidth)
      continue;
    g.outHeight = (g.inHeight + g.padTop + g.padBottom - g.kernelHeight) / g.strideHeight + 1;
    g.outWidth = (g.inWidth + g.padLeft + g.padRight - g.kernelWidth) / g.strideWidth + 1;
    g.countIncludePad = pick(0, 1) == 1;
    const bool maxPool = pick(0, 1) == 1;
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": block " << block << ", " << channels << " channels, "
                                      << (maxPool ? "max" : "average") << ", in " << g.inHeight << "x" << g.inWidth
                                      << ", window " << g.kernelHeight << "x" << g.kernelWidth);
    const int blocks = (channels + block - 1) / block;
    const int64_t plane = int64_t{g.inHeight} * g.inWidth;
    std::vector<float> planes(static_cast<size_t>(g.planes * plane));
    std::vector<float> blocked(static_cast<size_t>(int64_t{images} * blocks * block * plane), 777.0f);
    for (float& v : planes) {
      const int kind = pick(0, 39);
      v = kind == 0   ? std::numeric_limits<float>::quiet_NaN()
          : kind == 1 ? -INFINITY
          : kind == 2 ? INFINITY
                      : value(rng);
    }
    for (int n = 0; n < images; ++n)
      for (int c = 0; c < channels; ++c)
        for (int64_t i = 0; i < plane; ++i)
          blocked[static_cast<size_t>(((int64_t{n} * blocks + c / block) * plane + i) * block + c % block)] =
              planes[static_cast<size_t>((int64_t{n} * channels + c) * plane + i)];
    const size_t outputs = static_cast<size_t>(g.planes * g.outHeight * g.outWidth);
    std::vector<float> want(outputs), got(outputs, std::numeric_limits<float>::quiet_NaN());
    poolPlanes(g, maxPool, planes.data(), want.data(), 0, g.planes);
    poolBlockedPlanes(g, maxPool, block, channels, blocked.data(), got.data(), images);
    ASSERT_EQ(std::memcmp(got.data(), want.data(), outputs * sizeof(float)), 0);
  }
}

std::vector<std::string> cpuVariantsThatFuse() {
  std::vector<std::string> ids;
  for (const ConvVariant& v : convVariants())
    if (!v.runsOnGpu() && !v.fusableOps.empty()) ids.push_back(v.id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Registry, FusedEpilogueCorrectness, ::testing::ValuesIn(cpuVariantsThatFuse()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

// Every GPU kernel file gpu/kernels/NN_name.cu registers exactly one row, and every row names its
// file: the table and the files cannot disagree. Counted from the folder, not from a number here.
TEST(VariantTable, EveryKernelFileIsOneRowInCourseOrder) {
  const std::filesystem::path root = CONVSCOPE_SOURCE_DIR;
  std::set<std::string> kernelFiles;
  for (const auto& entry : std::filesystem::directory_iterator(root / "gpu" / "kernels")) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 3 && std::isdigit(static_cast<unsigned char>(name[0])) &&
        std::isdigit(static_cast<unsigned char>(name[1])) && name[2] == '_' && entry.path().extension() == ".cu")
      kernelFiles.insert("gpu/kernels/" + name);
  }
  ASSERT_FALSE(kernelFiles.empty());
  std::set<std::string> gpuRowFiles, ids;
  int previousOrder = -1;
  for (const ConvVariant& v : convVariants()) {
    SCOPED_TRACE(v.id);
    EXPECT_TRUE(ids.insert(v.id).second) << "duplicate id";
    EXPECT_FALSE(v.displayName.empty());
    EXPECT_FALSE(v.description.empty());
    EXPECT_FALSE(v.courseStep.empty());
    EXPECT_GE(v.courseOrder, previousOrder) << "the table is in course order";
    previousOrder = v.courseOrder;
    EXPECT_TRUE(std::filesystem::is_regular_file(root / v.sourceFile)) << v.sourceFile;
    if (!v.runsOnGpu()) {
      EXPECT_TRUE(v.createHostBackend != nullptr);
      continue;
    }
    EXPECT_TRUE(gpuRowFiles.insert(v.sourceFile).second) << "two rows in " << v.sourceFile;
    EXPECT_EQ(std::stoi(std::filesystem::path(v.sourceFile).filename().string().substr(0, 2)), v.courseOrder)
        << "the file's number is the row's place in the course";
    EXPECT_TRUE(v.runOnDevice != nullptr);
    // Without CUDA the rows are listed (unavailable), with no kernels behind them.
    EXPECT_EQ(v.launchGeometry != nullptr, CONVSCOPE_TEST_BUILT_WITH_CUDA == 1);
    if (!CONVSCOPE_TEST_BUILT_WITH_CUDA) {
      EXPECT_NE(v.unavailableReason(), "");
    }
  }
  EXPECT_EQ(gpuRowFiles, kernelFiles) << "every kernel file has its row, in every build";
  EXPECT_NO_THROW(findConvVariant("cpu-reference"));
}

// No course kernel indexes weights by group or spaces its taps: those GPU rows decline grouped and
// dilated layers, saying which, and the fallback for them is cuDNN's row, which computes them on
// the GPU (a depthwise conv stays on the device), or where it cannot (a build without cuDNN) a CPU
// variant (the plan then runs that layer on the host). Every CPU row computes them, and so does
// cuDNN's (checked against the formula by ConvVariantCorrectness).
TEST(VariantTable, CourseGpuRowsDeclineGroupedAndDilatedLayersWhichCudnnComputes) {
  ConvProblem grouped{2, 8, 13, 13, 12, 3, 3};
  grouped.group = 4;
  ConvProblem depthwise{2, 8, 13, 13, 8, 3, 3};
  depthwise.group = 8;
  ConvProblem dilated{2, 3, 17, 17, 5, 3, 3};
  dilated.dilationHeight = dilated.dilationWidth = 2;
  const ConvVariant& cudnn = findConvVariant("cudnn");
  int gpuRows = 0;
  for (const ConvVariant& v : convVariants()) {
    SCOPED_TRACE(v.id);
    for (const ConvProblem* p : {&grouped, &depthwise, &dilated}) {
      const std::string reason = v.unsupportedReasonFor(*p);
      if (!v.runsOnGpu()) {
        EXPECT_EQ(reason, "") << p->describe();
        continue;
      }
      if (v.id == "cudnn") {
        EXPECT_EQ(reason.find("group"), std::string::npos) << reason;
        EXPECT_EQ(reason.find("dilat"), std::string::npos) << reason;
        continue;
      }
      EXPECT_NE(reason.find(p->isGrouped() ? "group" : "dilat"), std::string::npos) << reason;
      const ConvVariant& fallback = fallbackConvVariant(v, *p);
      EXPECT_EQ(fallback.unsupportedReasonFor(*p), "");
      if (cudnn.unsupportedReasonFor(*p).empty() && cudnn.arithmetic == v.arithmetic) {
        EXPECT_EQ(fallback.id, "cudnn");
      } else {
        EXPECT_TRUE(fallback.id == "cudnn" || !fallback.runsOnGpu()) << fallback.id;
      }
    }
    gpuRows += v.runsOnGpu() ? 1 : 0;
  }
  EXPECT_GT(gpuRows, 0);
  // The geometry follows the dilated window: 17 + 0 pads - (2 * 2 + 1) + 1 = 13; the grouped
  // weights hold C / G channels per filter.
  EXPECT_EQ(dilated.outHeight(), 13);
  EXPECT_EQ(grouped.weightElements(), 12 * 2 * 3 * 3);
  EXPECT_EQ(depthwise.flops(), 2 * depthwise.outputElements() * 9);
}

// The launch geometry a row reports is what its launcher launches (the launchers read it); here
// it is checked against the problem, computed independently: limits of any CUDA launch, and the
// grid each simple mapping needs to cover the output.
TEST(VariantTable, LaunchGeometryCoversTheOutputWithinCudaLimits) {
  int checked = 0;
  for (const ConvVariant& v : convVariants()) {
    if (!v.launchGeometry) continue;
    for (const Trial& t : trials()) {
      const ConvProblem& p = t.problem;
      if (!v.unsupportedReasonFor(p).empty()) continue;
      SCOPED_TRACE(v.id + ": " + p.describe());
      const std::vector<KernelLaunchGeometry> launches = v.launchGeometry(p);
      ASSERT_FALSE(launches.empty());
      for (const KernelLaunchGeometry& g : launches) {
        ++checked;
        EXPECT_FALSE(g.kernel.empty());
        EXPECT_FALSE(g.mapping.empty());
        EXPECT_GE(g.blocks(), 1);
        EXPECT_GE(g.threadsPerBlock(), 1);
        EXPECT_LE(g.threadsPerBlock(), 1024);
        EXPECT_LE(g.sharedBytes, 227 * 1024) << "more shared memory than any block can have";
        const int64_t outputs = p.outputElements();
        const auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
        if (g.kernel == "conv_baseline") {
          EXPECT_EQ(g.blocks(), std::min<int64_t>(ceilDiv(outputs, g.blockX), INT32_MAX));
        } else if (g.kernel == "conv_tiled_shared" || g.kernel == "conv_constant_weights") {
          EXPECT_EQ(g.blockX * g.blockY, g.tileHeight * g.tileWidth) << "a thread per output of the tile";
          EXPECT_EQ(g.blocks(), int64_t{p.batch} * p.outChannels * ceilDiv(p.outHeight(), g.tileHeight) *
                                    ceilDiv(p.outWidth(), g.tileWidth));
        } else if (g.kernel == "conv_fused_unroll_matmul") {
          const int64_t maps = ceilDiv(p.outChannels, g.tileHeight);  // tiles of maps
          EXPECT_EQ(g.blocks(), maps * ceilDiv(int64_t{p.batch} * p.outHeight() * p.outWidth(), g.tileWidth));
          EXPECT_GE(maps * g.tileHeight, p.outChannels);
        }
      }
    }
  }
#if CONVSCOPE_TEST_BUILT_WITH_CUDA
  EXPECT_GT(checked, 0);
#endif
}

TEST(VariantTable, AShapeAVariantCannotLaunchIsDeclinedNotFailedAtLaunch) {
#if CONVSCOPE_TEST_BUILT_WITH_CUDA
  // One image of 512 channels, a 7x7 kernel and a 224x224 output unrolls to 5 GB: more than the
  // unroll variant's 512 MB workspace, and its chunks never go below one image.
  ConvProblem huge{1, 512, 230, 230, 64, 7, 7};
  EXPECT_NE(findConvVariant("gpu-unroll-gemm").unsupportedReasonFor(huge).find("workspace"), std::string::npos);
  EXPECT_EQ(findConvVariant("gpu-unroll-gemm").unsupportedReasonFor(trials().back().problem), "");
#else
  GPU_TEST_SKIP() << "without CUDA the GPU rows have no kernels, and no shape checks";
#endif
}

TEST(VariantTable, UnknownVariantIsRefusedWithTheKnownIds) {
  try {
    createConvBackend("gpu-warp-drive");
    FAIL() << "an unknown variant was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown kernel variant 'gpu-warp-drive'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu-reference"), std::string::npos) << e.what();
  }
}

TEST(VariantTable, RefusesARowThatCannotRunOrTakesAnIdTwice) {
  ConvVariant copy = findConvVariant("cpu-reference");
  EXPECT_THROW(registerConvVariant(copy), Error) << "the id is taken";
  ConvVariant idle;
  idle.id = "cpu-idle";
  EXPECT_THROW(registerConvVariant(idle), Error) << "no way to run";
  EXPECT_THROW(findConvVariant("cpu-idle"), Error);
  ConvVariant late = findConvVariant("cpu-reference");
  late.id = "cpu-late";
  EXPECT_THROW(registerConvVariant(late), Error) << "the table has been read: its rows are referred to";
  EXPECT_THROW(findConvVariant("cpu-late"), Error);
}

TEST(VariantTable, EachRoleIsOneRowAndTheCourseBaselineIsItsFirstGpuStep) {
  for (const VariantRole role : {VariantRole::kCourseBaseline, VariantRole::kVendorLibrary}) {
    const ConvVariant* holder = variantWithRole(role);
    ASSERT_NE(holder, nullptr);
    EXPECT_EQ(std::count_if(convVariants().begin(), convVariants().end(),
                            [&](const ConvVariant& v) { return v.role == role; }),
              1);
    ConvVariant second = *holder;
    second.id = holder->id + "-again";
    try {
      registerConvVariant(second);
      ADD_FAILURE() << "a second row took the role of " << holder->id;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("claim the same role"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(variantWithRole(VariantRole::kCourseStep), nullptr) << "every step has that role: it names no row";
  const auto firstGpu =
      std::find_if(convVariants().begin(), convVariants().end(), [](const ConvVariant& v) { return v.runsOnGpu(); });
  ASSERT_NE(firstGpu, convVariants().end());
  EXPECT_EQ(variantWithRole(VariantRole::kCourseBaseline), &*firstGpu);
  EXPECT_TRUE(variantWithRole(VariantRole::kVendorLibrary)->requirements.cudnn);
}

TEST(VariantTable, DefaultIsAPreferredVariantThatCanRunHere) {
  const ConvVariant& chosen = findConvVariant(defaultConvVariant());
  EXPECT_TRUE(chosen.preferredDefault);
  EXPECT_EQ(chosen.unavailableReason(), "");
  if (gpuInfo().usable) {
    EXPECT_TRUE(chosen.runsOnGpu()) << "a GPU is here";
  }
}

TEST(VariantTable, RequirementsSayWhatAVariantNeeds) {
  VariantRequirements cpu;
  EXPECT_EQ(cpu.describe(), "CPU");
  VariantRequirements tensor{true, false, true, 8, 0};
  EXPECT_EQ(tensor.describe(), "CUDA GPU, compute capability 8.0+, tensor cores");
  VariantRequirements cudnn{true, true};
  EXPECT_EQ(cudnn.describe(), "CUDA GPU + cuDNN");
}

TEST(GpuDevice, ReportsAReasonWhenThereIsNoGpu) {
  const GpuInfo& device = gpuInfo();
  if (device.usable)
    EXPECT_FALSE(device.name.empty());
  else
    EXPECT_FALSE(device.unusableReason.empty());
}

}  // namespace
}  // namespace convscope
