// The engine's plan: stages in graph order, each claimed by the selected variant or a fallback
// that says why; conv -> activation -> pooling chains fused into one stage when the variant's row
// says it applies them in its own kernel; and one evaluator that runs fused and unfused plans to
// the same numbers. The fusing and declining variants are rows this test adds to the table, so
// the planner and the evaluator are checked without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/plan.h"
#include "app/core/model/onnx_loader.h"
#include "tests/core/epilogue_backend.h"
#include "tests/core/model_builder.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

using testing::ModelBuilder;
using testing::setInt;
using testing::setInts;

const std::string kModels = CONVSCOPE_MODELS_DIR;

// Rows this test adds: one that fuses activations and pooling, one that declines 7x7 kernels, and
// a GPU one for planning only.
const bool rowsAdded = [] {
  ConvVariant fusing;
  fusing.id = "test-fusing";
  fusing.displayName = "Test: fused epilogue";
  fusing.description = "The definitions in double, with bias, activation and pooling applied in the same pass.";
  fusing.courseStep = "test";
  fusing.sourceFile = "tests/core/test_plan.cpp";
  fusing.fusableOps = everyEpilogueOp();
  fusing.createHostBackend = [] { return std::make_unique<testing::EpilogueBackend>(); };

  // Added first, so that the row just before it in the table is cpu-onednn.
  ConvVariant declining = fusing;
  declining.id = "test-declining";
  declining.fusableOps = {};
  declining.unsupportedReason = [](const ConvProblem& p) {
    return p.kernelHeight >= 7 ? "kernels of 7 and more are not in this test variant" : std::string();
  };
  registerConvVariant(declining);
  registerConvVariant(fusing);

  ConvVariant gpuDeclining = fusing;
  gpuDeclining.id = "test-gpu-declining";
  gpuDeclining.fusableOps = {};
  gpuDeclining.requirements.gpu = true;
  gpuDeclining.requirements.minComputeMajor = 99;  // never runs here: planned only
  gpuDeclining.unsupportedReason = declining.unsupportedReason;
  gpuDeclining.runOnDevice = [](Device&, const ConvProblem&, const float*, const float*, float*, const ConvEpilogue&) {
  };
  registerConvVariant(gpuDeclining);

  ConvVariant gpuRow;
  gpuRow.id = "test-gpu-plan";
  gpuRow.displayName = gpuRow.description = gpuRow.courseStep = "test";
  gpuRow.sourceFile = "tests/core/test_plan.cpp";
  gpuRow.requirements.gpu = true;
  gpuRow.runOnDevice = [](Device&, const ConvProblem&, const float*, const float*, float*, const ConvEpilogue&) {};
  registerConvVariant(gpuRow);
  return true;
}();

std::map<std::string, Shape> batchOf(const Model& model, int64_t batch) {
  Shape shape = model.imageInput().shape;
  shape[0] = batch;
  return {{model.imageInput().name, shape}};
}

// x (N x 2 x 9 x 9) -> Conv 3 filters 3x3, pads 1, bias -> Relu -> AveragePool 3x3 stride 2,
// pads 1, count_include_pad -> y; the Relu's output is also a graph output when `tapRelu`.
std::shared_ptr<const Model> convReluPool(bool tapRelu) {
  ModelBuilder b;
  b.input("x", {-1, 2, 9, 9}).output("y", {-1, 3, 5, 5});
  if (tapRelu) b.output("r", {-1, 3, 9, 9});
  std::vector<float> w(3 * 2 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(static_cast<int>(i % 11) - 5);
  b.floats("W", {3, 2, 3, 3}, w);
  b.floats("B", {3}, {0.25f, -0.5f, 0.0f});
  setInts(b.node("Conv", {"x", "W", "B"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  onnx::NodeProto& pool = b.node("AveragePool", {"r"}, {"y"}, "pool");
  setInts(pool, "kernel_shape", {3, 3});
  setInts(pool, "strides", {2, 2});
  setInts(pool, "pads", {1, 1, 1, 1});
  setInt(pool, "count_include_pad", 1);
  return b.load();
}

Tensor randomImages(const Shape& shape, unsigned seed) {
  Tensor t(shape);
  uint32_t state = seed;
  for (int64_t i = 0; i < t.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    t[i] = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 4.0f - 2.0f;  // negatives too
  }
  return t;
}

double largestDifference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double worst = 0.0;
  for (int64_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(std::isfinite(a[i])) << i;
    worst = std::max(worst, std::abs(double{a[i]} - b[i]));
  }
  return worst;
}

TEST(Plan, OneStagePerLayerWhenTheVariantFusesNothing) {
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");
  const Plan plan = makePlan(*model, "cpu-reference", batchOf(*model, 1));
  ASSERT_EQ(plan.stages.size(), model->nodes.size());
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    EXPECT_EQ(plan.stages[i].nodes, std::vector<size_t>{i});
    EXPECT_EQ(plan.stages[i].hasConv, model->nodes[i].opType == "Conv");
    if (plan.stages[i].hasConv) {
      EXPECT_EQ(plan.stages[i].variant, "cpu-reference");
    }
  }
  EXPECT_EQ(plan.fallbackCount(), 0);
}

TEST(Plan, ConvActivationAndPoolingBecomeOneStageForAFusingVariant) {
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");  // (Conv, Tanh, MaxPool) x 2, then dense layers
  const Plan plan = makePlan(*model, "test-fusing", batchOf(*model, 4));
  ASSERT_EQ(plan.stages.size(), model->nodes.size() - 4);
  EXPECT_EQ(plan.stages[0].nodes, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(plan.stages[1].nodes, (std::vector<size_t>{3, 4, 5}));
  EXPECT_TRUE(plan.stages[0].fused());
  const std::vector<std::string> lines = plan.describe(*model);
  EXPECT_NE(lines[0].find("/0/Conv (Conv) + /1/Tanh (Tanh) + /2/MaxPool (MaxPool): test-fusing, fused in one kernel"),
            std::string::npos)
      << lines[0];
  // Capturing every layer for the feature maps needs each layer's output: nothing is fused then.
  EXPECT_EQ(makePlan(*model, "test-fusing", batchOf(*model, 4), false).stages.size(), model->nodes.size());
}

TEST(Plan, AValueWithAnotherReaderIsNotFusedAway) {
  const auto model = convReluPool(true);  // the Relu's output is also a graph output
  const Plan plan = makePlan(*model, "test-fusing", {{"x", {2, 2, 9, 9}}});
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[0].nodes, (std::vector<size_t>{0, 1}));  // conv + relu, the pooling apart
  EXPECT_EQ(plan.stages[1].nodes, std::vector<size_t>{2});
}

TEST(Plan, TheFusedEvaluationEqualsTheLayerByLayerOne) {
  for (const bool tap : {false, true}) {
    SCOPED_TRACE(tap ? "relu also an output" : "conv-relu-pool fused");
    const auto model = convReluPool(tap);
    const Tensor images = randomImages({3, 2, 9, 9}, 7);
    Engine fused(model, "test-fusing");
    Engine reference(model, "cpu-reference");
    const int before = testing::EpilogueBackend::fusedCalls;
    std::vector<ConvLayerTime> times;
    const auto a = fused.evaluate({{"x", images}}, &times);
    const auto b = reference.evaluate({{"x", images}});
    EXPECT_EQ(testing::EpilogueBackend::fusedCalls, before + 1) << "the fused stage ran through the variant's epilogue";
    for (const auto& [name, value] : b) EXPECT_LE(largestDifference(a.at(name), value), 1e-5) << name;
    ASSERT_EQ(times.size(), 1u);
    EXPECT_EQ(times[0].fusedNodes, tap ? std::vector<std::string>{"relu"} : (std::vector<std::string>{"relu", "pool"}));
  }
}

TEST(Plan, TheCourseModelFusedClassifiesAsTheReferenceDoes) {
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");
  const ImageSet images = ImageSet::loadIdxFolder(defaultDataFolder());
  const Tensor batch = images.batch(0, 6, 48, 48);
  Engine fused(model, "test-fusing");
  Engine reference(model, "cpu-reference");
  const InferenceResult a = fused.infer(batch);
  const InferenceResult b = reference.infer(batch);
  EXPECT_LE(largestDifference(a.probabilities, b.probabilities), 1e-5);
  ASSERT_EQ(a.convTimes.size(), 2u);
  EXPECT_EQ(a.convTimes[0].fusedNodes, (std::vector<std::string>{"/1/Tanh", "/2/MaxPool"}));
  // With the layers captured, every layer is there, equal to the reference's.
  const InferenceResult captured = fused.infer(batch, true);
  const InferenceResult expected = reference.infer(batch, true);
  ASSERT_EQ(captured.layers.size(), model->nodes.size() + 1);
  for (size_t l = 0; l < captured.layers.size(); ++l)
    EXPECT_LE(largestDifference(captured.layers[l].value, expected.layers[l].value), 1e-5) << captured.layers[l].node;
}

TEST(Plan, TheBenchmarkSaysWhichNodesAFusedOpTimeCovers) {
  BenchmarkOptions options;
  options.model = kModels + "/course-high.onnx";
  options.variants = {"test-fusing", "cpu-reference"};
  options.batches = {2};
  options.repeats = 1;
  options.warmups = 0;
  const ImageSet images = ImageSet::loadIdxFolder(defaultDataFolder());
  const BenchmarkReport report = runBenchmark(options, images);
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "convscope-plan-bench.json";
  writeBenchmarkJson(report, file);
  const BenchmarkReport back = readBenchmarkJson(file);
  std::filesystem::remove(file);
  ASSERT_EQ(back.runs.size(), 2u);
  ASSERT_EQ(back.runs[0].layers.size(), 2u);
  EXPECT_EQ(back.runs[0].layers[0].fusedNodes, (std::vector<std::string>{"/1/Tanh", "/2/MaxPool"}));
  EXPECT_EQ(back.runs[0].layers[1].fusedNodes, (std::vector<std::string>{"/4/Tanh", "/5/MaxPool"}));
  EXPECT_TRUE(back.runs[1].layers[0].fusedNodes.empty()) << "cpu-reference fuses nothing";
  EXPECT_EQ(back.runs[0].correct, back.runs[1].correct);
}

TEST(Plan, ADeclinedLayerGoesToTheNearestEarlierStepAndSaysWhy) {
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");  // 7x7 kernels
  const Plan plan = makePlan(*model, "test-declining", batchOf(*model, 2));
  EXPECT_EQ(plan.fallbackCount(), 2);
  const PlanStage& conv1 = plan.stages[0];
  EXPECT_EQ(conv1.variant, "cpu-onednn") << "the CPU row before it in the table";
  EXPECT_EQ(conv1.fallbackReason, "kernels of 7 and more are not in this test variant");
  EXPECT_NE(plan.describe(*model)[0].find("fallback: test-declining declined this layer (kernels of 7"),
            std::string::npos);

  Engine engine(model, "test-declining");
  const ImageSet images = ImageSet::loadIdxFolder(defaultDataFolder());
  const InferenceResult result = engine.infer(images.batch(0, 2, 48, 48));
  ASSERT_EQ(result.convTimes.size(), 2u);
  for (const ConvLayerTime& t : result.convTimes) {
    EXPECT_EQ(t.variant, "cpu-onednn");
    EXPECT_EQ(t.fallbackReason, "kernels of 7 and more are not in this test variant");
  }
}

TEST(Plan, AVariantThatCannotRunHereIsPlannedWithFallbacksChosenByShape) {
  // The Model tab and `info` show the plan of a GPU variant on a machine without a GPU (or with
  // too old a one): its fallbacks are chosen among the GPU rows by shape, not by what runs here.
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");
  ASSERT_NE(findConvVariant("test-gpu-declining").unavailableReason(), "");
  const Plan plan = makePlan(*model, "test-gpu-declining", batchOf(*model, 1));
  EXPECT_EQ(plan.fallbackCount(), 2);
  const PlanStage& conv1 = plan.stages[0];
  EXPECT_TRUE(findConvVariant(conv1.variant).runsOnGpu()) << conv1.variant;
  EXPECT_EQ(findConvVariant(conv1.variant)
                .unsupportedReasonFor(*model->nodes[0].op->convProblem({{1, 1, 48, 48}, {12, 1, 7, 7}})),
            "");
}

TEST(Plan, TheMemoryEstimateCountsOnlyWhatAFusedStageStores) {
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");
  Engine fused(model, "test-fusing");
  Engine reference(model, "cpu-reference");
  // Without capture the fused plan never stores the full-size conv and tanh outputs.
  EXPECT_LT(fused.estimateMemory(1000).bytes, reference.estimateMemory(1000).bytes);
  // With every layer captured nothing is fused: the same need.
  EXPECT_EQ(fused.estimateMemory(1000, true).bytes, reference.estimateMemory(1000, true).bytes);
}

TEST(Plan, OnTheGpuAnOpWithoutAGpuKernelIsARecordedRoundTrip) {
  // A GPU row ("test-gpu-plan", added with the others above) is enough to plan: planning reads
  // the table and the shapes, not the device.
  ModelBuilder b;  // MatMul has no GPU kernel in the engine; Relu has one
  b.input("x", {-1, 4}).output("y", {-1, 3});
  b.weights("W", {4, 3});
  b.node("MatMul", {"x", "W"}, {"m"}, "matmul");
  b.node("Relu", {"m"}, {"y"}, "relu");
  const auto model = b.load();
  const Plan plan = makePlan(*model, "test-gpu-plan", {{"x", {2, 4}}});
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_TRUE(plan.stages[0].hostRoundTrip);
  EXPECT_FALSE(plan.stages[1].hostRoundTrip);
  EXPECT_EQ(plan.fallbackCount(), 1);
  EXPECT_NE(plan.describe(*model)[0].find("no GPU kernel for MatMul"), std::string::npos);
}

}  // namespace
// Add, Sub, Mul and Div have GPU kernels (a residual sum stays on the GPU); Pow does not, and
// its stage is the plan's one round trip to the host.
TEST(Plan, OnTheGpuArithmeticRunsOnTheDeviceButPowIsARoundTrip) {
  ModelBuilder b;
  b.input("x", {-1, 3, 5, 7}).output("y");
  b.weights("c", {3, 1, 1});
  b.node("Add", {"x", "x"}, {"add"}, "residual");
  b.node("Sub", {"add", "c"}, {"sub"}, "sub");
  b.node("Mul", {"sub", "c"}, {"mul"}, "mul");
  b.node("Div", {"mul", "c"}, {"div"}, "div");
  b.node("Pow", {"div", "c"}, {"y"}, "pow");
  const auto model = b.load();
  const Plan plan = makePlan(*model, "test-gpu-plan", {{"x", {2, 3, 5, 7}}});
  ASSERT_EQ(plan.stages.size(), 5u);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(plan.stages[i].hostRoundTrip) << "stage " << i;
  EXPECT_TRUE(plan.stages[4].hostRoundTrip);
  EXPECT_EQ(plan.fallbackCount(), 1);
  EXPECT_NE(plan.describe(*model)[4].find("no GPU kernel for Pow"), std::string::npos);
}

}  // namespace convscope
