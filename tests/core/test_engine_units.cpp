// The engine's parts, each on its own: the memory estimate against a count by hand, the plan
// cache's hits and misses, the walk over a plan against a convolution in double, a recording on a
// fake Device that fails at each step, and the one host softmax against a double-precision
// computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/core/device/device.h"
#include "app/core/engine/device_recording.h"
#include "app/core/engine/evaluation.h"
#include "app/core/engine/memory_estimate.h"
#include "app/core/engine/plan.h"
#include "app/core/engine/plan_cache.h"
#include "app/core/util/error.h"
#include "app/core/util/host_softmax.h"
#include "tests/core/model_builder.h"

namespace convscope {
namespace {

using testing::ModelBuilder;

// x [N,1,7,5] -> Conv 3x3, 3 channels, no padding -> c [N,3,5,3] -> Relu -> y [N,3,5,3]: odd sizes,
// so no figure below is a power of two by accident.
std::shared_ptr<const Model> convThenRelu() {
  ModelBuilder b;
  b.input("x", {-1, 1, 7, 5}).output("y", {-1, 3, 5, 3});
  b.weights("W", {3, 1, 3, 3});
  b.node("Conv", {"x", "W"}, {"c"}, "conv");
  b.node("Relu", {"c"}, {"y"}, "relu");
  return b.load();
}

constexpr int64_t kFloat = sizeof(float);
constexpr int64_t kBatch = 3;
constexpr int64_t kInputBytes = kBatch * 1 * 7 * 5 * kFloat;   // 420
constexpr int64_t kOutputBytes = kBatch * 3 * 5 * 3 * kFloat;  // 540, the conv's and the relu's
constexpr int64_t kWorkspace = 1001;

struct EstimateCase {
  std::shared_ptr<const Model> model = convThenRelu();
  std::map<std::string, Shape> shapes{{"x", {kBatch, 1, 7, 5}}};
  std::vector<ConvProblem> asked;  // what the estimate asked the workspace for
  HostWorkspace workspace = [this](const std::string& variant, const ConvProblem& problem) {
    EXPECT_EQ(variant, "cpu-reference");
    asked.push_back(problem);
    return kWorkspace;
  };
  MemoryEstimate estimate(bool capture, int64_t limit = INT64_MAX) {
    const Plan plan = makePlan(*model, "cpu-reference", shapes, /*fuse=*/false);
    return estimatePeakMemory(*model, plan, shapes, capture, workspace, limit);
  }
};

TEST(MemoryEstimate, PeaksAtTheConvWithItsWorkspaceCountedByHand) {
  EstimateCase c;
  const MemoryEstimate peak = c.estimate(false);
  // At the conv: the input (the caller's, never freed), the conv's output and its workspace.
  // At the relu: the input, the conv output and the relu output = 420 + 540 + 540 = 1500, less.
  EXPECT_EQ(peak.bytes, kInputBytes + kOutputBytes + kWorkspace);
  EXPECT_EQ(peak.node, "conv");
  EXPECT_EQ(peak.opType, "Conv");
  EXPECT_EQ(peak.workspaceBytes, kWorkspace);
  ASSERT_EQ(c.asked.size(), 1u);
  EXPECT_EQ(c.asked[0].batch, kBatch);
  EXPECT_EQ(c.asked[0].inHeight, 7);
  EXPECT_EQ(c.asked[0].inWidth, 5);
  EXPECT_EQ(c.asked[0].outChannels, 3);
}

TEST(MemoryEstimate, CapturingKeepsACopyOfTheInputAndOfEveryOutput) {
  EstimateCase c;
  const MemoryEstimate peak = c.estimate(true);
  // Conv: 2*420 + 2*540 + 1001 = 2921. Relu: 2*420 + 2*540 (kept) + 2*540 = 3000; freeing the
  // conv's output after the relu gives back only the live copy, so the end is 3000 - 540 + 540.
  EXPECT_EQ(peak.bytes, 2 * kInputBytes + 4 * kOutputBytes);
  EXPECT_EQ(peak.node, "relu");
  EXPECT_EQ(peak.workspaceBytes, 0);
}

TEST(MemoryEstimate, StopsAtTheFirstStageOverTheLimit) {
  EstimateCase c;
  // Capturing, the conv needs 2921 bytes: a limit just below stops there, not at the later peak.
  const MemoryEstimate atConv = c.estimate(true, 2 * kInputBytes + 2 * kOutputBytes + kWorkspace - 1);
  EXPECT_EQ(atConv.node, "conv");
  EXPECT_EQ(atConv.bytes, 2 * kInputBytes + 2 * kOutputBytes + kWorkspace);
}

TEST(MemoryEstimate, SaturatesInsteadOfOverflowing) {
  EstimateCase c;
  c.workspace = [](const std::string&, const ConvProblem&) { return INT64_MAX; };
  EXPECT_EQ(c.estimate(false).bytes, INT64_MAX);
}

TEST(MemoryEstimate, LargestBatchWhereFindsTheBoundary) {
  for (const int64_t boundary : {int64_t{1}, int64_t{2}, int64_t{777}, int64_t{1} << 20, (int64_t{1} << 30) - 1}) {
    int calls = 0;
    const int64_t found = largestBatchWhere([&](int64_t batch) {
      ++calls;
      return batch <= boundary;
    });
    EXPECT_EQ(found, boundary);
    EXPECT_LT(calls, 64) << "doubling and bisecting, not counting up";
  }
  EXPECT_EQ(largestBatchWhere([](int64_t) { return false; }), 0);
  EXPECT_EQ(largestBatchWhere([](int64_t) { return true; }), int64_t{1} << 30);
}

TEST(PlanCache, PlansOnceForRepeatedShapesAndAgainForOthers) {
  const auto model = convThenRelu();
  PlanCache cache(*model, "cpu-reference");
  const std::map<std::string, Shape> three{{"x", {3, 1, 7, 5}}}, four{{"x", {4, 1, 7, 5}}};
  const Plan& first = cache.planFor(three, false);
  EXPECT_EQ(cache.plansMade(), 1);
  EXPECT_EQ(first.stages.size(), makePlan(*model, "cpu-reference", three, false).stages.size());
  EXPECT_EQ(&cache.planFor(three, false), &first) << "the same shapes are a hit";
  EXPECT_EQ(cache.plansMade(), 1);
  cache.planFor(three, true);  // the other fusion is another plan
  EXPECT_EQ(cache.plansMade(), 2);
  cache.planFor(four, true);
  EXPECT_EQ(cache.plansMade(), 3);
  cache.planFor(four, true);
  EXPECT_EQ(cache.plansMade(), 3);
  cache.planFor(three, false);  // only the last plan is kept
  EXPECT_EQ(cache.plansMade(), 4);
}

TEST(PlanCache, APlanThatFailsLeavesTheLastOne) {
  const auto model = convThenRelu();
  PlanCache cache(*model, "cpu-reference");
  const std::map<std::string, Shape> three{{"x", {3, 1, 7, 5}}};
  cache.planFor(three, false);
  EXPECT_THROW(cache.planFor({{"x", {3, 1, 2, 2}}}, false), Error);  // smaller than the kernel
  cache.planFor(three, false);
  EXPECT_EQ(cache.plansMade(), 1);
}

// The conv (3x3, valid) and relu of convThenRelu(), in double, from the builder's weights.
std::vector<double> convThenReluInDouble(const Model& model, const Tensor& x) {
  const Tensor& w = model.weights.at("W");
  const int64_t n = x.dim(0), h = 7, wd = 5, oh = 5, ow = 3, channels = 3;
  std::vector<double> y(static_cast<size_t>(n * channels * oh * ow));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t m = 0; m < channels; ++m)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t c = 0; c < ow; ++c) {
          double sum = 0.0;
          for (int64_t kr = 0; kr < 3; ++kr)
            for (int64_t kc = 0; kc < 3; ++kc)
              sum += double{x.data()[(i * h + r + kr) * wd + c + kc]} * w.data()[(m * 3 + kr) * 3 + kc];
          y[static_cast<size_t>(((i * channels + m) * oh + r) * ow + c)] = std::max(sum, 0.0);
        }
  return y;
}

TEST(Evaluation, OneWalkOnTheHostComputesTheGraphAndFreesWhatNoOneReadsAgain) {
  const auto model = convThenRelu();
  Tensor x({kBatch, 1, 7, 5});
  for (int64_t k = 0; k < x.size(); ++k) x.data()[k] = static_cast<float>((k * 7) % 11) - 5.0f;
  for (const bool capture : {false, true}) {
    const Plan plan = makePlan(*model, "cpu-reference", {{"x", x.shape()}}, /*fuse=*/false);
    HostBackends backends;
    HostEvaluation values(*model, backends);
    values.bindInput("x", x);
    std::vector<ConvLayerTime> stageTimes, convTimes;
    std::vector<LayerOutput> captured;
    runPlan(*model, plan, kBatch, values, stageTimes, capture ? &captured : nullptr);
    EXPECT_FALSE(values.holds("c")) << "the conv's output is freed after the relu, its last reader";
    EXPECT_TRUE(values.holds("x")) << "an input is the caller's";
    const std::map<std::string, Tensor> outputs = finishPlan(*model, values, stageTimes, &convTimes, nullptr);
    ASSERT_EQ(convTimes.size(), 1u);
    EXPECT_EQ(convTimes[0].node, "conv");
    EXPECT_EQ(convTimes[0].variant, "cpu-reference");
    EXPECT_EQ(convTimes[0].outputElements, kBatch * 3 * 5 * 3);
    EXPECT_GE(convTimes[0].seconds, 0.0);
    const Tensor& y = outputs.at("y");
    ASSERT_EQ(y.shape(), (Shape{kBatch, 3, 5, 3}));
    const std::vector<double> want = convThenReluInDouble(*model, x);
    for (int64_t k = 0; k < y.size(); ++k) EXPECT_NEAR(y.data()[k], want[static_cast<size_t>(k)], 1e-5) << k;
    if (capture) {
      ASSERT_EQ(captured.size(), 2u);
      EXPECT_EQ(captured[0].node, "conv");
      EXPECT_EQ(captured[1].node, "relu");
    }
  }
}

TEST(Evaluation, AnOutputThatWasNeverComputedNamesTheModelAndTheOutput) {
  const auto model = convThenRelu();
  HostBackends backends;
  HostEvaluation values(*model, backends);
  std::vector<ConvLayerTime> none;
  try {
    finishPlan(*model, values, none, nullptr, nullptr);  // no stage ran
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "built.onnx: output 'y' was not computed");
  }
}

// A Device that can only record: each step succeeds or throws as the test says, and every call
// is written down.
class RecordingOnlyDevice final : public Device {
 public:
  std::vector<std::string> calls;
  bool beginFails = false, endFails = false;

  void beginRecording() override {
    calls.push_back("begin");
    if (beginFails) throw Error("this device cannot record");
  }
  std::unique_ptr<RecordedWork> endRecording() override {
    calls.push_back("end");
    if (endFails) throw Error("cudaStreamEndCapture: operation not permitted when stream is capturing");
    struct Work final : RecordedWork {
      void replay() override {}
    };
    return std::make_unique<Work>();
  }
  void cancelRecording() noexcept override { calls.push_back("cancel"); }

  std::string name() const override { return "recording only"; }
  DeviceTensor allocate(const Shape&) override { unused(); }
  DeviceTensor upload(const float*, const Shape&) override { unused(); }
  void download(const DeviceTensor&, float*) override { unused(); }
  void synchronize() override { unused(); }
  DeviceTensor uploadImageBytes(const uint8_t*, int, int, int, int, int) override { unused(); }
  void stageImageBytes(const uint8_t*, int, int, int) override { unused(); }
  DeviceTensor resizeImageBytes(int, int, int, int, int) override { unused(); }
  StagedImages stagedImageBytes(int, int, int, int, int) override { unused(); }
  std::unique_ptr<PinnedMemory> allocatePinned(size_t) override { unused(); }
  std::unique_ptr<PinnedMemory> pin(void*, size_t) override { unused(); }
  void downloadAsync(const DeviceTensor&, float*) override { unused(); }
  void beginRun() override { unused(); }
  double elapsedSeconds(int) override { unused(); }
  int timed(const std::function<void()>&) override { unused(); }
  void addChannelBias(float*, const float*, int64_t, int, int64_t) override { unused(); }
  void activation(Activation, const float*, float*, int64_t) override { unused(); }
  void arithmetic(BinaryArithmetic, const BroadcastOperands&, const float*, const float*, float*) override { unused(); }
  void maxPool(const PoolGeometry&, const float*, float*) override { unused(); }
  void averagePool(const PoolGeometry&, const float*, float*) override { unused(); }
  void gemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int) override {
    unused();
  }
  void broadcast2d(const float*, int, int, float*, int, int) override { unused(); }
  void softmax(const float*, float*, int64_t, int64_t, int64_t) override { unused(); }
  void setTracing(bool) override { unused(); }
  std::vector<TracedTime> collectTrace() override { unused(); }

 private:
  [[noreturn]] static void unused() { throw std::logic_error("not part of recording"); }
};

TEST(DeviceRecording, WorkThatRecordsComesBackAndIsNotCancelled) {
  RecordingOnlyDevice device;
  bool enqueued = false;
  RecordingOutcome outcome = recordWork(device, [&] { enqueued = true; });
  EXPECT_TRUE(enqueued);
  EXPECT_NE(outcome.work, nullptr);
  EXPECT_EQ(outcome.failure, "");
  EXPECT_EQ(device.calls, (std::vector<std::string>{"begin", "end"}));
}

TEST(DeviceRecording, WorkThatFailsIsCancelledAndSaysWhy) {
  RecordingOnlyDevice device;
  RecordingOutcome outcome = recordWork(device, [] { throw Error("node 'conv1' (Conv): cudnn workspace grew"); });
  EXPECT_EQ(outcome.work, nullptr);
  EXPECT_EQ(outcome.failure, "recording the work failed: node 'conv1' (Conv): cudnn workspace grew");
  EXPECT_EQ(device.calls, (std::vector<std::string>{"begin", "cancel"}));
}

TEST(DeviceRecording, ADeviceThatCannotBeginIsNeitherRecordedNorCancelled) {
  RecordingOnlyDevice device;
  device.beginFails = true;
  bool enqueued = false;
  RecordingOutcome outcome = recordWork(device, [&] { enqueued = true; });
  EXPECT_FALSE(enqueued);
  EXPECT_EQ(outcome.work, nullptr);
  EXPECT_EQ(outcome.failure, "beginning the recording failed: this device cannot record");
  EXPECT_EQ(device.calls, (std::vector<std::string>{"begin"}));
}

TEST(DeviceRecording, AnEndThatFailsIsCancelledAndSaysWhy) {
  RecordingOnlyDevice device;
  device.endFails = true;
  RecordingOutcome outcome = recordWork(device, [] {});
  EXPECT_EQ(outcome.work, nullptr);
  EXPECT_EQ(outcome.failure.rfind("ending the recording failed: cudaStreamEndCapture", 0), 0u) << outcome.failure;
  EXPECT_EQ(device.calls, (std::vector<std::string>{"begin", "end", "cancel"}));
}

TEST(DeviceRecording, ABugIsNotADeclineButTheRecordingIsStillCancelled) {
  RecordingOnlyDevice device;
  EXPECT_THROW(recordWork(device, [] { throw std::logic_error("a bug"); }), std::logic_error);
  EXPECT_EQ(device.calls, (std::vector<std::string>{"begin", "cancel"}));
}

// exp(x - max) / sum, in double, over the middle axis of [outer][length][inner].
std::vector<double> softmaxInDouble(const std::vector<float>& x, int64_t outer, int64_t length, int64_t inner) {
  std::vector<double> out(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double peak = -INFINITY, sum = 0.0;
      for (int64_t j = 0; j < length; ++j) peak = std::max(peak, double{x[(o * length + j) * inner + i]});
      for (int64_t j = 0; j < length; ++j) sum += std::exp(x[(o * length + j) * inner + i] - peak);
      for (int64_t j = 0; j < length; ++j)
        out[(o * length + j) * inner + i] = std::exp(x[(o * length + j) * inner + i] - peak) / sum;
    }
  return out;
}

TEST(HostSoftmax, MatchesDoublePrecisionAlongTheMiddleAxisWithLargeScores) {
  for (const auto& [outer, length, inner] :
       std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {2, 5, 3}, {3, 10, 1}, {1, 7, 4}, {600, 11, 3}}) {
    std::vector<float> x(static_cast<size_t>(outer * length * inner));
    // Scores up to 1000: exp() of them unshifted overflows float.
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int>((k * 37) % 23) - 11) * 90.0f;
    std::vector<float> got(x.size(), NAN);
    softmaxAlongAxis(x.data(), got.data(), outer, length, inner);
    const std::vector<double> want = softmaxInDouble(x, outer, length, inner);
    for (size_t k = 0; k < x.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-6) << "element " << k;
  }
}

}  // namespace
}  // namespace convscope
