// Step 13, the whole network in one kernel, against the CPU reference engine: odd built chains
// (padding, strides, every activation, both poolings, layers without bias), the shipped models
// from floats and from 8-bit images, and networks it must decline with the reason. Both of its
// paths -- one block per few images, and the grid-wide cooperative launch for small batches --
// are forced in turn through the CONVSCOPE_WHOLE_NETWORK_PATH test hook and checked at the same
// batch sizes, with poisoned outputs; the kernel each run launched is read from the device's
// trace, so that a test of one path cannot pass on the other. PyTorch's 10,000 predictions for
// every shipped model are checked by test_gpu_engine, which runs every GPU row. Skips, saying
// why, where no GPU can be used.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <utility>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/chain_network.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/plan.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"
#include "tests/core/chain_models.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

const std::string kModels = CONVSCOPE_MODELS_DIR;
constexpr const char* kWholeNetwork = "gpu-whole-network";
constexpr const char* kPathVariable = "CONVSCOPE_WHOLE_NETWORK_PATH";
constexpr const char* kBlocksKernel = "wholeNetworkKernel";
constexpr const char* kGridKernel = "wholeNetworkGridKernel";

// Sets the path test hook (nullptr: unset, the batch size chooses) while it lives; then restores it.
class ForcedPath {
 public:
  explicit ForcedPath(const char* path) {
    if (const char* value = std::getenv(kPathVariable)) previous_ = value;
    set(path);
  }
  ~ForcedPath() { set(previous_ ? previous_->c_str() : nullptr); }
  ForcedPath(const ForcedPath&) = delete;
  ForcedPath& operator=(const ForcedPath&) = delete;

 private:
  static void set(const char* path) {
    if (path)
      setenv(kPathVariable, path, 1);
    else
      unsetenv(kPathVariable);
  }
  std::optional<std::string> previous_;
};

struct PathCase {
  const char* path;    // the hook's value
  const char* kernel;  // the kernel it launches
};
constexpr PathCase kPaths[] = {{"blocks", kBlocksKernel}, {"grid", kGridKernel}};

class WholeNetwork : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string reason = findConvVariant(kWholeNetwork).unavailableReason(); !reason.empty())
      GPU_TEST_SKIP() << kWholeNetwork << " cannot run here: " << reason;
  }
};

Tensor randomImages(const Shape& shape, unsigned seed) {
  const std::vector<float> values = testing::randomValues(static_cast<size_t>(elementCount(shape)), seed, 1.5f);
  Tensor t(shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

// Relative to the largest probability: FP32 sums in another order than the reference's.
void expectClose(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << "element " << i;
    EXPECT_NEAR(got[i], want[i], 2e-6) << "element " << i;
  }
}

TEST_F(WholeNetwork, AnOddChainEqualsTheReferenceForEveryBatchSize) {
  const auto model = testing::oddChainModel();
  Engine whole(model, kWholeNetwork);
  Engine reference(model, "cpu-reference");
  ASSERT_TRUE(whole.plan(5).stages.front().wholeNetwork) << whole.plan(5).wholeNetworkDeclined;
  // 1, 3 and 7 images: a block's four slots partly filled, and a second block.
  for (const int batch : {1, 3, 7, 61}) {
    SCOPED_TRACE(batch);
    const Tensor images = randomImages({batch, 1, 13, 17}, 100u + static_cast<unsigned>(batch));
    const InferenceResult got = whole.infer(images);
    expectClose(got.probabilities, reference.infer(images).probabilities);
    ASSERT_EQ(got.convTimes.size(), 1u) << "one kernel, one time";
    EXPECT_GT(got.convTimes[0].seconds, 0.0);
    EXPECT_EQ(got.convTimes[0].fusedNodes.size(), model->nodes.size() - 1);
  }
}

TEST_F(WholeNetwork, TheShippedModelsFromFloatsAndFromBytesEqualTheReference) {
  const ImageSet set = ImageSet::loadIdxFolder(defaultDataFolder());
  for (const std::string name : {"course-high", "course-low", "lenet5"}) {
    SCOPED_TRACE(name);
    const auto model = loadOnnxModel(kModels + "/" + name + ".onnx");
    Engine whole(model, kWholeNetwork);
    Engine reference(model, "cpu-reference");
    const Tensor batch = set.batch(0, 257, model->inputHeight(), model->inputWidth());
    const Tensor want = reference.infer(batch).probabilities;
    expectClose(whole.infer(batch).probabilities, want);
    // The kernel resizes the 8-bit images as it reads them: the same input bits, the same result.
    const InferenceResult bytes = whole.inferBytes({set.bytes(0), 257, set.height(), set.width()});
    expectClose(bytes.probabilities, want);
    EXPECT_EQ(bytes.convTimes.size(), 1u);
  }
}

// The names of the kernels `engine` launched to infer `images`, from the device's trace.
std::vector<std::string> kernelsLaunched(Engine& engine, const Tensor& images, InferenceResult* result) {
  Device* device = engine.device();
  EXPECT_NE(device, nullptr);
  if (!device) return {};
  device->collectTrace();  // empties it
  device->setTracing(true);
  *result = engine.infer(images);
  device->setTracing(false);
  std::vector<std::string> names;
  for (const Device::TracedTime& t : device->collectTrace()) names.push_back(t.name);
  return names;
}

bool launched(const std::vector<std::string>& kernels, const std::string& kernel) {
  return std::find(kernels.begin(), kernels.end(), kernel) != kernels.end();
}

// Probabilities from scores, in double: the softmax the engine applies to a model without one.
Tensor softmaxOf(const std::vector<float>& scores, int images, int classes) {
  Tensor out({images, classes});
  for (int n = 0; n < images; ++n) {
    const float* row = scores.data() + static_cast<size_t>(n) * classes;
    const double peak = *std::max_element(row, row + classes);
    double sum = 0.0;
    for (int j = 0; j < classes; ++j) sum += std::exp(double{row[j]} - peak);
    for (int j = 0; j < classes; ++j)
      out[int64_t{n} * classes + j] = static_cast<float>(std::exp(double{row[j]} - peak) / sum);
  }
  return out;
}

TEST_F(WholeNetwork, BothPathsEqualTheReferenceOnOddChainsAtEveryBatchSize) {
  for (const auto& model : {testing::oddChainModel(), testing::otherChainModel()}) {
    SCOPED_TRACE(model->name);
    const int height = model->inputHeight(), width = model->inputWidth();
    Engine reference(model, "cpu-reference");
    for (const PathCase& path : kPaths) {
      SCOPED_TRACE(path.path);
      const ForcedPath forced(path.path);
      Engine whole(model, kWholeNetwork);  // a fresh engine: nothing recorded with the other path
      ASSERT_TRUE(whole.plan(5).stages.front().wholeNetwork) << whole.plan(5).wholeNetworkDeclined;
      // 1 and 3: part of one block of images, or a sliver of the grid (a fully connected warp's 4
      // images partly filled); 37 and 100: several blocks of images, and for the grid more items
      // than warps. The lanes per conv item (8 and 16 here, the taps allow no more) reach 32, 2
      // and 1 with the shipped models at batch 1, 100 and 257, below and in the test above.
      for (const int batch : {1, 3, 37, 100}) {
        SCOPED_TRACE(batch);
        const Tensor images = randomImages({batch, 1, height, width}, 300u + static_cast<unsigned>(batch));
        InferenceResult got;
        const std::vector<std::string> kernels = kernelsLaunched(whole, images, &got);
        EXPECT_TRUE(launched(kernels, path.kernel)) << "the forced path did not run";
        EXPECT_FALSE(launched(kernels, path.kernel == std::string(kGridKernel) ? kBlocksKernel : kGridKernel));
        expectClose(got.probabilities, reference.infer(images).probabilities);
      }
    }
  }
}

// The kernel run directly into an output poisoned with NaN: an element it never writes fails,
// which a reused engine buffer holding an earlier run's right answer could hide.
TEST_F(WholeNetwork, BothPathsWriteEveryOutputOfAPoisonedBuffer) {
  const ConvVariant& variant = findConvVariant(kWholeNetwork);
  for (const auto& model : {testing::oddChainModel(), testing::otherChainModel()}) {
    SCOPED_TRACE(model->name);
    std::string whyNot;
    const std::optional<ChainNetwork> network = matchChainNetwork(*model, &whyNot);
    ASSERT_TRUE(network) << whyNot;
    Engine reference(model, "cpu-reference");
    auto device = createGpuDevice();
    // The layers' weights and biases on the device, conv layers first, as NetworkRun wants them
    // (a DeviceTensor moved within the vector keeps its device memory).
    std::vector<DeviceTensor> onDevice;
    NetworkRun run;
    const auto add = [&](const std::string& weights, const std::string& bias) {
      const Tensor& w = model->weights.at(weights);
      onDevice.push_back(device->upload(w.data(), w.shape()));
      run.weights.push_back(onDevice.back().data());
      if (bias.empty()) {
        run.biases.push_back(nullptr);
        return;
      }
      const Tensor& b = model->weights.at(bias);
      onDevice.push_back(device->upload(b.data(), b.shape()));
      run.biases.push_back(onDevice.back().data());
    };
    for (const ChainConv& conv : network->convs) add(conv.weights, conv.bias);
    for (const ChainDense& dense : network->dense) add(dense.weights, dense.bias);
    const int classes = network->classes();
    for (const PathCase& path : kPaths) {
      SCOPED_TRACE(path.path);
      const ForcedPath forced(path.path);
      for (const int batch : {1, 3, 37, 100}) {
        SCOPED_TRACE(batch);
        const Tensor images =
            randomImages({batch, 1, network->inputHeight, network->inputWidth}, 500u + static_cast<unsigned>(batch));
        const DeviceTensor input = device->upload(images.data(), images.shape());
        std::vector<float> poison(static_cast<size_t>(batch) * classes, NAN);
        const DeviceTensor output = device->upload(poison.data(), {batch, classes});
        run.images = batch;
        run.input = input.data();
        run.output = output.data();
        variant.runNetwork(*device, *network, run);
        std::vector<float> scores(poison.size());
        device->download(output, scores.data());
        const Tensor want = reference.infer(images).probabilities;
        if (network->softmax) {
          Tensor got({batch, classes});
          std::copy(scores.begin(), scores.end(), got.data());
          expectClose(got, want);
        } else {
          expectClose(softmaxOf(scores, batch, classes), want);
        }
      }
    }
  }
}

TEST_F(WholeNetwork, TheShippedModelsFromBytesEqualTheReferenceOnBothPathsAndWhenReplayed) {
  const ImageSet set = ImageSet::loadIdxFolder(defaultDataFolder());
  constexpr int kBatches[] = {1, 100};
  // Two sets of images per batch size, other than the other tests': the recording is made with
  // the first and replayed on both, so a replay that kept the recorded images fails.
  const auto firstImage = [](int batch, int set) { return 1000 + 200 * set + batch; };
  for (const std::string name : {"course-high", "course-low", "lenet5"}) {
    SCOPED_TRACE(name);
    const auto model = loadOnnxModel(kModels + "/" + name + ".onnx");
    Engine reference(model, "cpu-reference");
    std::map<std::pair<int, int>, Tensor> wants;  // (batch, set): the reference's probabilities
    for (const int batch : kBatches)
      for (const int images : {0, 1})
        wants[{batch, images}] =
            reference.infer(set.batch(firstImage(batch, images), batch, model->inputHeight(), model->inputWidth()))
                .probabilities;
    // nullptr: the batch size chooses, as a user gets it.
    for (const char* path : {static_cast<const char*>(nullptr), "blocks", "grid"}) {
      SCOPED_TRACE(path ? path : "chosen by the batch size");
      const ForcedPath forced(path);
      Engine whole(model, kWholeNetwork);
      for (const int batch : kBatches) {
        SCOPED_TRACE(batch);
        const auto bytesOf = [&](int images) {
          return ByteImages{set.bytes(firstImage(batch, images)), batch, set.height(), set.width()};
        };
        const InferenceResult ran = whole.inferBytes(bytesOf(0));  // runs, then records
        EXPECT_FALSE(ran.replayed);
        expectClose(ran.probabilities, wants[{batch, 0}]);
        for (const int images : {0, 1}) {
          SCOPED_TRACE(images);
          const InferenceResult replayed = whole.inferBytes(bytesOf(images));
          EXPECT_TRUE(replayed.replayed) << "recording declined: " << whole.recordingDeclined();
          expectClose(replayed.probabilities, wants[{batch, images}]);
        }
      }
    }
  }
}

// Unforced, the batch size chooses: the grid-wide path while the per-image blocks would be fewer
// than the multiprocessors (so the graphs inferBytes records at batch 1 and 100 launch it), the
// per-image blocks from there on; the mapping view's geometry says the same.
TEST_F(WholeNetwork, TheBatchSizeChoosesThePath) {
  const ForcedPath unforced(nullptr);
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");
  Engine whole(model, kWholeNetwork);
  Engine reference(model, "cpu-reference");
  const ConvVariant& variant = findConvVariant(kWholeNetwork);
  std::string whyNot;
  const std::optional<ChainNetwork> network = matchChainNetwork(*model, &whyNot);
  ASSERT_TRUE(network) << whyNot;
  const int multiprocessors = gpuInfo().multiprocessors;
  ASSERT_GT(multiprocessors, 1);
  // The per-image-block path takes 4 images a block: it fills every multiprocessor from one image
  // past 4 x (multiprocessors - 1) on.
  const int largestGridBatch = 4 * (multiprocessors - 1);
  for (const int batch : {1, 100, largestGridBatch, largestGridBatch + 1}) {
    SCOPED_TRACE(batch);
    const char* expected = batch <= largestGridBatch ? kGridKernel : kBlocksKernel;
    const Tensor images =
        randomImages({batch, 1, model->inputHeight(), model->inputWidth()}, 700u + static_cast<unsigned>(batch));
    InferenceResult got;
    EXPECT_TRUE(launched(kernelsLaunched(whole, images, &got), expected));
    expectClose(got.probabilities, reference.infer(images).probabilities);
    ConvProblem problem = network->convs.front().problem;
    problem.batch = batch;
    const std::vector<KernelLaunchGeometry> geometry = variant.launchGeometry(problem);
    ASSERT_FALSE(geometry.empty());
    EXPECT_EQ(geometry.front().kernel, expected) << geometry.front().mapping;
  }
}

TEST_F(WholeNetwork, AnUnknownPathIsAnErrorNamingTheVariable) {
  const ForcedPath wrong("both");
  Engine whole(testing::oddChainModel(), kWholeNetwork);
  try {
    whole.infer(randomImages({2, 1, 13, 17}, 3));
    FAIL() << "ran with CONVSCOPE_WHOLE_NETWORK_PATH=both";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(kPathVariable), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("both"), std::string::npos) << e.what();
  }
}

TEST_F(WholeNetwork, ANetworkTooLargeForSharedMemoryIsDeclinedWithTheFigures) {
  // 64 channels of 60 x 60 maps: 900 KB of one image's maps, more than any block's shared memory.
  testing::ModelBuilder b;
  b.input("x", {-1, 1, 62, 62}).output("y", {-1, 2});
  b.floats("W", {64, 1, 3, 3}, testing::randomValues(576, 5, 0.5f));
  b.floats("D", {2, 64 * 60 * 60}, testing::randomValues(2 * 64 * 3600, 6, 0.01f));
  b.node("Conv", {"x", "W"}, {"c"}, "conv");
  b.node("Flatten", {"c"}, {"f"}, "flatten");
  testing::setInt(b.node("Gemm", {"f", "D"}, {"y"}, "dense"), "transB", 1);
  const auto model = b.load("large.onnx");
  Engine whole(model, kWholeNetwork);
  const Plan plan = whole.plan(2);
  EXPECT_FALSE(plan.stages.front().wholeNetwork);
  EXPECT_NE(plan.wholeNetworkDeclined.find("shared memory"), std::string::npos) << plan.wholeNetworkDeclined;
  // The layers still run, on the earlier steps the plan names.
  Engine reference(model, "cpu-reference");
  const Tensor images = randomImages({2, 1, 62, 62}, 9);
  const InferenceResult got = whole.infer(images);
  const InferenceResult want = reference.infer(images);
  for (int64_t i = 0; i < got.probabilities.size(); ++i) EXPECT_NEAR(got.probabilities[i], want.probabilities[i], 1e-4);
}

}  // namespace
}  // namespace convscope
