// The checker's half of the fair timing (fair_timing.h), without a GPU: the inputs both processes
// generate from a seed, the positions sampled after each repetition, the reference at those
// positions against a whole convolution by the CPU variant on the same inputs, and the verdicts on
// simulated kernels that game the timer (a cached result, a write on the first call only, no
// write at all) and on a time below the physical floor.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "app/core/conv/conv_failure_map.h"
#include "app/core/conv/variant_table.h"
#include "app/core/engine/fair_timing.h"

namespace convscope {
namespace {

constexpr uint64_t kRunSeed = 777, kSampleSeed = 0xfeedbeefull;
constexpr int kSamples = 16;

ConvProblem paddedStridedShape() {
  ConvProblem p;
  p.batch = 2;
  p.inChannels = 3;
  p.inHeight = 13;
  p.inWidth = 11;
  p.outChannels = 4;
  p.kernelHeight = p.kernelWidth = 3;
  p.padTop = p.padBottom = p.padLeft = p.padRight = 1;
  p.strideHeight = p.strideWidth = 2;
  return p;
}

// The whole output for the inputs of `inputSeed`, by the CPU variant (float, another code path).
std::vector<float> wholeOutput(const ConvProblem& p, uint64_t inputSeed) {
  std::vector<float> x(static_cast<size_t>(p.inputElements())), k(static_cast<size_t>(p.weightElements()));
  for (size_t i = 0; i < x.size(); ++i) x[i] = timingInputValue(inputSeed, i);
  for (size_t i = 0; i < k.size(); ++i) k[i] = timingInputValue(timingWeightSeed(inputSeed), i);
  std::vector<float> y(static_cast<size_t>(p.outputElements()));
  createConvBackend("cpu-im2col-gemm")->forward(p, x.data(), k.data(), y.data());
  return y;
}

// A simulated child: `outputOf(repetition, inputSeed)` is the kernel's whole output.
template <typename OutputOf>
std::vector<TimedRepetition> simulate(const ConvProblem& p, int count, OutputOf outputOf) {
  std::vector<TimedRepetition> repetitions;
  for (int r = 0; r < count; ++r) {
    TimedRepetition t;
    t.repetition = r;
    t.inputSeed = repetitionInputSeed(kRunSeed, 0, p.batch, r);
    t.seconds = 1e-3 * (r + 1);
    const std::vector<float> y = outputOf(r, t.inputSeed);
    t.positions = sampledOutputPositions(kSampleSeed, t.inputSeed, p.outputElements(), kSamples);
    for (int64_t position : t.positions) t.values.push_back(y[static_cast<size_t>(position)]);
    repetitions.push_back(t);
  }
  return repetitions;
}

TEST(FairTimingInputs, ExactMultiplesOfATwentyThirdPowerInRangeAndSeedDependent) {
  double sum = 0.0;
  int differ = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    const float v = timingInputValue(42, i);
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    const double scaled = double{v} * (1 << 23);
    ASSERT_EQ(scaled, std::floor(scaled)) << v;
    ASSERT_EQ(v, timingInputValue(42, i));  // the same bits every time
    differ += v != timingInputValue(43, i);
    sum += v;
  }
  EXPECT_GT(differ, 99900);
  EXPECT_NEAR(sum / 100000, 0.0, 0.01);  // uniform: mean 0, standard error ~0.0018
}

TEST(FairTimingInputs, EveryRepetitionOfEveryLayerAndBatchHasItsOwnSeed) {
  std::set<uint64_t> seeds;
  for (int layer = 0; layer < 3; ++layer)
    for (const int batch : {100, 1000, 10000})
      for (int r = 0; r < 50; ++r) seeds.insert(repetitionInputSeed(kRunSeed, layer, batch, r));
  EXPECT_EQ(seeds.size(), 3u * 3u * 50u);
  EXPECT_NE(repetitionInputSeed(kRunSeed, 0, 100, 0), repetitionInputSeed(kRunSeed + 1, 0, 100, 0));
}

TEST(FairTimingSamples, DistinctAscendingInRangeAndHiddenBehindTheParentsSeed) {
  const std::vector<int64_t> a = sampledOutputPositions(kSampleSeed, 5, 100000, kSamples);
  ASSERT_EQ(a.size(), static_cast<size_t>(kSamples));
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_GE(a[i], 0);
    EXPECT_LT(a[i], 100000);
    if (i > 0) {
      EXPECT_LT(a[i - 1], a[i]);
    }
  }
  EXPECT_EQ(a, sampledOutputPositions(kSampleSeed, 5, 100000, kSamples));
  EXPECT_NE(a, sampledOutputPositions(kSampleSeed + 1, 5, 100000, kSamples));  // another parent seed
  EXPECT_NE(a, sampledOutputPositions(kSampleSeed, 6, 100000, kSamples));      // another repetition
  EXPECT_EQ(sampledOutputPositions(kSampleSeed, 5, 7, kSamples), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(FairTimingReference, MatchesAWholeConvolutionOfTheSameInputsAtEveryPosition) {
  ConvProblem grouped = paddedStridedShape();  // a grouped, dilated shape too
  grouped.group = 2;
  grouped.inChannels = 4;
  grouped.dilationHeight = 2;
  grouped.strideHeight = grouped.strideWidth = 1;
  for (const ConvProblem& p : {paddedStridedShape(), grouped}) {
    const std::vector<float> y = wholeOutput(p, 99);
    for (int64_t i = 0; i < p.outputElements(); ++i) {
      const SampledReference r = sampledReference(p, 99, i);
      ASSERT_LE(std::fabs(double{y[static_cast<size_t>(i)]} - r.expected), r.allowed) << p.describe() << " at " << i;
    }
  }
}

TEST(FairTimingCheck, ACorrectKernelPassesEveryRepetition) {
  const ConvProblem p = paddedStridedShape();
  const auto repetitions = simulate(p, 5, [&](int, uint64_t seed) { return wholeOutput(p, seed); });
  EXPECT_EQ(checkTimedRepetitions(p, repetitions, kSampleSeed, kSamples, "mine.cu"), "");
}

TEST(FairTimingCheck, ACachedResultIsCaughtAtTheSecondRepetition) {
  const ConvProblem p = paddedStridedShape();
  std::vector<float> cached;
  const auto repetitions = simulate(p, 5, [&](int r, uint64_t seed) {
    if (r == 0) cached = wholeOutput(p, seed);  // computes once, then returns the first answer
    return cached;
  });
  const std::string message = checkTimedRepetitions(p, repetitions, kSampleSeed, kSamples, "kernels/mine.cu");
  EXPECT_EQ(message.rfind("kernels/mine.cu: its output at repetition 2 of " + p.describe() + " was wrong", 0), 0u)
      << message;
  EXPECT_NE(message.find("a kernel must compute every call"), std::string::npos) << message;
}

TEST(FairTimingCheck, WritingOnlyOnTheFirstCallOrNeverIsCaughtAsNeverWritten) {
  const ConvProblem p = paddedStridedShape();
  const std::vector<float> poison(static_cast<size_t>(p.outputElements()), unwrittenPoison());
  const auto firstOnly = simulate(p, 4, [&](int r, uint64_t seed) { return r == 0 ? wholeOutput(p, seed) : poison; });
  std::string message = checkTimedRepetitions(p, firstOnly, kSampleSeed, kSamples, "mine.cu");
  EXPECT_NE(message.find("repetition 2 "), std::string::npos) << message;
  EXPECT_NE(message.find("never written"), std::string::npos) << message;
  const auto nothing = simulate(p, 4, [&](int, uint64_t) { return poison; });
  message = checkTimedRepetitions(p, nothing, kSampleSeed, kSamples, "mine.cu");
  EXPECT_NE(message.find("repetition 1 "), std::string::npos) << message;
  EXPECT_NE(message.find("never written"), std::string::npos) << message;
}

TEST(FairTimingCheck, OneWrongSampleOrPositionsNotAskedForRejectTheTiming) {
  const ConvProblem p = paddedStridedShape();
  auto repetitions = simulate(p, 3, [&](int, uint64_t seed) { return wholeOutput(p, seed); });
  auto wrongValue = repetitions;
  wrongValue[2].values[kSamples / 2] += 0.25f;
  EXPECT_NE(checkTimedRepetitions(p, wrongValue, kSampleSeed, kSamples, "mine.cu").find("repetition 3 "),
            std::string::npos);
  auto otherPositions = repetitions;
  otherPositions[1].positions =
      sampledOutputPositions(kSampleSeed + 1, repetitions[1].inputSeed, p.outputElements(), kSamples);
  EXPECT_NE(
      checkTimedRepetitions(p, otherPositions, kSampleSeed, kSamples, "mine.cu").find("without the values asked for"),
      std::string::npos);
  auto fewer = repetitions;
  fewer[0].values.pop_back();
  EXPECT_NE(checkTimedRepetitions(p, fewer, kSampleSeed, kSamples, "mine.cu"), "");
}

TEST(FairTimingFloor, ATimeBelowBytesOverBandwidthOrFlopsOverPeakIsFlaggedNotRanked) {
  ConvProblem p;  // the course's first layer at batch 10000: 1x28x28 -> 6x24x24, 5x5
  p.batch = 10000;
  p.inHeight = p.inWidth = 28;
  p.outChannels = 6;
  p.kernelHeight = p.kernelWidth = 5;
  const DevicePeaks peaks = *devicePeaksFor("NVIDIA H100 80GB HBM3");
  // By hand: bytes = 4 x (10000x784 + 150 + 10000x6x576) = 169,600,600; flops = 2 x 34,560,000 x 25.
  const double byBandwidth = 169600600.0 / 3.35e12, byFlops = 1728000000.0 / 494.7e12;
  EXPECT_DOUBLE_EQ(physicalFloorSeconds(p, peaks), std::max(byBandwidth, byFlops));
  FairLayerTiming layer;
  layer.problem = p;
  const auto repetitions = [&](double seconds) {
    std::vector<TimedRepetition> reps(3);
    for (size_t r = 0; r < reps.size(); ++r) {
      reps[r].repetition = static_cast<int>(r);
      reps[r].seconds = seconds * (1.0 + 0.01 * r);
      reps[r].inputSeed = repetitionInputSeed(kRunSeed, 0, p.batch, static_cast<int>(r));
      reps[r].positions = sampledOutputPositions(kSampleSeed, reps[r].inputSeed, p.outputElements(), 2);
      for (int64_t position : reps[r].positions)
        reps[r].values.push_back(static_cast<float>(sampledReference(p, reps[r].inputSeed, position).expected));
    }
    return reps;
  };
  judgeLayerTiming(layer, repetitions(0.5 * byBandwidth), kSampleSeed, 2, peaks, "mine.cu");
  EXPECT_EQ(layer.rejected, "");
  EXPECT_TRUE(layer.belowPhysicalFloor);
  EXPECT_FALSE(layer.ranked());
  EXPECT_DOUBLE_EQ(layer.time.median, 0.5 * byBandwidth * 1.01);
  EXPECT_DOUBLE_EQ(layer.time.min, 0.5 * byBandwidth);
  EXPECT_DOUBLE_EQ(layer.time.max, 0.5 * byBandwidth * 1.02);
  judgeLayerTiming(layer, repetitions(2.0 * byBandwidth), kSampleSeed, 2, peaks, "mine.cu");
  EXPECT_FALSE(layer.belowPhysicalFloor);
  EXPECT_TRUE(layer.ranked());
  // A device without known peaks: no floor, nothing flagged.
  judgeLayerTiming(layer, repetitions(1e-9), kSampleSeed, 2, devicePeaksFor("Some Other GPU"), "mine.cu");
  EXPECT_EQ(layer.floorSeconds, 0.0);
  EXPECT_FALSE(layer.belowPhysicalFloor);
  EXPECT_TRUE(devicePeaksFor("NVIDIA H200"));
}

}  // namespace
}  // namespace convscope
