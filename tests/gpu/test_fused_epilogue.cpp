// Every GPU variant that fuses an epilogue: conv -> activation -> pooling chains of random shapes
// and attributes (odd sizes, strides, both paddings, average pooling that counts the padding or
// not, inputs with negatives) run as the plan fuses them -- one stage, or the pooling apart where
// the variant's fusesStep declines its windows -- and agree with the layer-by-layer CPU
// reference to the variant's tolerance; with every layer captured the same model runs unfused
// and agrees too. Skips, saying why, where no GPU can be used. On the host, without a GPU: the
// typed epilogue the kernels take (gpu/kernels/epilogue.h) and the one 2x2-pooling rule of the
// tensor-core kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/plan.h"
#include "gpu/kernels/epilogue.h"
#include "tests/core/epilogue_backend.h"
#include "tests/core/model_builder.h"
#include "tests/core/tensor_core_path_check.h"
#include "tests/core/test_support.h"
#include "tests/core/tf32.h"

namespace convscope {
namespace {

using testing::ModelBuilder;
using testing::setInt;
using testing::setInts;

struct Chain {
  int channels, height, width, maps, kernel, stride, pad;
  bool bias;
  std::string activation;  // "" for none
  std::string pool;        // "MaxPool" or "AveragePool"
  int poolKernel, poolStride, poolPad;
  bool countIncludePad;
};

// `tf32`: the weights rounded to TF32 (see tests/core/tf32.h); the bias stays FP32, as the
// kernels add it in FP32.
std::shared_ptr<const Model> modelOf(const Chain& c, std::mt19937& rng, bool tf32) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  ModelBuilder b;
  b.input("x", {-1, c.channels, c.height, c.width}).output("y");
  std::vector<float> w(static_cast<size_t>(c.maps * c.channels * c.kernel * c.kernel));
  for (float& v : w) v = tf32 ? testing::roundToTf32(value(rng)) : value(rng);
  b.floats("W", {c.maps, c.channels, c.kernel, c.kernel}, w);
  std::vector<std::string> convInputs = {"x", "W"};
  if (c.bias) {
    std::vector<float> bias(static_cast<size_t>(c.maps));
    for (float& v : bias) v = value(rng);
    b.floats("B", {c.maps}, bias);
  }
  onnx::NodeProto& conv =
      c.bias ? b.node("Conv", {"x", "W", "B"}, {"c"}, "conv") : b.node("Conv", {"x", "W"}, {"c"}, "conv");
  setInts(conv, "strides", {c.stride, c.stride});
  setInts(conv, "pads", {c.pad, c.pad, c.pad, c.pad});
  std::string last = "c";
  if (!c.activation.empty()) {
    activationNode(b, c.activation, "c", "a", "activation");
    last = "a";
  }
  onnx::NodeProto& pool = b.node(c.pool, {last}, {"y"}, "pool");
  setInts(pool, "kernel_shape", {c.poolKernel, c.poolKernel});
  setInts(pool, "strides", {c.poolStride, c.poolStride});
  setInts(pool, "pads", {c.poolPad, c.poolPad, c.poolPad, c.poolPad});
  if (c.pool == "AveragePool") setInt(pool, "count_include_pad", c.countIncludePad ? 1 : 0);
  return b.load("chain.onnx");
}

double relativeError(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  double error = 0.0, norm = 0.0;
  for (int64_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(std::isfinite(got[i])) << "element " << i;
    error += (double{got[i]} - want[i]) * (double{got[i]} - want[i]);
    norm += double{want[i]} * want[i];
  }
  return std::sqrt(error / std::max(norm, 1e-30));
}

class FusedEpilogue : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedEpilogue, RandomChainsAgreeWithTheLayerByLayerReference) {
  const ConvVariant& variant = findConvVariant(GetParam());
  const char* kVariant = variant.id.c_str();
  // The models and their plans are checked everywhere; the GPU runs where there is one.
  const std::string unavailable = variant.unavailableReason();
  const unsigned seed = std::random_device{}();
  std::printf("fused-epilogue chains: seed %u\n", seed);
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<std::string> activations = {""};  // "": none
  for (Activation a : kFusableActivations) activations.push_back(onnxTypeOf(a));
  const gpu::TensorCoreLaunches launchesBefore = gpu::tensorCoreLaunches();
  bool strideOne = false;  // a stride-1 conv ran on the GPU
  for (int trial = 0; trial < 24; ++trial) {
    Chain c{};
    c.channels = pick(1, 4);
    c.height = 2 * pick(4, 11) + 1;  // odd: multiples of no tile
    c.width = 2 * pick(4, 11) + 1;
    c.maps = pick(1, 9);
    c.kernel = 2 * pick(0, 2) + 1;
    c.stride = pick(1, 2);
    c.pad = pick(0, c.kernel / 2);
    c.bias = pick(0, 1) == 1;
    c.activation = activations[pick(0, static_cast<int>(activations.size()) - 1)];
    c.pool = pick(0, 1) ? "MaxPool" : "AveragePool";
    // A third of the poolings are the course's 2x2/2 unpadded, which every fusing variant takes.
    const bool coursePool = pick(0, 2) == 0;
    c.poolKernel = coursePool ? 2 : pick(2, 3);
    c.poolStride = coursePool ? 2 : pick(1, 3);
    c.poolPad = coursePool ? 0 : pick(0, c.poolKernel - 1);
    c.countIncludePad = pick(0, 1) == 1;
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << c.channels << "x" << c.height << "x" << c.width
                                      << " conv " << c.maps << "x" << c.kernel << "x" << c.kernel << " stride "
                                      << c.stride << " pad " << c.pad << (c.bias ? " bias " : " ") << c.activation
                                      << " " << c.pool << " " << c.poolKernel << "/" << c.poolStride << "/" << c.poolPad
                                      << (c.countIncludePad ? " counting the padding" : ""));
    // TF32 variants get data already in TF32, so their products are exact and every variant is
    // held to FP32 tolerance: a wrong index or a lost term fails, however small.
    const bool tf32 = variant.arithmetic == "TF32";
    const auto model = modelOf(c, rng, tf32);
    Tensor images({3, c.channels, c.height, c.width});
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    for (int64_t i = 0; i < images.size(); ++i) images[i] = tf32 ? testing::roundToTf32(value(rng)) : value(rng);

    const Plan plan = makePlan(*model, kVariant, {{"x", images.shape()}});
    const std::map<std::string, Shape> shapes = model->inferShapes({{"x", images.shape()}});
    const Shape poolInput = shapes.at(c.activation.empty() ? "c" : "a");
    std::vector<Shape> convInputs;
    for (const std::string& name : model->nodes[0].inputs) convInputs.push_back(shapes.at(name));
    const std::optional<ConvProblem> problem = model->nodes[0].op->convProblem(convInputs);
    ASSERT_TRUE(problem.has_value());
    const bool poolFused =
        !variant.fusesStep || variant.fusesStep(*problem, *model->nodes.back().op->asEpilogueStep(poolInput));
    if (coursePool) {
      EXPECT_TRUE(poolFused) << "every fusing variant takes the course's pooling";
    }
    ASSERT_EQ(plan.stages.size(), poolFused ? 1u : 2u) << "conv, activation and pooling: one stage";
    EXPECT_EQ(plan.stages[0].nodes.size(), model->nodes.size() - (poolFused ? 0 : 1));
    Engine reference(model, "cpu-reference");
    const Tensor want = reference.evaluate({{"x", images}}).at("y");
    if (!unavailable.empty()) continue;

    strideOne = strideOne || c.stride == 1;
    Engine gpu(model, kVariant);
    std::vector<ConvLayerTime> times;
    const Tensor fused = gpu.evaluate({{"x", images}}, &times).at("y");
    ASSERT_EQ(times.size(), 1u);
    EXPECT_EQ(times[0].fusedNodes.size(), (c.activation.empty() ? 0u : 1u) + (poolFused ? 1u : 0u))
        << "the chain ran as the plan fused it";
    EXPECT_LE(relativeError(fused, want), 1e-5);
    // Every layer captured: the same model unfused, through the same kernel without an epilogue.
    std::vector<LayerOutput> layers;
    const Tensor unfused = gpu.evaluate({{"x", images}}, nullptr, &layers).at("y");
    EXPECT_EQ(layers.size(), model->nodes.size());
    EXPECT_LE(relativeError(unfused, want), 1e-5);
  }
  if (!unavailable.empty()) GPU_TEST_SKIP() << "plans checked; " << kVariant << " cannot run here: " << unavailable;
  // The tensor-core variants: the path CONVSCOPE_TENSOR_MMA asks for is the one that ran.
  testing::expectTheAskedTensorCorePathRan(variant.id, launchesBefore, strideOne);
}

// Each ConvEpilogue becomes the typed description with the same bias, activation and pooling.
TEST(FusedEpilogueDescription, CarriesTheCoreEpilogueOpByOp) {
  const float bias[1] = {0.5f};
  struct Case {
    bool hasActivation;
    Activation activation;
    gpu::FusedActivation want;
  };
  const Case activations[] = {{false, Activation::Relu, gpu::FusedActivation::kNone},
                              {false, Activation::Sigmoid, gpu::FusedActivation::kNone},
                              {true, Activation::Relu, gpu::FusedActivation::kRelu},
                              {true, Activation::Tanh, gpu::FusedActivation::kTanh},
                              {true, Activation::Sigmoid, gpu::FusedActivation::kSigmoid}};
  // Every other activation of the list has a kind of its own on the device, none of them kNone.
  std::set<gpu::FusedActivation> kinds;
  for (Activation a : kFusableActivations) {
    EXPECT_NE(gpu::fusedActivationOf(true, a), gpu::FusedActivation::kNone) << onnxTypeOf(a);
    EXPECT_EQ(gpu::fusedActivationOf(false, a), gpu::FusedActivation::kNone) << onnxTypeOf(a);
    kinds.insert(gpu::fusedActivationOf(a));
  }
  EXPECT_EQ(kinds.size(), std::size(kFusableActivations));
  for (const Case& c : activations)
    for (int pool = 0; pool < 3; ++pool)
      for (const float* b : {static_cast<const float*>(nullptr), bias}) {
        ConvEpilogue e;
        e.bias = b;
        e.hasActivation = c.hasActivation;
        e.activation = c.activation;
        e.hasPool = pool != 0;
        e.maxPool = pool == 1;
        const gpu::FusedEpilogue fused = gpu::fusedEpilogueOf(e);
        EXPECT_EQ(fused.bias, b);
        EXPECT_EQ(fused.activation, c.want);
        EXPECT_EQ(fused.pooling, pool == 0   ? gpu::FusedPooling::kNone
                                 : pool == 1 ? gpu::FusedPooling::kMax
                                             : gpu::FusedPooling::kAverage);
      }
}

// The tensor-core kernels pool before they activate only where that gives the same maximum: the
// list's "nondecreasing" must be true of the function, which the definition (in double) shows on
// a fine grid; an activation that dips (HardSwish) must say so.
TEST(FusedEpilogueDescription, PoolingFirstOnlyForActivationsThatNeverDecrease) {
  EXPECT_TRUE(gpu::maxPoolCommutesWith(gpu::FusedActivation::kNone));
  for (Activation a : kFusableActivations) {
    bool rises = true;
    double previous = testing::referenceActivation(a, -20.0);
    for (double x = -20.0; x <= 20.0; x += 1.0 / 64.0) {
      const double y = testing::referenceActivation(a, x);
      rises = rises && y >= previous;
      previous = y;
    }
    EXPECT_EQ(gpu::maxPoolCommutesWith(gpu::fusedActivationOf(a)), rises) << onnxTypeOf(a);
  }
}

// The tensor-core kernels pool only whole 2x2 windows of stride 2, and at least one. Checked
// against a brute-force walk over the windows a pooling reads, for every conv output up to 7x7
// and poolings of kernel, stride and padding 1 to 3 in floor and ceil mode; the row's fusesStep
// (a CUDA build's) must say the same. A conv output of one row or column has no whole window:
// its 2x2 pooling is empty and is declined (setEpilogue once accepted it).
TEST(FusedEpilogueDescription, TwoByTwoPoolRuleMatchesTheWindowsItReads) {
  const ConvVariant& tensorCores = findConvVariant("gpu-tensor-tf32");
  int fusable = 0, emptyDeclined = 0;
  for (int convHeight = 1; convHeight <= 7; ++convHeight)
    for (int convWidth = 1; convWidth <= 7; ++convWidth)
      for (int kernel = 1; kernel <= 3; ++kernel)
        for (int stride = 1; stride <= 3; ++stride)
          for (int pad = 0; pad <= 1; ++pad)
            for (bool ceilMode : {false, true}) {
              ConvProblem p;
              p.inHeight = convHeight;  // a 1x1 kernel: the conv output is the input's size
              p.inWidth = convWidth;
              PoolGeometry g;
              g.inHeight = convHeight;
              g.inWidth = convWidth;
              g.kernelHeight = g.kernelWidth = kernel;
              g.strideHeight = g.strideWidth = stride;
              g.padTop = g.padLeft = g.padBottom = g.padRight = pad;
              const auto outSize = [&](int in) {
                const int span = in + 2 * pad - kernel;
                if (span < 0) return 0;
                return (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
              };
              g.outHeight = outSize(convHeight);
              g.outWidth = outSize(convWidth);

              // Brute force: every window is 2x2 at (2y, 2x) and inside the conv output, none is
              // missing (every 2x2 block at even offsets is pooled), and there is one at least.
              // The stride must say 2 as well: a pooling of one window at another stride reads
              // the same window, but the rule keeps to the attributes (the plan then pools apart).
              bool whole = kernel == 2 && stride == 2 && pad == 0 && g.outHeight > 0 && g.outWidth > 0;
              for (int y = 0; y < g.outHeight && whole; ++y)
                for (int x = 0; x < g.outWidth && whole; ++x) {
                  const int top = y * stride - pad, left = x * stride - pad;
                  whole = top == 2 * y && left == 2 * x && top + kernel <= convHeight && left + kernel <= convWidth;
                }
              const bool missesAWindow = 2 * (g.outHeight + 1) <= convHeight || 2 * (g.outWidth + 1) <= convWidth;
              const bool want = whole && !missesAWindow;

              EXPECT_EQ(gpu::isWholeTwoByTwoPool(p, g), want)
                  << "conv output " << convHeight << "x" << convWidth << ", pool " << kernel << "/" << stride << " pad "
                  << pad << (ceilMode ? " ceil" : " floor");
              if (tensorCores.fusesStep) {
                EpilogueStep step;
                step.isPool = true;
                step.pool = g;
                EXPECT_EQ(tensorCores.fusesStep(p, step), want);
              }
              fusable += want;
              emptyDeclined += kernel == 2 && stride == 2 && pad == 0 && (convHeight == 1 || convWidth == 1);
            }
  EXPECT_GT(fusable, 0) << "the sweep reached the fusable case";
  EXPECT_GT(emptyDeclined, 0) << "the sweep reached the empty pooling";
}

std::vector<std::string> fusingGpuVariants() {
  std::vector<std::string> ids;
  for (const ConvVariant& v : convVariants())
    if (v.runsOnGpu() && !v.fusableOps.empty()) ids.push_back(v.id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Registry, FusedEpilogue, ::testing::ValuesIn(fusingGpuVariants()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
});

}  // namespace
}  // namespace convscope
