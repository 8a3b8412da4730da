// The fused-epilogue variant on the GPU: conv -> activation -> pooling chains of random shapes and
// attributes (odd sizes, strides, both paddings, average pooling that counts the padding or not,
// inputs with negatives) run as one fused stage and agree with the layer-by-layer CPU reference;
// with every layer captured the same model runs unfused and agrees too. Skips, saying why,
// where no GPU can be used.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/plan.h"
#include "tests/core/model_builder.h"

namespace convscope {
namespace {

using testing::ModelBuilder;
using testing::setInt;
using testing::setInts;

constexpr const char* kVariant = "gpu-fused-epilogue";

struct Chain {
  int channels, height, width, maps, kernel, stride, pad;
  bool bias;
  std::string activation;  // "" for none
  std::string pool;        // "MaxPool" or "AveragePool"
  int poolKernel, poolStride, poolPad;
  bool countIncludePad;
};

std::shared_ptr<const Model> modelOf(const Chain& c, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  ModelBuilder b;
  b.input("x", {-1, c.channels, c.height, c.width}).output("y");
  std::vector<float> w(static_cast<size_t>(c.maps * c.channels * c.kernel * c.kernel));
  for (float& v : w) v = value(rng);
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
    b.node(c.activation, {"c"}, {"a"}, "activation");
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

TEST(FusedEpilogue, RandomChainsAgreeWithTheLayerByLayerReference) {
  // The models and their plans are checked everywhere; the GPU runs where there is one.
  const std::string unavailable = findConvVariant(kVariant).unavailableReason();
  const unsigned seed = std::random_device{}();
  std::printf("fused-epilogue chains: seed %u\n", seed);
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* activations[] = {"", "Relu", "Tanh", "Sigmoid"};
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
    c.activation = activations[pick(0, 3)];
    c.pool = pick(0, 1) ? "MaxPool" : "AveragePool";
    c.poolKernel = pick(2, 3);
    c.poolStride = pick(1, 3);
    c.poolPad = pick(0, c.poolKernel - 1);
    c.countIncludePad = pick(0, 1) == 1;
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << c.channels << "x" << c.height << "x" << c.width
                                      << " conv " << c.maps << "x" << c.kernel << "x" << c.kernel << " stride "
                                      << c.stride << " pad " << c.pad << (c.bias ? " bias " : " ") << c.activation
                                      << " " << c.pool << " " << c.poolKernel << "/" << c.poolStride << "/" << c.poolPad
                                      << (c.countIncludePad ? " counting the padding" : ""));
    const auto model = modelOf(c, rng);
    Tensor images({3, c.channels, c.height, c.width});
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    for (int64_t i = 0; i < images.size(); ++i) images[i] = value(rng);

    const Plan plan = makePlan(*model, kVariant, {{"x", images.shape()}});
    ASSERT_EQ(plan.stages.size(), 1u) << "conv, activation and pooling: one stage";
    EXPECT_EQ(plan.stages[0].nodes.size(), model->nodes.size());
    Engine reference(model, "cpu-reference");
    const Tensor want = reference.evaluate({{"x", images}}).at("y");
    if (!unavailable.empty()) continue;

    Engine gpu(model, kVariant);
    std::vector<ConvLayerTime> times;
    const Tensor fused = gpu.evaluate({{"x", images}}, &times).at("y");
    ASSERT_EQ(times.size(), 1u);
    EXPECT_EQ(times[0].fusedNodes.size(), c.activation.empty() ? 1u : 2u) << "the chain ran as one stage";
    EXPECT_LE(relativeError(fused, want), 1e-5);
    // Every layer captured: the same model unfused, through the same kernel without an epilogue.
    std::vector<LayerOutput> layers;
    const Tensor unfused = gpu.evaluate({{"x", images}}, nullptr, &layers).at("y");
    EXPECT_EQ(layers.size(), model->nodes.size());
    EXPECT_LE(relativeError(unfused, want), 1e-5);
  }
  if (!unavailable.empty()) GTEST_SKIP() << "plans checked; " << kVariant << " cannot run here: " << unavailable;
}

}  // namespace
}  // namespace convscope
