// The whole network on the GPU, for every GPU variant: the 10,000 test images classified exactly
// as PyTorch did (accuracy identical for every FP32 variant), feature maps that match the CPU
// engine's, and per-layer op times. Skips, saying why, where no GPU can be used.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/engine.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"
#include "tests/core/model_builder.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

const std::string kModels = CONVSCOPE_MODELS_DIR;

std::vector<std::string> gpuVariants() {
  std::vector<std::string> ids;
  for (const ConvVariant& v : convVariants())
    if (v.runsOnGpu()) ids.push_back(v.id);
  return ids;
}

const ImageSet& testSet() {
  static const ImageSet set = ImageSet::loadIdxFolder(defaultDataFolder());
  return set;
}

class GpuEngine : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (const std::string reason = findConvVariant(GetParam()).unavailableReason(); !reason.empty())
      GPU_TEST_SKIP() << GetParam() << " cannot run here: " << reason;
  }
};

TEST_P(GpuEngine, ReproducesPyTorchOnTheWholeTestSetInOneBatch) {
  for (const std::string name : {"course-high", "lenet5"}) {
    SCOPED_TRACE(name);
    const auto model = loadOnnxModel(kModels + "/" + name + ".onnx");
    const auto card = readModelCard(kModels + "/" + name + ".onnx");
    ASSERT_TRUE(card);
    Engine engine(model, GetParam());
    EXPECT_NE(engine.deviceName(), "CPU");
    const ClassificationRun run = classify(engine, testSet(), 0, 10000, 10000);  // one batch, as the course does
    // FP32 products reproduce every recorded prediction; TF32 ones (inputs rounded to 11 bits)
    // may tip a few near-ties, at most the 5 in 10,000 the tensor-core target allows.
    const ConvVariant& variant = findConvVariant(GetParam());
    const int allowed = variant.relativeTolerance <= 1e-5 ? 0 : 5;
    int differing = 0;
    for (const ImageClassification& c : run.images)
      differing += c.predicted != card->predictions[static_cast<size_t>(c.index)] - '0' ? 1 : 0;
    EXPECT_LE(differing, allowed) << variant.arithmetic;
    EXPECT_NEAR(run.correct, card->testCorrect, allowed);
    std::printf("%s %s: %d of 10000 predictions differ from PyTorch's\n", name.c_str(), variant.id.c_str(), differing);
    ASSERT_EQ(run.convTimes.size(), variant.runNetwork ? 1u : 2u) << "a time per conv stage; one for a whole network";
    for (const ConvLayerTime& t : run.convTimes) {
      EXPECT_GT(t.seconds, 0.0);
      EXPECT_EQ(t.problem.batch, 10000);
      if (t.variant != GetParam()) {
        EXPECT_FALSE(t.fallbackReason.empty()) << "a fallback must say why";
      }
    }
  }
}

TEST_P(GpuEngine, CapturedLayersMatchTheCpuEngine) {
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");
  Engine gpu(model, GetParam());
  Engine cpu(model, "cpu-reference");
  const Tensor batch = testSet().batch(0, 3, 48, 48);
  const InferenceResult a = gpu.infer(batch, true);
  const InferenceResult b = cpu.infer(batch, true);
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t l = 0; l < a.layers.size(); ++l) {
    SCOPED_TRACE(a.layers[l].node);
    ASSERT_EQ(a.layers[l].value.shape(), b.layers[l].value.shape());
    double error = 0.0, norm = 0.0;
    for (int64_t i = 0; i < a.layers[l].value.size(); ++i) {
      const double d = a.layers[l].value[i] - b.layers[l].value[i];
      ASSERT_TRUE(std::isfinite(a.layers[l].value[i])) << "element " << i;
      error += d * d;
      norm += double{b.layers[l].value[i]} * b.layers[l].value[i];
    }
    EXPECT_LE(std::sqrt(error / std::max(norm, 1e-30)), findConvVariant(GetParam()).relativeTolerance);
  }
  EXPECT_GE(a.uploadSeconds, 0.0);
}

// Add, Sub, Mul and Div on the GPU (Device::arithmetic) give the host's float bits for every way
// two tensors broadcast: the same shape (a residual sum), a channel vector, a scalar, a row, both
// sides broadcast, a lower rank; odd sizes, negatives, zeros (so Div makes infinities and NaN).
// The expected values come from the test's own walk over the indices; the host's engine is held
// to them too (so the walk is checked where there is no GPU).
TEST(GpuArithmetic, EveryBroadcastGivesTheHostsBits) {
  std::vector<std::string> variants = {"cpu-reference"};
  const std::string noGpu = findConvVariant("gpu-baseline").unavailableReason();
  if (noGpu.empty()) variants.push_back("gpu-baseline");
  struct Case {
    Shape a, b;
  };
  const Case cases[] = {{{3, 5, 7, 9}, {3, 5, 7, 9}},
                        {{3, 5, 7, 9}, {1, 5, 1, 1}},
                        {{3, 5, 7, 9}, {}},
                        {{3, 5, 7, 9}, {9}},
                        {{1, 5, 1, 9}, {3, 1, 7, 1}},
                        {{2, 1, 3}, {4, 1, 5, 1}},
                        {{5, 1}, {1, 1, 3, 1, 7}},
                        {{9}, {3, 5, 7, 9}},
                        {{}, {}},
                        {{}, {2, 3}},
                        {{3, 1, 7}, {3, 1, 7}},
                        {{2, 1, 2, 1, 3, 1, 2, 2, 3}, {2, 1, 2, 1, 3, 1, 2, 2, 3}},  // rank 9: merged
                        {{2, 3, 2, 3, 2, 1, 1, 1, 1}, {1, 3, 1, 3, 2, 2, 2, 2, 2}}};
  std::mt19937 rng(20261129);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  for (const std::string& variant : variants)
    for (const char* op : {"Add", "Sub", "Mul", "Div"})
      for (const Case& c : cases) {
        SCOPED_TRACE(variant + ": " + op + " " + shapeToString(c.a) + " " + shapeToString(c.b));
        testing::ModelBuilder b;
        b.input("a", c.a).input("b", c.b).output("y");
        b.node(op, {"a", "b"}, {"y"}, "arithmetic");
        const auto model = loadOnnxModelFromBytes(b.bytes(), "arithmetic.onnx");
        Tensor x(c.a), y(c.b);
        for (int64_t i = 0; i < x.size(); ++i) x[i] = i % 7 == 0 ? 0.0f : value(rng);
        for (int64_t i = 0; i < y.size(); ++i) y[i] = i % 5 == 0 ? 0.0f : value(rng);
        Engine engine(model, variant);
        const Tensor got = engine.evaluate({{"a", x}, {"b", y}}).at("y");
        // The output shape and each input's index of an output element, by NumPy's rule.
        const size_t rank = std::max(c.a.size(), c.b.size());
        Shape out(rank);
        const auto dim = [rank](const Shape& s, size_t axis) {
          return axis < rank - s.size() ? int64_t{1} : s[axis - (rank - s.size())];
        };
        for (size_t axis = 0; axis < rank; ++axis) out[axis] = std::max(dim(c.a, axis), dim(c.b, axis));
        ASSERT_EQ(got.shape(), out);
        const auto indexIn = [&](const Shape& s, const std::vector<int64_t>& at) {
          int64_t index = 0;
          for (size_t axis = rank - s.size(); axis < rank; ++axis)
            index = index * dim(s, axis) + (dim(s, axis) == 1 ? 0 : at[axis]);
          return index;
        };
        std::vector<int64_t> at(rank, 0);
        for (int64_t i = 0; i < got.size(); ++i) {
          const float p = x[indexIn(c.a, at)], q = y[indexIn(c.b, at)];
          const float want = op[0] == 'A' ? p + q : op[0] == 'S' ? p - q : op[0] == 'M' ? p * q : p / q;
          const float value = got[i];
          if (std::isnan(want))
            ASSERT_TRUE(std::isnan(value)) << "element " << i;
          else
            ASSERT_EQ(std::memcmp(&want, &value, sizeof(float)), 0)
                << "element " << i << ": " << value << ", not " << want;
          for (size_t axis = rank; axis-- > 0;) {
            if (++at[axis] < out[axis]) break;
            at[axis] = 0;
          }
        }
      }
  // A broadcast that alternates over more axes than the kernel takes is refused on the GPU,
  // naming the shapes (the host computes it), never handed to the host behind the plan's back.
  {
    testing::ModelBuilder b;
    b.input("a", {2, 3, 2, 3, 2, 3, 2, 3, 2}).input("b", {2, 1, 2, 1, 2, 1, 2, 1, 2}).output("y");
    b.node("Add", {"a", "b"}, {"y"}, "alternating");
    const auto model = loadOnnxModelFromBytes(b.bytes(), "alternating.onnx");
    Tensor x({2, 3, 2, 3, 2, 3, 2, 3, 2}), y({2, 1, 2, 1, 2, 1, 2, 1, 2});
    for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    for (int64_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(-i);
    for (const std::string& variant : variants) {
      Engine engine(model, variant);
      if (variant == "cpu-reference") {
        EXPECT_EQ(engine.evaluate({{"a", x}, {"b", y}}).at("y").size(), x.size());
        continue;
      }
      try {
        engine.evaluate({{"a", x}, {"b", y}});
        ADD_FAILURE() << "an alternating broadcast of 9 axes ran on the GPU";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("[2x1x2x1x2x1x2x1x2]"), std::string::npos) << e.what();
      }
    }
  }
  if (!noGpu.empty()) GPU_TEST_SKIP() << "the host's engine agreed; no GPU here: " << noGpu;
}

INSTANTIATE_TEST_SUITE_P(Registry, GpuEngine, ::testing::ValuesIn(gpuVariants()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
});

}  // namespace
}  // namespace convscope
