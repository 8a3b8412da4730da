// Models that load but describe impossible or dangerous work: initializers of the wrong shape for
// their operator, shapes and FLOP counts that overflow 64 bits, tensor names used twice, and
// shapes whose activations or im2col workspace would not fit in memory. Each is refused with an
// Error naming the file, the node and the figures -- never read out of bounds, never wrapped
// around, never std::bad_alloc or a terminate() out of an OpenMP region.
#include <gtest/gtest.h>

#include <string>

#include <cstdlib>

#include <optional>
#include <utility>
#include <vector>

#include <cmath>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/picture_input.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/memory_limit.h"
#include "app/core/util/omp_exceptions.h"
#include "tests/core/model_builder.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

using testing::expectError;
using testing::ModelBuilder;
using testing::setInt;
using testing::setInts;

// x (N x 1 x 8 x 8) -> Conv 3x3 with 4 filters and the given bias -> y.
ModelBuilder convWithBias(const Shape& biasShape, const std::vector<float>& bias) {
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y", {-1, 4, 6, 6});
  b.weights("W", {4, 1, 3, 3});
  b.floats("B", biasShape, bias);
  b.node("Conv", {"x", "W", "B"}, {"y"}, "conv1");
  return b;
}

// ---------------------------------------------------------------------------------------------
// 1. Initializer shapes against what the operator needs.

TEST(InitializerShapes, ScalarConvBiasIsRefusedNamingTheNode) {
  // Read as bias[m] for m = 0..3, a scalar bias overflowed its one-float buffer.
  expectError([] { convWithBias({}, {0.5f}).load(); }, {"built.onnx: ", "conv1", "Conv", "bias", "[]", "4"});
}

TEST(InitializerShapes, ConvBiasOfOtherRanksOrLengthsIsRefused) {
  expectError([] { convWithBias({1}, {0.5f}).load(); }, {"conv1", "bias", "[1]"});
  expectError([] { convWithBias({4, 1}, {1, 2, 3, 4}).load(); }, {"conv1", "bias", "[4x1]"});
  expectError([] { convWithBias({1, 4}, {1, 2, 3, 4}).load(); }, {"conv1", "bias", "[1x4]"});
}

TEST(InitializerShapes, ValidConvBiasIsAddedPerChannel) {
  const auto model = convWithBias({4}, {1, 2, 3, 4}).load();
  Engine engine(model, "cpu-reference");
  const Tensor zeros({1, 1, 8, 8});
  const Tensor y = engine.evaluate({{"x", zeros}}).at("y");
  for (int m = 0; m < 4; ++m) EXPECT_FLOAT_EQ(y[m * 36 + 35], static_cast<float>(m + 1));
}

TEST(InitializerShapes, GemmOperandsOfTheWrongRankOrShapeAreRefused) {
  const auto gemm = [](const Shape& bShape, const Shape& cShape) {
    ModelBuilder b;
    b.input("x", {-1, 6}).output("y", {-1, 3});
    b.weights("B", bShape);
    b.weights("C", cShape);
    b.node("Gemm", {"x", "B", "C"}, {"y"}, "fc");
    return b;
  };
  EXPECT_NO_THROW(gemm({6, 3}, {3}).load());
  expectError([&] { gemm({18}, {3}).load(); }, {"fc", "Gemm", "rank 2"});
  expectError([&] { gemm({6, 3}, {2}).load(); }, {"fc", "C [2]"});
  expectError([&] { gemm({6, 3}, {3, 1}).load(); }, {"fc", "C [3x1]"});
  expectError([&] { gemm({6, 3}, {1, 1, 3}).load(); }, {"fc", "C [1x1x3]"});
}

TEST(InitializerShapes, EmptyTensorsAreRefused) {
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y");
  b.weights("W", {0, 1, 3, 3});
  b.node("Conv", {"x", "W"}, {"y"}, "conv0");
  expectError([&] { b.load(); }, {"conv0", "empty"});
}

// ---------------------------------------------------------------------------------------------
// 3. Shape and FLOP arithmetic in checked 64-bit math.

TEST(ShapeArithmetic, FlattenWhoseOutputOverflowsIsRefusedNamingTheNode) {
  // 2^24 x 2^24 x 2^24 elements per image: 2^72, beyond int64. It used to wrap to [1x0].
  ModelBuilder b;
  const int64_t big = int64_t{1} << 24;
  b.input("x", {-1, big, big, big}).output("y");
  b.node("Flatten", {"x"}, {"y"}, "flat");
  expectError([&] { b.load(); }, {"built.onnx: ", "flat", "Flatten", "overflow"});
}

TEST(ShapeArithmetic, GemmWhoseFlopCountOverflowsIsRefusedNamingTheNode) {
  // [2^24 x 2^24] times [2^24 x 2^24]: 2^73 FLOPs. It used to print 0.
  ModelBuilder b;
  const int64_t big = int64_t{1} << 24;
  b.input("a", {big, big}).input("b", {big, big}).output("y");
  b.node("Gemm", {"a", "b"}, {"y"}, "huge_fc");
  expectError([&] { b.load(); }, {"built.onnx: ", "huge_fc", "Gemm", "overflow"});
}

TEST(ShapeArithmetic, ConvWhoseFlopCountOverflowsIsRefusedNamingTheNode) {
  ModelBuilder b;
  const int64_t big = int64_t{1} << 22;
  b.input("x", {-1, 1, big, big}).input("w", {big, 1, 1, 1}).output("y");
  b.node("Conv", {"x", "w"}, {"y"}, "wide_conv");
  expectError([&] { b.load(); }, {"built.onnx: ", "wide_conv", "overflow"});
}

TEST(ShapeArithmetic, FlopCountsOfAValidModelAreExact) {
  // Conv 3x3, 4 filters on 8x8: 4*6*6 outputs of 9 multiply-adds, plus one bias add each.
  const auto model = convWithBias({4}, {1, 2, 3, 4}).load();
  const std::vector<LayerInfo> layers = model->layers();
  ASSERT_EQ(layers.size(), 1u);
  EXPECT_EQ(layers[0].flops, 4 * 6 * 6 * 9 * 2 + 4 * 6 * 6);
}

// ---------------------------------------------------------------------------------------------
// 5. Every tensor name is produced once.

TEST(TensorNames, NodeOutputReusingAGraphInputIsRefusedAtLoad) {
  ModelBuilder b;
  b.input("x", {-1, 4}).output("y");
  b.node("Relu", {"x"}, {"x"}, "relu_in_place");
  b.node("Relu", {"x"}, {"y"}, "relu2");
  expectError([&] { b.load(); }, {"built.onnx: ", "relu_in_place", "'x'", "graph input"});
}

TEST(TensorNames, NodeOutputReusingAnInitializerIsRefusedAtLoad) {
  ModelBuilder b;
  b.input("x", {-1, 4}).output("y");
  b.weights("W", {4});
  b.node("Relu", {"x"}, {"W"}, "shadow");
  b.node("Add", {"x", "W"}, {"y"}, "add");
  expectError([&] { b.load(); }, {"built.onnx: ", "shadow", "'W'", "initializer"});
}

TEST(TensorNames, NodeOutputReusingAnotherNodesOutputIsRefusedAtLoad) {
  ModelBuilder b;
  b.input("x", {-1, 4}).output("y");
  b.node("Relu", {"x"}, {"h"}, "first");
  b.node("Sigmoid", {"h"}, {"h"}, "second");
  b.node("Tanh", {"h"}, {"y"}, "third");
  expectError([&] { b.load(); }, {"built.onnx: ", "second", "'h'", "first"});
}

TEST(TensorNames, TwoInitializersOfOneNameAreRefused) {
  ModelBuilder b;
  b.input("x", {-1, 4}).output("y");
  b.weights("W", {4});
  b.weights("W", {4});
  b.node("Add", {"x", "W"}, {"y"}, "add");
  expectError([&] { b.load(); }, {"built.onnx: ", "initializer", "'W'", "twice"});
}

// ---------------------------------------------------------------------------------------------
// 6. Memory for a batch is estimated before anything is allocated.

// x (N x 1 x side x side) -> Conv (kernel x kernel, `filters`, pads) -> Flatten -> y.
std::shared_ptr<const Model> bigConvModel(int64_t side, int64_t kernel, int64_t pad, int64_t filters = 2) {
  ModelBuilder b;
  b.input("x", {-1, 1, side, side}).output("y");
  b.weights("W", {filters, 1, kernel, kernel});
  onnx::NodeProto& conv = b.node("Conv", {"x", "W"}, {"h"}, "/0/Conv");
  setInts(conv, "pads", {pad, pad, pad, pad});
  b.node("Flatten", {"h"}, {"y"}, "flat");
  return b.load("big.onnx");
}

ImageSet smallImages(int count) {
  std::vector<Picture> images(static_cast<size_t>(count), Picture{2, 2, {0.1f, 0.2f, 0.3f, 0.4f}});
  return ImageSet::fromImages("pictures", images, fashionMnistClassNames());
}

TEST(MemoryLimits, InputOf2To24SquaredIsRefusedBeforeTheBatchIsBuilt) {
  const auto model = bigConvModel(int64_t{1} << 24, 3, 0);
  Engine engine(model, "cpu-im2col-gemm");
  expectError([&] { classify(engine, smallImages(1), 0, 1); }, {"big.onnx: ", "needs", "TB", "limit"});
}

TEST(MemoryLimits, PadsOf2To20AreRefusedNamingTheLayerAndTheFigure) {
  const auto model = bigConvModel(28, 3, int64_t{1} << 20, 16);
  Engine engine(model, "cpu-reference");
  expectError([&] { classify(engine, smallImages(1), 0, 1); },
              {"big.onnx: ", "layer '/0/Conv' (Conv)", "needs", "GB", "batch 1", "limit"});
}

// The limit these tests refuse against, whatever this machine's memory: by default it is half of
// it, and 63 GB of im2col fits under half of a 128 GB GPU machine's memory.
class ScopedMemoryLimit {
 public:
  explicit ScopedMemoryLimit(const char* megabytes) {
    if (const char* old = std::getenv("CONVSCOPE_MEMORY_LIMIT_MB")) previous_ = old;
    setenv("CONVSCOPE_MEMORY_LIMIT_MB", megabytes, 1);
  }
  ~ScopedMemoryLimit() {
    if (previous_)
      setenv("CONVSCOPE_MEMORY_LIMIT_MB", previous_->c_str(), 1);
    else
      unsetenv("CONVSCOPE_MEMORY_LIMIT_MB");
  }

 private:
  std::optional<std::string> previous_;
};

// In a Slurm job the default limit is half the job's allocation, not half the node's memory.
TEST(MemoryLimits, InASlurmJobTheDefaultIsHalfItsAllocation) {
  const auto scoped = [](const char* name, const char* value) {
    std::optional<std::string> previous;
    if (const char* old = std::getenv(name)) previous = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
    return std::pair<std::string, std::optional<std::string>>(name, previous);
  };
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  for (const char* name :
       {"CONVSCOPE_MEMORY_LIMIT_MB", "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU", "SLURM_CPUS_ON_NODE"})
    saved.push_back(scoped(name, nullptr));
  const int64_t machine = memoryLimit().bytes;
  setenv("SLURM_MEM_PER_NODE", "16384", 1);  // --mem=16G
  EXPECT_EQ(memoryLimit().bytes, int64_t{8192} * 1048576);
  EXPECT_NE(memoryLimit().origin.find("Slurm job's memory (16384 MiB)"), std::string::npos) << memoryLimit().origin;
  unsetenv("SLURM_MEM_PER_NODE");
  setenv("SLURM_MEM_PER_CPU", "4096", 1);  // --mem-per-cpu=4G, 3 CPUs
  setenv("SLURM_CPUS_ON_NODE", "3", 1);
  EXPECT_EQ(memoryLimit().bytes, int64_t{6144} * 1048576);
  setenv("CONVSCOPE_MEMORY_LIMIT_MB", "1500", 1);  // said outright: it wins
  EXPECT_EQ(memoryLimit().bytes, 1'500'000'000);
  for (const char* name : {"CONVSCOPE_MEMORY_LIMIT_MB", "SLURM_MEM_PER_CPU", "SLURM_CPUS_ON_NODE"}) unsetenv(name);
  EXPECT_EQ(memoryLimit().bytes, machine);
  for (const auto& [name, value] : saved)
    if (value) setenv(name.c_str(), value->c_str(), 1);
}

TEST(MemoryLimits, PictureForAnInputOf2To24SquaredIsRefusedBeforeTheResize) {
  // The CLI's --images and the window's pictures went through resizedToFit before any estimate:
  // 2^48 floats, std::bad_alloc. Now the model's file, the layer and the figures are named.
  const auto model = bigConvModel(int64_t{1} << 24, 3, 0);
  Engine engine(model, "cpu-im2col-gemm");
  const Picture picture{2, 2, {0.1f, 0.2f, 0.3f, 0.4f}};
  expectError([&] { pictureAtModelInput(engine, picture); }, {"big.onnx: ", "needs", "TB", "limit"});
  expectError([&] { pictureAtModelInput(engine, picture, true); }, {"big.onnx: ", "needs", "TB", "limit"});
  expectError([&] { checkPicturesFit(engine, 1); }, {"big.onnx: ", "needs", "TB", "limit"});
}

TEST(MemoryLimits, PicturesHeldTogetherAreCountedAgainstTheLimit) {
  // 1000 x 1000 floats: 4 MB a picture. One inference (input, two 998^2 conv outputs, the
  // flattened copy) needs about 20 MB and fits 100 MB; 25 pictures (100 MB) fit, 26 do not.
  const ScopedMemoryLimit limit("100");
  const auto model = bigConvModel(1000, 3, 0);
  Engine engine(model, "cpu-reference");
  EXPECT_NO_THROW(checkPicturesFit(engine, 25));
  expectError([&] { checkPicturesFit(engine, 26); }, {"big.onnx: ", "26 pictures", "1000 x 1000", "104.0 MB",
                                                      "the limit is 100.0 MB", "CONVSCOPE_MEMORY_LIMIT_MB"});
}

TEST(MemoryLimits, AnEngineThatRanABatchRefusesItAgainUnderALowerLimit) {
  // infer() keeps the estimate of the last shapes that passed; the limit is read on every call.
  const auto model = bigConvModel(500, 3, 0);
  Engine engine(model, "cpu-reference");
  const int64_t one = engine.estimateMemory(1).bytes, two = engine.estimateMemory(2).bytes;
  ASSERT_GT(one, 2'000'000);
  ASSERT_GT(two, one + 2'000'000);
  const auto megabytes = [](int64_t bytes) { return std::to_string(bytes / 1'000'000); };
  const Tensor picture({1, 1, 500, 500}, 0.25f), pair({2, 1, 500, 500}, 0.25f);
  {
    const ScopedMemoryLimit limit(megabytes(2 * two).c_str());
    EXPECT_NO_THROW(engine.infer(picture));
    EXPECT_NO_THROW(engine.infer(picture));  // the kept estimate
  }
  {
    const ScopedMemoryLimit limit(megabytes(one / 2).c_str());
    expectError([&] { engine.infer(picture); },
                {"big.onnx: ", "layer '", "needs", "batch 1", "the limit is", "CONVSCOPE_MEMORY_LIMIT_MB"});
    expectError([&] { engine.checkMemory(1); }, {"big.onnx: ", "batch 1", "the limit is"});
  }
  {
    const ScopedMemoryLimit limit(megabytes((one + two) / 2).c_str());  // one picture fits, two do not
    const InferenceResult again = engine.infer(picture);
    EXPECT_EQ(again.probabilities.shape(), (Shape{1, 2 * 498 * 498}));
    // Each batch size is checked for its own shape, not the one checked last.
    expectError([&] { engine.infer(pair); }, {"big.onnx: ", "batch 2", "the limit is"});
    EXPECT_NO_THROW(engine.infer(picture));
  }
  {
    const ScopedMemoryLimit limit(megabytes(2 * two).c_str());
    EXPECT_NO_THROW(engine.infer(pair));
    EXPECT_NO_THROW(engine.infer(picture));
  }
}

TEST(MemoryLimits, PictureAtModelInputIsTheAspectKeepingResizeOrThePictureItself) {
  const auto model = bigConvModel(6, 3, 0);
  Engine engine(model, "cpu-reference");
  Picture wide{2, 4, {}};
  for (int i = 0; i < 8; ++i) wide.pixels.push_back(0.1f * static_cast<float>(i));
  const Picture sized = pictureAtModelInput(engine, wide);
  const Picture expected = resizedToFit(wide, 6, 6);
  EXPECT_EQ(sized.height, 6);
  EXPECT_EQ(sized.width, 6);
  EXPECT_EQ(sized.pixels, expected.pixels);
  Picture exact{6, 6, std::vector<float>(36)};
  for (int i = 0; i < 36; ++i) exact.pixels[static_cast<size_t>(i)] = static_cast<float>(i) / 36.0f;
  EXPECT_EQ(pictureAtModelInput(engine, exact).pixels, exact.pixels);
}

TEST(MemoryLimits, Im2colWorkspaceOfA64By64KernelWithPads1000IsRefused) {
  // The output is small (2 x 1965 x 1965 floats); the unrolled input is not: 4096 x 1965^2 floats.
  const ScopedMemoryLimit limit("16000");
  const auto model = bigConvModel(28, 64, 1000);
  Engine engine(model, "cpu-im2col-gemm");
  expectError([&] { classify(engine, smallImages(1), 0, 1); },
              {"big.onnx: ", "layer '/0/Conv' (Conv)", "im2col", "GB", "limit"});
}

TEST(MemoryLimits, Im2colBackendRefusesAnImpossibleWorkspaceWithoutTerminating) {
  // Called directly, outside the engine: the workspace must be allocated (or refused) before the
  // OpenMP region, since an exception escaping one calls std::terminate().
  ConvProblem p;
  p.batch = 1;
  p.inChannels = 1;
  p.inHeight = p.inWidth = 28;
  p.outChannels = 2;
  p.kernelHeight = p.kernelWidth = 64;
  p.padTop = p.padLeft = p.padBottom = p.padRight = 1000;
  std::vector<float> input(28 * 28), weights(2 * 64 * 64), output(1);
  const ScopedMemoryLimit limit("16000");
  auto backend = createConvBackend("cpu-im2col-gemm");
  expectError([&] { backend->forward(p, input.data(), weights.data(), output.data()); }, {"im2col", "GB"});
}

TEST(MemoryLimits, OmpExceptionsKeepsTheFirstExceptionForAfterTheRegion) {
  OmpExceptions errors;
  int ran = 0;
  for (int i = 0; i < 8; ++i)  // the body of a parallel loop
    errors.run([&] {
      ++ran;
      if (i >= 3) throw Error("failed at " + std::to_string(i));
    });
  EXPECT_EQ(ran, 8);  // nothing escaped the body
  expectError([&] { errors.rethrow(); }, {"failed at 3"});
  OmpExceptions clean;
  clean.run([] {});
  EXPECT_NO_THROW(clean.rethrow());
}

TEST(MemoryLimits, BatchThatDoesNotFitSaysWhichBatchWould) {
  // 512 x 512 input, 64 filters of 3x3: about 67 MB of conv output per image, so a batch of
  // 10,000 needs some 700 GB and is refused, naming a batch that fits.
  const auto model = bigConvModel(512, 3, 1, 64);
  Engine engine(model, "cpu-reference");
  try {
    engine.evaluate({{"x", Tensor({1, 1, 512, 512})}});  // one image fits
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  expectError([&] { engine.checkMemory(10000); }, {"big.onnx: ", "batch 10000", "at most batch"});
}

TEST(MemoryLimits, ClassifyRunsInSmallerChunksWhenItsChunkDoesNotFit) {
  const auto model = bigConvModel(512, 3, 1, 64);
  Engine engine(model, "cpu-reference");
  const int fits = engine.largestBatchThatFits();
  ASSERT_GE(fits, 1);
  ASSERT_LT(fits, 10000);
  // A chunk far larger than what fits still runs (in smaller chunks), image for image.
  const ClassificationRun run = classify(engine, smallImages(3), 0, 3, 100000);
  EXPECT_EQ(run.images.size(), 3u);
}

TEST(MemoryLimits, TheShippedModelsStillRunBatch10000) {
  for (const char* name : {"course-high", "course-low", "lenet5"}) {
    const auto model = loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/" + name + ".onnx");
    for (const char* variant : {"cpu-reference", "cpu-im2col-gemm"}) {
      Engine engine(model, variant);
      EXPECT_NO_THROW(engine.checkMemory(10000)) << name << " " << variant;
      EXPECT_GE(engine.largestBatchThatFits(), 10000) << name << " " << variant;
    }
  }
}

TEST(MemoryLimits, EstimateOfASmallModelMatchesItsTensors) {
  // x: b x 1 x 8 x 8; conv out: b x 4 x 6 x 6; flatten out: b x 144. Peak at the Flatten, where
  // the input, the conv output and its copy are alive (the Softmax of the output comes after).
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y");
  b.weights("W", {4, 1, 3, 3});
  b.node("Conv", {"x", "W"}, {"h"}, "conv");
  b.node("Flatten", {"h"}, {"y"}, "flat");
  Engine engine(b.load(), "cpu-reference");
  const int64_t batch = 10;
  const MemoryEstimate estimate = engine.estimateMemory(batch);
  EXPECT_EQ(estimate.bytes, 4 * batch * (64 + 144 + 144));
  EXPECT_EQ(estimate.node, "flat");
}

}  // namespace
}  // namespace convscope
