// The checker's half of the fair timing (fair_timing.h), without a GPU: the inputs both processes
// generate from a seed, the positions sampled after each repetition, the reference at those
// positions against a whole convolution by the CPU variant on the same inputs, the verdicts on
// simulated kernels that game the timer (a cached result, a write on the first call only, no
// write at all, one output wrong where no sample looks) and on a child whose whole-output check is
// missing or does not hold, and a time below the physical floor. The device's peaks from its
// figures (gpu_platform.h: no table of GPU names) and the cache of the measured copy. On a GPU
// (skipped without one, failed instead with CONVSCOPE_REQUIRE_GPU=1): the harness itself, a
// course variant passing every repetition's whole-output check, and a row wrong at one output no
// sample looks at, at one repetition only, caught there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/core/conv/conv_failure_map.h"
#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/fair_timing.h"
#include "gpu/fair_timing_harness.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

constexpr uint64_t kRunSeed = 777, kSampleSeed = 0xfeedbeefull;
constexpr int kSamples = 16;

// The measured copy's cache in a folder of this test's own, never the user's (set before any test
// can measure: measuredCopyBytesPerSecond reads the path once).
const testing::TempDir& cacheFolder() {
  static const testing::TempDir folder;
  return folder;
}
const bool cacheInTemp = [] {
  setenv("CONVSCOPE_DEVICE_CACHE", (cacheFolder().path() / "device-bandwidth.json").c_str(), 1);
  return true;
}();

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

// What the child's device check (fair_timing_harness.cu) reports for the output `y`: every element
// against sampledReference, on the host.
WholeOutputCheck wholeCheckOf(const ConvProblem& p, uint64_t inputSeed, const std::vector<float>& y,
                              double tolerance = kUserKernelRelativeTolerance) {
  WholeOutputCheck check;
  check.checked = true;
  check.relativeTolerance = tolerance;
  for (int64_t i = 0; i < p.outputElements(); ++i) {
    const SampledReference r = sampledReference(p, inputSeed, i, tolerance);
    const float got = y[static_cast<size_t>(i)];
    if (std::fabs(double{got} - r.expected) <= r.allowed) continue;
    if (check.wrong++ == 0) {
      check.firstWrong = i;
      check.firstWrongValue = got;
    }
  }
  return check;
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
    t.whole = wholeCheckOf(p, t.inputSeed, y);
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

// An H100 SXM's figures as its driver reports them (the clocks are those test_kernel_tools.cpp's
// child reports): 132 SMs at 1,980 MHz, compute 9.0, HBM3 at 2,619 MHz on a 5,120-bit bus.
DeviceFigures h100SxmFigures() {
  DeviceFigures f;
  f.name = "NVIDIA H100 80GB HBM3";
  f.uuid = "GPU-00000000-1111-2222-3333-444444444444";
  f.driver = "13.0";
  f.runtime = "13.0";
  f.computeMajor = 9;
  f.computeMinor = 0;
  f.multiprocessors = 132;
  f.smClockMHz = 1980;
  f.memoryClockMHz = 2619;
  f.memoryBusWidthBits = 5120;
  return f;
}

// Repetitions whose sampled values and whole output are right (the references themselves).
std::vector<TimedRepetition> rightRepetitions(const ConvProblem& p, int count, double seconds, int samples) {
  std::vector<TimedRepetition> reps(static_cast<size_t>(count));
  for (size_t r = 0; r < reps.size(); ++r) {
    reps[r].repetition = static_cast<int>(r);
    reps[r].seconds = seconds * (1.0 + 0.01 * static_cast<double>(r));
    reps[r].inputSeed = repetitionInputSeed(kRunSeed, 0, p.batch, static_cast<int>(r));
    reps[r].positions = sampledOutputPositions(kSampleSeed, reps[r].inputSeed, p.outputElements(), samples);
    for (int64_t position : reps[r].positions)
      reps[r].values.push_back(static_cast<float>(sampledReference(p, reps[r].inputSeed, position).expected));
    reps[r].whole = {true, kUserKernelRelativeTolerance, 0, -1, 0.0f};
  }
  return reps;
}

TEST(FairTimingFloor, ATimeBelowBytesOverBandwidthOrFlopsOverPeakIsFlaggedNotRanked) {
  ConvProblem p;  // the course's first layer at batch 10000: 1x28x28 -> 6x24x24, 5x5
  p.batch = 10000;
  p.inHeight = p.inWidth = 28;
  p.outChannels = 6;
  p.kernelHeight = p.kernelWidth = 5;
  const DevicePeaks peaks = *devicePeaksOf(h100SxmFigures());
  // By hand: bytes = 4 x (10000x784 + 150 + 10000x6x576) = 169,600,600; flops = 2 x 34,560,000 x 25;
  // bandwidth 2,619 MHz x 2 x 640 bytes; TF32 132 SMs x 1,980 MHz x 2,048.
  const double byBandwidth = 169600600.0 / 3.35232e12, byFlops = 1728000000.0 / 535.26528e12;
  EXPECT_DOUBLE_EQ(physicalFloorSeconds(p, peaks), std::max(byBandwidth, byFlops));
  FairLayerTiming layer;
  layer.problem = p;
  judgeLayerTiming(layer, rightRepetitions(p, 3, 0.5 * byBandwidth, 2), kSampleSeed, 2, peaks, "mine.cu");
  EXPECT_EQ(layer.rejected, "");
  EXPECT_TRUE(layer.belowPhysicalFloor);
  EXPECT_FALSE(layer.ranked());
  EXPECT_DOUBLE_EQ(layer.time.median, 0.5 * byBandwidth * 1.01);
  EXPECT_DOUBLE_EQ(layer.time.min, 0.5 * byBandwidth);
  EXPECT_DOUBLE_EQ(layer.time.max, 0.5 * byBandwidth * 1.02);
  judgeLayerTiming(layer, rightRepetitions(p, 3, 2.0 * byBandwidth, 2), kSampleSeed, 2, peaks, "mine.cu");
  EXPECT_FALSE(layer.belowPhysicalFloor);
  EXPECT_TRUE(layer.ranked());
  // A device without known peaks: no floor, nothing flagged.
  judgeLayerTiming(layer, rightRepetitions(p, 3, 1e-9, 2), kSampleSeed, 2, std::nullopt, "mine.cu");
  EXPECT_EQ(layer.floorSeconds, 0.0);
  EXPECT_FALSE(layer.belowPhysicalFloor);
  // Only the bandwidth known (a compute capability newer than this build): the bytes' floor alone.
  DeviceFigures future = h100SxmFigures();
  future.computeMajor = 42;
  const DevicePeaks bandwidthOnly = *devicePeaksOf(future);
  EXPECT_EQ(bandwidthOnly.flopsPerSecond, 0.0);
  EXPECT_DOUBLE_EQ(physicalFloorSeconds(p, bandwidthOnly), byBandwidth);
}

TEST(DevicePeaks, ComeFromTheDriversFiguresAndNeverFromTheName) {
  const DevicePeaks sxm = *devicePeaksOf(h100SxmFigures());
  EXPECT_DOUBLE_EQ(sxm.driverBytesPerSecond, 2619e6 * 2 * 640);
  EXPECT_DOUBLE_EQ(sxm.bytesPerSecond, 2619e6 * 2 * 640);  // no copy measured
  EXPECT_DOUBLE_EQ(sxm.fp32FlopsPerSecond, 132 * 1980e6 * 128 * 2);
  EXPECT_DOUBLE_EQ(sxm.tf32FlopsPerSecond, 132 * 1980e6 * 2048);
  EXPECT_DOUBLE_EQ(sxm.flopsPerSecond, sxm.tf32FlopsPerSecond);
  EXPECT_NE(sxm.source.find("2619 MHz x 2 x 5120 bits"), std::string::npos) << sxm.source;
  // The same figures under another name: the same peaks.
  DeviceFigures renamed = h100SxmFigures();
  renamed.name = "Some Other GPU";
  EXPECT_DOUBLE_EQ(devicePeaksOf(renamed)->bytesPerSecond, sxm.bytesPerSecond);
  EXPECT_DOUBLE_EQ(devicePeaksOf(renamed)->flopsPerSecond, sxm.flopsPerSecond);
  // An H100 NVL (a 6,144-bit bus, a lower clock) gets its own figures, not the SXM's; an H200 has some.
  DeviceFigures nvl = h100SxmFigures();
  nvl.name = "NVIDIA H100 NVL";
  nvl.memoryBusWidthBits = 6144;
  nvl.smClockMHz = 1785;
  EXPECT_DOUBLE_EQ(devicePeaksOf(nvl)->bytesPerSecond, 2619e6 * 2 * 768);
  EXPECT_DOUBLE_EQ(devicePeaksOf(nvl)->tf32FlopsPerSecond, 132 * 1785e6 * 2048);
  DeviceFigures h200 = h100SxmFigures();
  h200.name = "NVIDIA H200";
  h200.memoryClockMHz = 3201;
  h200.memoryBusWidthBits = 6144;
  EXPECT_DOUBLE_EQ(devicePeaksOf(h200)->bytesPerSecond, 3201e6 * 2 * 768);
  // A measured copy above the driver's figure raises the ceiling; one below leaves it.
  DeviceFigures copied = h100SxmFigures();
  copied.copyBytesPerSecond = 2.9e12;
  EXPECT_DOUBLE_EQ(devicePeaksOf(copied)->bytesPerSecond, 2619e6 * 2 * 640);
  EXPECT_DOUBLE_EQ(devicePeaksOf(copied)->copyBytesPerSecond, 2.9e12);
  copied.copyBytesPerSecond = 4e12;
  EXPECT_DOUBLE_EQ(devicePeaksOf(copied)->bytesPerSecond, 4e12);
  // Volta: 64 FP32 lanes per SM and no TF32; a GeForce Ada: 128 lanes.
  DeviceFigures volta = h100SxmFigures();
  volta.computeMajor = 7;
  EXPECT_DOUBLE_EQ(devicePeaksOf(volta)->fp32FlopsPerSecond, 132 * 1980e6 * 64 * 2);
  EXPECT_EQ(devicePeaksOf(volta)->tf32FlopsPerSecond, 0.0);
  EXPECT_EQ(fp32LanesPerSm(8, 9), 128);
  EXPECT_EQ(fp32LanesPerSm(8, 0), 64);
  EXPECT_EQ(tf32FlopsPerSmPerClock(8, 0), 1024);
  EXPECT_EQ(tf32FlopsPerSmPerClock(7, 5), 0);
  // No bus width nor memory clock: FLOPs only; nothing at all: no peaks.
  DeviceFigures noMemory = h100SxmFigures();
  noMemory.memoryBusWidthBits = 0;
  EXPECT_EQ(devicePeaksOf(noMemory)->bytesPerSecond, 0.0);
  EXPECT_GT(devicePeaksOf(noMemory)->flopsPerSecond, 0.0);
  EXPECT_FALSE(devicePeaksOf(DeviceFigures{}));
}

TEST(DevicePeaks, TheDeprecatedLookupByNameHasNoTableBehindIt) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_FALSE(devicePeaksFor("Some Other GPU"));
  // An H100's name gives peaks only where it is this machine's GPU.
  EXPECT_EQ(devicePeaksFor("NVIDIA H100 80GB HBM3").has_value(),
            gpuInfo().usable && gpuInfo().name == "NVIDIA H100 80GB HBM3");
#pragma GCC diagnostic pop
}

TEST(DeviceFigures, TravelAsJsonAndAnOlderDeviceObjectGivesNoPeaks) {
  DeviceFigures f = h100SxmFigures();
  f.copyBytesPerSecond = 2.924e12;
  const nlohmann::json j = deviceFiguresToJson(f);
  EXPECT_EQ(j["compute_capability"], "9.0");
  EXPECT_EQ(j["sm_count"], 132);
  EXPECT_EQ(j["memory_bus_width_bits"], 5120);
  const DeviceFigures back = deviceFiguresFromJson(j);
  EXPECT_EQ(back.name, f.name);
  EXPECT_EQ(back.uuid, f.uuid);
  EXPECT_EQ(back.driver, f.driver);
  EXPECT_EQ(back.runtime, f.runtime);
  EXPECT_EQ(back.computeMajor, 9);
  EXPECT_EQ(back.computeMinor, 0);
  EXPECT_EQ(back.multiprocessors, 132);
  EXPECT_EQ(back.smClockMHz, 1980);
  EXPECT_EQ(back.memoryClockMHz, 2619);
  EXPECT_EQ(back.memoryBusWidthBits, 5120);
  EXPECT_DOUBLE_EQ(back.copyBytesPerSecond, 2.924e12);
  EXPECT_DOUBLE_EQ(devicePeaksFromJson(j)->bytesPerSecond, devicePeaksOf(f)->bytesPerSecond);
  EXPECT_TRUE(deviceFiguresToJson(h100SxmFigures())["copy_bytes_per_second"].is_null());
  // What the timing child wrote before: a name, clocks and versions; no SM count, no bus width.
  const nlohmann::json older = {{"name", "NVIDIA H100 80GB HBM3"},
                                {"compute_capability", "9.0"},
                                {"driver", "13.0"},
                                {"runtime", "13.0"},
                                {"sm_clock_mhz", 1980},
                                {"memory_clock_mhz", 2619}};
  EXPECT_FALSE(devicePeaksFromJson(older));
  // Malformed values are unknown, not trusted.
  nlohmann::json malformed = j;
  malformed["sm_count"] = "many";
  malformed["compute_capability"] = "nine";
  malformed["memory_bus_width_bits"] = -5120;
  const DeviceFigures unread = deviceFiguresFromJson(malformed);
  EXPECT_EQ(unread.multiprocessors, 0);
  EXPECT_EQ(unread.computeMajor, 0);
  EXPECT_EQ(unread.memoryBusWidthBits, 0);
  EXPECT_FALSE(devicePeaksFromJson(nlohmann::json::array()));
}

TEST(CopyBandwidthCache, MeasuredOncePerDeviceAndDriverThenRead) {
  testing::TempDir dir;
  const std::filesystem::path file = dir.path() / "cache/device-bandwidth.json";
  int measured = 0;
  const auto measure = [&] {
    ++measured;
    return 2.5e12 + measured;
  };
  DeviceFigures f = h100SxmFigures();
  const std::string key = copyBandwidthCacheKey(f);
  EXPECT_EQ(key, "GPU-00000000-1111-2222-3333-444444444444 | driver 13.0");
  EXPECT_DOUBLE_EQ(cachedCopyBytesPerSecond(file, key, f.name, measure), 2.5e12 + 1);
  EXPECT_DOUBLE_EQ(cachedCopyBytesPerSecond(file, key, f.name, measure), 2.5e12 + 1);
  EXPECT_EQ(measured, 1) << "read from the file the second time";
  const nlohmann::json cache = nlohmann::json::parse(std::ifstream(file));
  EXPECT_EQ(cache["devices"][key]["name"], f.name);
  // Another driver (or, without a UUID, another name) is measured again, beside the first.
  f.driver = "13.1";
  EXPECT_DOUBLE_EQ(cachedCopyBytesPerSecond(file, copyBandwidthCacheKey(f), f.name, measure), 2.5e12 + 2);
  f.uuid.clear();
  EXPECT_EQ(copyBandwidthCacheKey(f), "NVIDIA H100 80GB HBM3 | driver 13.1");
  EXPECT_DOUBLE_EQ(cachedCopyBytesPerSecond(file, key, f.name, measure), 2.5e12 + 1);
  // A damaged file is measured over and rewritten; a failed or empty measurement is not kept.
  std::ofstream(file) << "{\"schema\": ";
  EXPECT_DOUBLE_EQ(cachedCopyBytesPerSecond(file, key, f.name, measure), 2.5e12 + 3);
  EXPECT_DOUBLE_EQ(cachedCopyBytesPerSecond(file, key, f.name, measure), 2.5e12 + 3);
  const auto fails = []() -> double { throw Error("no GPU"); };
  EXPECT_EQ(cachedCopyBytesPerSecond(dir.path() / "other.json", key, f.name, fails), 0.0);
  EXPECT_EQ(cachedCopyBytesPerSecond(dir.path() / "other.json", key, f.name, [] { return 0.0; }), 0.0);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "other.json"));
  // A place that cannot be written (a sandboxed process): the figure, nothing kept, no error.
  std::ofstream(dir.path() / "a-file") << "x";
  EXPECT_DOUBLE_EQ(cachedCopyBytesPerSecond(dir.path() / "a-file/cache.json", key, f.name, measure), 2.5e12 + 4);
}

TEST(CopyBandwidthCache, LivesInTheUsersCacheFolder) {
  const std::string saved = std::getenv("CONVSCOPE_DEVICE_CACHE") ? std::getenv("CONVSCOPE_DEVICE_CACHE") : "";
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string savedXdg = xdg ? xdg : "";
  unsetenv("CONVSCOPE_DEVICE_CACHE");
  setenv("XDG_CACHE_HOME", "/somewhere/cache", 1);
  EXPECT_EQ(copyBandwidthCacheFile(),
            std::filesystem::path("/somewhere/cache/ConvScope/convscope/device-bandwidth.json"));
  setenv("CONVSCOPE_DEVICE_CACHE", saved.c_str(), 1);
  if (xdg)
    setenv("XDG_CACHE_HOME", savedXdg.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(copyBandwidthCacheFile(), std::filesystem::path(saved));
}

// An element no repetition samples (the test knows the seeds; a kernel cannot), away from the
// padding so that its reference is not zero.
int64_t unsampledPosition(const ConvProblem& p, int repetitions, int samples) {
  std::set<int64_t> sampled;
  for (int r = 0; r < repetitions; ++r)
    for (const int64_t position :
         sampledOutputPositions(kSampleSeed, repetitionInputSeed(kRunSeed, 0, p.batch, r), p.outputElements(), samples))
      sampled.insert(position);
  for (int64_t i = p.outputElements() / 2; i < p.outputElements(); ++i)
    if (!sampled.count(i) &&
        std::fabs(sampledReference(p, repetitionInputSeed(kRunSeed, 0, p.batch, 0), i).expected) > 0.1)
      return i;
  return -1;
}

TEST(FairTimingWholeOutput, OneWrongOutputNoSampleLooksAtIsCaughtAtItsRepetition) {
  const ConvProblem p = paddedStridedShape();
  const int64_t wrongAt = unsampledPosition(p, 4, kSamples);
  ASSERT_GE(wrongAt, 0);
  // Right everywhere but at `wrongAt` of the third repetition.
  const auto repetitions = simulate(p, 4, [&](int r, uint64_t seed) {
    std::vector<float> y = wholeOutput(p, seed);
    if (r == 2) y[static_cast<size_t>(wrongAt)] += 0.25f;
    return y;
  });
  // The samples alone see nothing wrong.
  auto samplesOnly = repetitions;
  for (TimedRepetition& r : samplesOnly) r.whole = {true, kUserKernelRelativeTolerance, 0, -1, 0.0f};
  EXPECT_EQ(checkTimedRepetitions(p, samplesOnly, kSampleSeed, kSamples, "mine.cu"), "");
  // The whole output's check does, at the third repetition, naming the element.
  FairLayerTiming layer;
  layer.problem = p;
  judgeLayerTiming(layer, repetitions, kSampleSeed, kSamples, std::nullopt, "kernels/mine.cu");
  const std::string& message = layer.rejected;
  EXPECT_EQ(message.rfind("kernels/mine.cu: its output at repetition 3 of " + p.describe() + " was wrong", 0), 0u)
      << message;
  const int64_t width = p.outWidth(), height = p.outHeight();
  std::ostringstream where;
  where << "(1 of " << p.outputElements()
        << " outputs wrong; the first: output [n=" << wrongAt / (width * height * p.outChannels)
        << "][m=" << wrongAt / (width * height) % p.outChannels << "][h=" << wrongAt / width % height
        << "][w=" << wrongAt % width << "]: expected ";
  EXPECT_NE(message.find(where.str()), std::string::npos) << message << "\n" << where.str();
  EXPECT_NE(message.find("a kernel must compute every output of every call"), std::string::npos) << message;
  EXPECT_FALSE(layer.ranked());
  // A never-written element is said so.
  const std::vector<float> poison(static_cast<size_t>(p.outputElements()), unwrittenPoison());
  const auto nothing = simulate(p, 2, [&](int r, uint64_t seed) {
    std::vector<float> y = wholeOutput(p, seed);
    if (r == 1) y[static_cast<size_t>(wrongAt)] = poison[0];
    return y;
  });
  const std::string unwritten = checkTimedRepetitions(p, nothing, kSampleSeed, kSamples, "mine.cu");
  EXPECT_NE(unwritten.find("repetition 2 "), std::string::npos) << unwritten;
  EXPECT_NE(unwritten.find("never written)"), std::string::npos) << unwritten;
}

TEST(FairTimingWholeOutput, AWholeOutputNotCheckedCheckedLooserMalformedOrUntrueIsNotAccepted) {
  const ConvProblem p = paddedStridedShape();
  const auto right = simulate(p, 2, [&](int, uint64_t seed) { return wholeOutput(p, seed); });
  ASSERT_EQ(checkTimedRepetitions(p, right, kSampleSeed, kSamples, "mine.cu"), "");
  const auto refusal = [&](const std::function<void(WholeOutputCheck&)>& change) {
    auto reps = right;
    change(reps[1].whole);
    return checkTimedRepetitions(p, reps, kSampleSeed, kSamples, "mine.cu");
  };
  EXPECT_NE(refusal([](WholeOutputCheck& w) {
              w.checked = false;
            }).find("repetition 2 of " + p.describe() + " came back without its whole output checked"),
            std::string::npos);
  EXPECT_NE(refusal([](WholeOutputCheck& w) { w.relativeTolerance = 2e-3; }).find("wider tolerance"),
            std::string::npos);
  EXPECT_NE(refusal([](WholeOutputCheck& w) { w.wrong = 1; }).find("malformed"), std::string::npos);
  EXPECT_NE(refusal([&](WholeOutputCheck& w) {
              w.wrong = 1;
              w.firstWrong = p.outputElements();
            }).find("malformed"),
            std::string::npos);
  // "Wrong" at an element whose value the parent finds right: the child's check does not hold.
  const std::vector<float> y = wholeOutput(p, right[1].inputSeed);
  EXPECT_NE(refusal([&](WholeOutputCheck& w) {
              w.wrong = 1;
              w.firstWrong = 5;
              w.firstWrongValue = y[5];
            }).find("does not hold"),
            std::string::npos);
  // A course variant checked at its own, wider tolerance passes when the parent asks for that one.
  auto tf32 = right;
  for (TimedRepetition& r : tf32) r.whole.relativeTolerance = 2e-3;
  EXPECT_EQ(checkTimedRepetitions(p, tf32, kSampleSeed, kSamples, "gpu-tensor-tf32", 2e-3), "");
}

TEST(FairTimingWholeOutput, TravelsInTheRepetitionsJsonAndAnEntryWithoutItIsNotChecked) {
  const ConvProblem p = paddedStridedShape();
  auto reps = simulate(p, 2, [&](int, uint64_t seed) { return wholeOutput(p, seed); });
  reps[1].whole = {true, kUserKernelRelativeTolerance, 7, 42, unwrittenPoison()};
  const nlohmann::json j = timedRepetitionsToJson(reps);
  EXPECT_TRUE(j[0]["whole_output"]["first_wrong"].is_null());
  const auto back = timedRepetitionsFromJson(j);
  ASSERT_EQ(back.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(back[r].whole.checked, reps[r].whole.checked);
    EXPECT_EQ(back[r].whole.relativeTolerance, reps[r].whole.relativeTolerance);
    EXPECT_EQ(back[r].whole.wrong, reps[r].whole.wrong);
    EXPECT_EQ(back[r].whole.firstWrong, reps[r].whole.firstWrong);
  }
  EXPECT_EQ(back[0].whole.firstWrong, -1);
  EXPECT_TRUE(isUnwrittenPoison(back[1].whole.firstWrongValue)) << "the poison's bits, not a NaN of JSON";
  nlohmann::json without = j;
  without[0].erase("whole_output");
  EXPECT_FALSE(timedRepetitionsFromJson(without)[0].whole.checked);
  EXPECT_NE(checkTimedRepetitions(p, timedRepetitionsFromJson(without), kSampleSeed, kSamples, "mine.cu")
                .find("without its whole output checked"),
            std::string::npos);
}

// ---- On the GPU: the harness itself ----

class FairTimingOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpuInfo().usable) GPU_TEST_SKIP() << "no GPU can be used here: " << gpuInfo().unusableReason;
  }

  static gpu::FairTimingPlan planFor(const ConvProblem& p, int repetitions) {
    gpu::FairTimingPlan plan;
    plan.problem = p;
    plan.runSeed = kRunSeed;
    plan.sampleSeed = kSampleSeed;
    plan.sampleCount = kSamples;
    plan.repetitions = repetitions;
    return plan;
  }
};

TEST_F(FairTimingOnGpu, EveryTimedRepetitionOfACourseVariantHasItsWholeOutputCheckedAndPasses) {
  const ConvVariant& row = findConvVariant("gpu-baseline");
  const double tolerance = std::max(kUserKernelRelativeTolerance, row.relativeTolerance);
  const std::unique_ptr<Device> device = createGpuDevice();
  ConvProblem large;  // the course's first layer at batch 5000: more outputs than one pass of the check's grid
  large.batch = 5000;
  large.inHeight = large.inWidth = 28;
  large.outChannels = 6;
  large.kernelHeight = large.kernelWidth = 5;
  ConvProblem small = paddedStridedShape();
  small.batch = 3;
  for (const ConvProblem& p : {small, large}) {
    SCOPED_TRACE(p.describe());
    ASSERT_EQ(row.unsupportedReasonFor(p), "");
    const std::vector<TimedRepetition> reps = gpu::timeConvFairly(row, *device, planFor(p, 3));
    ASSERT_EQ(reps.size(), 3u);
    for (const TimedRepetition& r : reps) {
      EXPECT_TRUE(r.whole.checked);
      EXPECT_EQ(r.whole.wrong, 0);
      EXPECT_EQ(r.whole.firstWrong, -1);
      EXPECT_DOUBLE_EQ(r.whole.relativeTolerance, tolerance);
    }
    // As the parent reads it from the child's JSON.
    const auto sent = timedRepetitionsFromJson(timedRepetitionsToJson(reps));
    EXPECT_EQ(checkTimedRepetitions(p, sent, kSampleSeed, kSamples, row.id, tolerance), "");
  }
}

TEST_F(FairTimingOnGpu, ARowWrongAtOneOutputNoSampleLooksAtIsCaughtAtThatRepetitionOnly) {
  // A row right everywhere but at one element that no repetition's sample hits, and only at the
  // third timed launch: the test knows the sample seed (a kernel cannot), so this row is a kernel
  // that guessed the samples perfectly. Only the whole output's check can see it.
  const ConvVariant& baseline = findConvVariant("gpu-baseline");
  ConvProblem p = paddedStridedShape();
  ASSERT_EQ(baseline.unsupportedReasonFor(p), "");
  const gpu::FairTimingPlan plan = planFor(p, 4);
  const int64_t wrongAt = unsampledPosition(p, plan.repetitions, plan.sampleCount);
  ASSERT_GE(wrongAt, 0);
  const std::unique_ptr<Device> device = createGpuDevice();
  const float half = 0.5f;
  const DeviceTensor bias = device->upload(&half, {1});
  int launches = 0;
  ConvVariant wrong = baseline;
  wrong.id = "test-wrong-where-no-sample-looks";
  wrong.runOnDevice = [&](Device& d, const ConvProblem& q, const float* x, const float* w, float* y,
                          const ConvEpilogue& epilogue) {
    baseline.runOnDevice(d, q, x, w, y, epilogue);
    if (launches++ == plan.warmups + 2) d.addChannelBias(y + wrongAt, bias.data(), 1, 1, 1);  // output += 0.5 there
  };
  const std::vector<TimedRepetition> reps = gpu::timeConvFairly(wrong, *device, plan);
  ASSERT_EQ(reps.size(), 4u);
  EXPECT_EQ(launches, plan.warmups + plan.repetitions);
  for (size_t r = 0; r < reps.size(); ++r) {
    EXPECT_TRUE(reps[r].whole.checked);
    EXPECT_EQ(reps[r].whole.wrong, r == 2 ? 1 : 0) << "repetition " << r;
    EXPECT_EQ(reps[r].whole.firstWrong, r == 2 ? wrongAt : -1) << "repetition " << r;
  }
  const double expected = sampledReference(p, reps[2].inputSeed, wrongAt).expected;
  EXPECT_NEAR(reps[2].whole.firstWrongValue, expected + 0.5, 1e-5);
  auto samplesOnly = reps;
  for (TimedRepetition& r : samplesOnly) r.whole = {true, kUserKernelRelativeTolerance, 0, -1, 0.0f};
  EXPECT_EQ(checkTimedRepetitions(p, samplesOnly, kSampleSeed, kSamples, "mine.cu"), "") << "the samples see nothing";
  FairLayerTiming layer;
  layer.problem = p;
  judgeLayerTiming(layer, timedRepetitionsFromJson(timedRepetitionsToJson(reps)), kSampleSeed, kSamples, std::nullopt,
                   "kernels/mine.cu");
  EXPECT_EQ(layer.rejected.rfind("kernels/mine.cu: its output at repetition 3 of " + p.describe() + " was wrong", 0),
            0u)
      << layer.rejected;
  EXPECT_NE(layer.rejected.find("(1 of " + std::to_string(p.outputElements()) + " outputs wrong"), std::string::npos)
      << layer.rejected;
  EXPECT_FALSE(layer.ranked());
}

TEST_F(FairTimingOnGpu, TheDevicesOwnFiguresGiveItsPeaksAndItsCopyStaysUnderTheDriversCeiling) {
  const DeviceFigures f = localDeviceFigures();
  EXPECT_EQ(f.name, gpuInfo().name);
  EXPECT_EQ(f.uuid.rfind("GPU-", 0), 0u) << f.uuid;
  EXPECT_GT(f.multiprocessors, 0);
  EXPECT_GT(f.smClockMHz, 500);
  EXPECT_GT(f.memoryClockMHz, 500);
  EXPECT_GE(f.memoryBusWidthBits, 64);
  ASSERT_GT(f.copyBytesPerSecond, 0.0) << "the copy was not measured";
  const std::optional<DevicePeaks> peaks = devicePeaksOf(f);
  ASSERT_TRUE(peaks);
  // The driver's figure is a ceiling: a copy reaches most of it and never passes it.
  EXPECT_LE(f.copyBytesPerSecond, peaks->driverBytesPerSecond * 1.02) << peaks->source;
  EXPECT_GE(f.copyBytesPerSecond, peaks->driverBytesPerSecond * 0.5) << peaks->source;
  if (f.computeMajor >= 8 && f.computeMajor <= 12) {
    EXPECT_GT(peaks->tf32FlopsPerSecond, peaks->fp32FlopsPerSecond);
  }
  // Kept in the cache under the device's key, and given to the parent whole through the JSON.
  const nlohmann::json cache = nlohmann::json::parse(std::ifstream(copyBandwidthCacheFile()));
  EXPECT_DOUBLE_EQ(cache["devices"][copyBandwidthCacheKey(f)]["copy_bytes_per_second"].get<double>(),
                   f.copyBytesPerSecond);
  const std::optional<DevicePeaks> sent = devicePeaksFromJson(deviceFiguresToJson(f));
  ASSERT_TRUE(sent);
  EXPECT_DOUBLE_EQ(sent->bytesPerSecond, peaks->bytesPerSecond);
  EXPECT_DOUBLE_EQ(sent->flopsPerSecond, peaks->flopsPerSecond);
}

}  // namespace
}  // namespace convscope
