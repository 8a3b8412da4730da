// Students' kernels on the GPU, run as ConvScope runs them: `convscope-cli kernel run-isolated` in
// a child process with a time limit (runUserKernelJob). The templates pass the check, reproduce
// the course's accuracy on the test set and are timed at batches 100, 1,000 and 10,000; a kernel
// with an off-by-one halo fails at the right coordinates; an out-of-bounds write and an endless
// loop end their own process only, with a message that says what happened, and the next check
// works. The failing map shows each bug's pattern (a stride ignored, the left padding forgotten,
// rows past the 8th of each tile unwritten); a kernel that prints once per output passes with its
// output capped; a trap, an assertion and an out-of-bounds write each get their message in the
// student's terms. The fair timing times the templates with every repetition checked and catches
// the kernels that game a timer (a cached result, a write on the first call only, no write).
// Skips, saying why, where no GPU can be used.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "app/core/conv/conv_check.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/user_kernel_job.h"
#include "gpu/user_kernel.h"
#include "gpu/user_kernel_inspect.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

const std::filesystem::path kTemplates = std::filesystem::path(CONVSCOPE_SOURCE_DIR) / "examples/kernels";
const std::filesystem::path kKernels = std::filesystem::path(CONVSCOPE_TEST_DATA_DIR) / "kernels";

// A message about a student's kernel names their file and nothing of ConvScope or CUDA's API.
void expectStudentTerms(const std::string& message, const std::filesystem::path& file) {
  EXPECT_EQ(message.rfind(file.string(), 0), 0u) << message;
  EXPECT_EQ(message.find("gpu/"), std::string::npos) << message;
  EXPECT_FALSE(std::regex_search(message, std::regex(R"(\bcu[A-Z]\w*|\bcuda[A-Z]\w*)"))) << message;
}

// "a-b, c" from the rows for which `bad` holds: the test's own ranges.
std::string rangesOf(int count, const std::function<bool(int)>& bad) {
  std::string text;
  for (int i = 0; i < count;) {
    if (!bad(i)) {
      ++i;
      continue;
    }
    int last = i;
    while (last + 1 < count && bad(last + 1)) ++last;
    if (!text.empty()) text.append(", ");
    text.append(std::to_string(i));
    if (last > i) text.append("-").append(std::to_string(last));
    i = last + 1;
  }
  return text.size() && text == "0-" + std::to_string(count - 1) ? "all" : text;
}

class UserKernelsOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpuInfo().usable) GPU_TEST_SKIP() << "no GPU can run students' kernels here: " << gpuInfo().unusableReason;
    if (const std::string reason = gpu::userKernelCompilerUnavailableReason(); !reason.empty())
      GPU_TEST_SKIP() << reason;
  }

  static UserKernelJob checkJob(const std::filesystem::path& file, bool network) {
    UserKernelJob job;
    job.program = CONVSCOPE_CLI_PATH;
    job.file = file;
    job.seed = 20261124;
    job.network = network;
    job.timeLimitSeconds = 120;
    return job;
  }
};

TEST_F(UserKernelsOnGpu, TheTemplatesPassTheCheckAndReproduceTheCourseAccuracy) {
  for (const char* name : {"naive_conv.cu", "tiled_conv.cu"}) {
    SCOPED_TRACE(name);
    const UserKernelJobResult result = runUserKernelJob(checkJob(kTemplates / name, true), {});
    EXPECT_TRUE(result.passed) << result.report << result.childOutput;
    // Every shape but those the file's macros decline (the tiled one: strided layers).
    const UserKernelLaunch launch = readUserKernelSource(kTemplates / name).launch;
    int computable = 0;
    for (const ConvProblem& p : checkShapesOf(checkJob(kTemplates / name, true), 20261124))
      computable += launch.unsupportedReason(p).empty();
    EXPECT_EQ(result.shapesChecked, computable) << result.summary;
    EXPECT_GE(computable, 6);
    ASSERT_TRUE(result.accuracy) << result.report;
    ASSERT_TRUE(result.courseAccuracy) << result.report;
    // FP32 products in its own order: the predictions of the course's FP32 variants, give or take
    // a near-tie.
    EXPECT_NEAR(*result.accuracy, *result.courseAccuracy, 2e-4) << result.report;
    std::printf("%s", result.report.c_str());
  }
}

TEST_F(UserKernelsOnGpu, TheTemplatesAreTimedAtTheCourseBatches) {
  for (const char* name : {"naive_conv.cu", "tiled_conv.cu"}) {
    SCOPED_TRACE(name);
    UserKernelJob job = checkJob(kTemplates / name, false);
    job.task = UserKernelJob::Task::Bench;
    job.repeats = 3;
    job.warmups = 1;
    job.timeLimitSeconds = 300;
    const UserKernelJobResult result = runUserKernelJob(job, {});
    ASSERT_TRUE(result.benchmark) << result.report << result.childOutput;
    ASSERT_EQ(result.benchmark->runs.size(), 3u);
    const std::string id = "user-" + std::filesystem::path(name).stem().string();
    const int batches[] = {100, 1000, 10000};
    for (size_t i = 0; i < 3; ++i) {
      const BenchmarkRun& run = result.benchmark->runs[i];
      EXPECT_EQ(run.variant, id);
      EXPECT_EQ(run.batch, batches[i]);
      ASSERT_FALSE(run.layers.empty());
      for (const LayerBenchmark& layer : run.layers) {
        EXPECT_GT(layer.opTime.median, 0.0);
        EXPECT_EQ(layer.ranVariant, id) << layer.fallbackReason;
      }
      EXPECT_GT(run.accuracy, 0.8);
    }
  }
}

// The fair timing (fair_timing.h): the templates are timed at the course's batches, every layer
// checked, with the GPU and driver named; the kernels that game a timer are caught.
UserKernelJob fairTimingJob(const std::filesystem::path& file) {
  UserKernelJob job;
  job.program = CONVSCOPE_CLI_PATH;
  job.file = file;
  job.seed = 20261126;
  job.task = UserKernelJob::Task::Timing;
  job.repeats = 5;
  job.warmups = 1;
  job.timeLimitSeconds = 300;
  return job;
}

TEST_F(UserKernelsOnGpu, TheTemplatesAreTimedFairlyWithEveryRepetitionChecked) {
  for (const char* name : {"naive_conv.cu", "tiled_conv.cu"}) {
    SCOPED_TRACE(name);
    const UserKernelJobResult result = runUserKernelJob(fairTimingJob(kTemplates / name), {});
    ASSERT_TRUE(result.passed) << result.report << result.childOutput;
    EXPECT_EQ(result.timingDevice.name, gpuInfo().name);
    EXPECT_EQ(result.timingDevice.driver, gpuInfo().driverVersion);
    EXPECT_FALSE(result.timingDevice.runtime.empty());
    EXPECT_GT(result.timingDevice.smClockMHz, 500);
    EXPECT_GT(result.timingDevice.memoryClockMHz, 500);
    std::set<int> batches;
    for (const UserKernelJobResult::LayerTiming& t : result.timings) {
      batches.insert(t.batch);
      EXPECT_EQ(t.timing.rejected, "") << t.timing.problem.describe();
      EXPECT_EQ(t.timing.repetitions, 5);
      EXPECT_GT(t.timing.time.min, 0.0);
      EXPECT_LE(t.timing.time.min, t.timing.time.median);
      EXPECT_LE(t.timing.time.median, t.timing.time.max);
      EXPECT_EQ(t.timing.problem.batch, std::min(t.batch, 10000));
      // A naive kernel is far from the roofline: never below the physical floor, which every GPU
      // has (its peaks come from the device's own figures).
      EXPECT_GT(t.timing.floorSeconds, 0.0);
      EXPECT_FALSE(t.timing.belowPhysicalFloor) << t.timing.time.median << " < " << t.timing.floorSeconds;
      EXPECT_TRUE(t.timing.ranked());
    }
    EXPECT_EQ(batches, (std::set<int>{100, 1000, 10000})) << result.report;
    const nlohmann::json j = userKernelResultToJson(fairTimingJob(kTemplates / name), result);
    EXPECT_EQ(j["timing"]["device"]["name"], gpuInfo().name);
    EXPECT_EQ(j["timing"]["layers"].size(), result.timings.size());
    std::printf("%s", result.report.c_str());
  }
}

TEST_F(UserKernelsOnGpu, AKernelThatCachesItsResultPassesTheCheckButNotTheTiming) {
  const std::filesystem::path file = kKernels / "caches_result.cu";
  // The check's shapes all differ: the cache never answers there.
  const UserKernelJobResult check = runUserKernelJob(checkJob(file, false), {});
  EXPECT_TRUE(check.passed) << check.report << check.childOutput;
  const UserKernelJobResult timing = runUserKernelJob(fairTimingJob(file), {});
  EXPECT_FALSE(timing.passed) << timing.report;
  expectStudentTerms(timing.failure, file);
  EXPECT_NE(timing.failure.find("its output at repetition 1 of"), std::string::npos) << timing.failure;
  EXPECT_NE(timing.failure.find("was wrong: a kernel must compute every call"), std::string::npos) << timing.failure;
  EXPECT_NE(timing.failure.find("never written"), std::string::npos) << timing.failure;
  // Where a repetition is one launch, the cache answers it and it is refused. A batch the launcher
  // splits into chunks of images (grid z) alternates shapes, so the cache may miss and the kernel
  // really computes every call: nothing to refuse there.
  int oneLaunch = 0;
  for (const UserKernelJobResult::LayerTiming& t : timing.timings)
    if (int64_t{t.timing.problem.batch} * t.timing.problem.outChannels <= 65535) {
      ++oneLaunch;
      EXPECT_FALSE(t.timing.ranked()) << t.timing.problem.describe();
    }
  EXPECT_GE(oneLaunch, 2);
}

TEST_F(UserKernelsOnGpu, AKernelThatWritesOnlyOnItsFirstCallIsCaughtByBoth) {
  const std::filesystem::path file = kKernels / "writes_first_call_only.cu";
  const UserKernelJobResult check = runUserKernelJob(checkJob(file, false), {});
  EXPECT_FALSE(check.passed);
  ASSERT_TRUE(check.failureMap) << check.report;
  EXPECT_EQ(check.shapes.at(0).outcome, "passed");  // its first call
  EXPECT_EQ(check.failureMap->neverWritten, check.failureMap->total());
  expectStudentTerms(check.failure, file);
  const UserKernelJobResult timing = runUserKernelJob(fairTimingJob(file), {});
  EXPECT_FALSE(timing.passed);
  expectStudentTerms(timing.failure, file);
  EXPECT_NE(timing.failure.find("a kernel must compute every call"), std::string::npos) << timing.failure;
}

TEST_F(UserKernelsOnGpu, AKernelThatWritesNothingIsNeverTimed) {
  const std::filesystem::path file = kKernels / "writes_nothing.cu";
  const UserKernelJobResult check = runUserKernelJob(checkJob(file, false), {});
  EXPECT_FALSE(check.passed);
  ASSERT_TRUE(check.failureMap);
  EXPECT_EQ(check.failureMap->neverWritten, check.failureMap->total());
  const UserKernelJobResult timing = runUserKernelJob(fairTimingJob(file), {});
  EXPECT_FALSE(timing.passed);
  expectStudentTerms(timing.failure, file);
  EXPECT_NE(timing.failure.find("its output at repetition 1 of"), std::string::npos) << timing.failure;
  EXPECT_NE(timing.failure.find("never written"), std::string::npos) << timing.failure;
}

// A patch sized for 5x5 windows passes every random shape (1x1 to 5x5) and is wrong on the course
// model's 7x7 layers: the check runs those layers too, so it fails there, before the network.
TEST_F(UserKernelsOnGpu, ATileSizedForSmallerWindowsFailsTheCheckOnTheModelsOwnLayer) {
  const UserKernelJob job = checkJob(kKernels / "tile_for_5x5.cu", false);
  const UserKernelJobResult result = runUserKernelJob(job, {});
  EXPECT_FALSE(result.passed) << result.report;
  ASSERT_TRUE(result.firstWrong) << result.report << result.childOutput;
  // The failing shape is one of the model's own (7x7), not a random one.
  const std::vector<ConvProblem> shapes = checkShapesOf(job, job.seed);
  ASSERT_GE(shapes.size(), 2u);
  EXPECT_EQ(shapes[1].kernelHeight, 7);
  bool failedOnSevenBySeven = false;
  for (const UserKernelJobResult::Shape& s : result.shapes)
    failedOnSevenBySeven =
        failedOnSevenBySeven || (s.outcome == "failed" && s.shape.find("kernel 7x7") != std::string::npos);
  EXPECT_TRUE(failedOnSevenBySeven) << result.report;
}

TEST_F(UserKernelsOnGpu, AnOffByOneHaloFailsAtTheRightCoordinates) {
  const UserKernelJobResult result = runUserKernelJob(checkJob(kKernels / "off_by_one_halo.cu", true), {});
  EXPECT_FALSE(result.passed);
  EXPECT_FALSE(result.processDied) << result.report;
  ASSERT_TRUE(result.firstWrong) << result.report << result.childOutput;
  // The first shape has no padding and stride 1: output column w reads input columns w..w+K-1,
  // so the input's last column is first needed at w = outWidth - 1 of row 0 of map 0 of image 0.
  const ConvProblem first = randomCheckShapes(20261124, 1).front();
  EXPECT_EQ(result.firstWrongN, 0);
  EXPECT_EQ(result.firstWrongM, 0);
  EXPECT_EQ(result.firstWrongH, 0);
  EXPECT_EQ(result.firstWrongW, first.outWidth() - 1);
  EXPECT_GT(std::fabs(result.got - result.expected), 1e-3);
  EXPECT_NE(result.report.find("[n=0][m=0][h=0][w=" + std::to_string(first.outWidth() - 1) + "]"), std::string::npos)
      << result.report;
}

TEST_F(UserKernelsOnGpu, AnOutOfBoundsWriteIsContainedAndTheNextCheckWorks) {
  const UserKernelJobResult bad = runUserKernelJob(checkJob(kKernels / "out_of_bounds_write.cu", false), {});
  EXPECT_FALSE(bad.passed);
  EXPECT_TRUE(bad.processDied) << bad.report;
  EXPECT_NE(bad.failure.find("illegal memory access"), std::string::npos) << bad.report << bad.childOutput;
  expectStudentTerms(bad.failure, kKernels / "out_of_bounds_write.cu");
  EXPECT_NE(bad.failure.find("read or wrote outside its buffers"), std::string::npos) << bad.failure;
  const UserKernelJobResult next = runUserKernelJob(checkJob(kTemplates / "naive_conv.cu", false), {});
  EXPECT_TRUE(next.passed) << next.report << next.childOutput;
}

TEST_F(UserKernelsOnGpu, AnEndlessLoopIsStoppedAtTheTimeLimitAndTheNextCheckWorks) {
  UserKernelJob job = checkJob(kKernels / "endless_loop.cu", false);
  job.timeLimitSeconds = 20;
  const UserKernelJobResult bad = runUserKernelJob(job, {});
  EXPECT_FALSE(bad.passed);
  EXPECT_TRUE(bad.processDied);
  EXPECT_NE(bad.failure.find("time limit"), std::string::npos) << bad.report;
  EXPECT_NE(bad.failure.find("20 s"), std::string::npos) << bad.report;
  expectStudentTerms(bad.failure, kKernels / "endless_loop.cu");
  const UserKernelJobResult next = runUserKernelJob(checkJob(kTemplates / "naive_conv.cu", false), {});
  EXPECT_TRUE(next.passed) << next.report << next.childOutput;
}

TEST_F(UserKernelsOnGpu, RowsPastTheEighthOfEachTileShowAsNeverWritten) {
  const UserKernelJobResult r = runUserKernelJob(checkJob(kKernels / "leaves_rows_unwritten.cu", false), {});
  EXPECT_FALSE(r.passed);
  ASSERT_TRUE(r.failureMap) << r.report << r.childOutput;
  const ConvFailureMap& map = *r.failureMap;
  int rows = 0;
  for (int h = 0; h < map.height; ++h) rows += h % 16 >= 8;
  EXPECT_EQ(map.neverWritten, rows * map.width) << r.report;
  EXPECT_EQ(map.wrong + map.notANumber, 0) << r.report;
  EXPECT_EQ(map.badRows(), rangesOf(map.height, [](int h) { return h % 16 >= 8; })) << r.report;
  EXPECT_EQ(map.badColumns(), "all");
  EXPECT_NE(r.report.find("rows 8-"), std::string::npos) << r.report;
  // The JSON says the same.
  const nlohmann::json j = userKernelResultToJson(checkJob(kKernels / "leaves_rows_unwritten.cu", false), r);
  EXPECT_EQ(j["status"], "failed");
  EXPECT_EQ(j["failingMap"]["counts"]["neverWritten"], map.neverWritten);
  EXPECT_EQ(j["failingMap"]["badRows"], map.badRows());
  std::printf("%s", r.report.c_str());
}

TEST_F(UserKernelsOnGpu, AnIgnoredStrideLeavesOnlyTheOriginRightOnAStridedShape) {
  const UserKernelJobResult r = runUserKernelJob(checkJob(kKernels / "ignores_stride.cu", false), {});
  EXPECT_FALSE(r.passed);
  ASSERT_TRUE(r.failureMap) << r.report << r.childOutput;
  const ConvFailureMap& map = *r.failureMap;
  EXPECT_TRUE(map.problem.strideHeight > 1 || map.problem.strideWidth > 1) << map.problem.describe();
  EXPECT_EQ(map.at(0, 0), ElementVerdict::Ok) << r.report;
  EXPECT_EQ(map.neverWritten, 0);
  EXPECT_GT(map.wrong, map.total() / 2) << r.report;
  std::printf("%s", r.report.c_str());
}

TEST_F(UserKernelsOnGpu, AForgottenLeftPaddingLeavesTheLeftColumnsUnwritten) {
  const UserKernelJobResult r = runUserKernelJob(checkJob(kKernels / "forgets_left_padding.cu", false), {});
  EXPECT_FALSE(r.passed);
  ASSERT_TRUE(r.failureMap) << r.report << r.childOutput;
  const ConvFailureMap& map = *r.failureMap;
  const ConvProblem& p = map.problem;
  ASSERT_GT(p.padLeft, 0) << p.describe();
  const int columns = (p.padLeft + p.strideWidth - 1) / p.strideWidth;  // w * stride < padLeft
  EXPECT_EQ(map.badColumns(), rangesOf(map.width, [&](int w) { return w < columns; })) << r.report;
  EXPECT_EQ(map.badRows(), "all");
  EXPECT_EQ(map.neverWritten, columns * map.height) << r.report;
  std::printf("%s", r.report.c_str());
}

// The check of a kernel that prints at every output: the shapes pass, and what it printed is kept,
// capped. Only the check: the kernel prints in every pass (the module checked is the module run,
// and it cannot tell the passes apart), and a line for each output of 10,000 images takes minutes
// (300 s were not enough on an H200): the message for that is KernelJob.ATimeLimitAfterPrinting...
TEST_F(UserKernelsOnGpu, APrintingKernelPassesTheCheckWithItsOutputCapped) {
  UserKernelJob job = checkJob(kKernels / "prints_every_output.cu", false);
  const UserKernelJobResult r = runUserKernelJob(job, {});
  EXPECT_TRUE(r.passed) << r.report << r.childOutput;
  EXPECT_TRUE(r.kernelOutput.truncated());
  EXPECT_EQ(r.kernelOutput.lines.size(), static_cast<size_t>(kKernelOutputLineCap));
  EXPECT_GT(r.kernelOutput.totalLines, kKernelOutputLineCap);
  EXPECT_EQ(r.kernelOutput.lines[0].rfind("output[", 0), 0u) << r.kernelOutput.lines[0];
  EXPECT_NE(r.report.find("The kernel printed " + std::to_string(r.kernelOutput.totalLines)), std::string::npos);
}

TEST_F(UserKernelsOnGpu, ATrapSaysTrappedInTheStudentsFile) {
  const UserKernelJobResult r = runUserKernelJob(checkJob(kKernels / "traps.cu", false), {});
  EXPECT_FALSE(r.passed);
  expectStudentTerms(r.failure, kKernels / "traps.cu");
  EXPECT_NE(r.failure.find("trapped"), std::string::npos) << r.failure << r.childOutput;
  const UserKernelJobResult next = runUserKernelJob(checkJob(kTemplates / "naive_conv.cu", false), {});
  EXPECT_TRUE(next.passed) << next.report << next.childOutput;
}

TEST_F(UserKernelsOnGpu, AFailedAssertionGivesItsLineAndText) {
  const std::filesystem::path file = kKernels / "asserts.cu";
  const UserKernelJobResult r = runUserKernelJob(checkJob(file, false), {});
  EXPECT_FALSE(r.passed);
  expectStudentTerms(r.failure, file);
  EXPECT_NE(r.failure.find(file.string() + ":11: assertion failed: s.kernelHeight > 99"), std::string::npos)
      << r.failure << "\n"
      << r.kernelOutput.text() << r.childOutput;
}

TEST_F(UserKernelsOnGpu, InfoOnTheGpuComesFromTheDriverAndAgreesWithTheCompiler) {
  const UserKernelSource source = readUserKernelSource(kTemplates / "tiled_conv.cu");
  const gpu::UserKernelInspection here = gpu::inspectUserKernel(source, "");
  ASSERT_TRUE(here.kernel.ok()) << here.kernel.errorText();
  ASSERT_TRUE(here.occupancy);
  EXPECT_FALSE(here.occupancy->computed) << here.occupancyFrom;
  EXPECT_NE(here.figuresFrom.find("the driver"), std::string::npos);
  // The compiler's report for the same architecture: the same registers and shared memory, and
  // where the table has this GPU, the same blocks per SM.
  KernelResources compiler = parsePtxasReport(here.kernel.log, here.kernel.loweredName);
  // NVRTC answers a program it compiled before from the driver's compute cache, without ptxas and
  // its report, unless the compile says --no-cache (tests/core/test_kernel_tools.cpp compiles twice).
  ASSERT_TRUE(compiler.found) << "no ptxas report for " << here.kernel.loweredName << " in NVRTC's log:\n"
                              << here.kernel.log;
  EXPECT_EQ(here.resources.registers, compiler.registers);
  EXPECT_EQ(here.resources.sharedStaticBytes, compiler.sharedStaticBytes);
  if (const auto limits = architectureLimits(here.kernel.architecture)) {
    const BlockOccupancy computed =
        computeOccupancy(*limits, source.launch.blockX * source.launch.blockY, here.resources);
    EXPECT_EQ(here.occupancy->blocksPerSm, computed.blocksPerSm) << here.kernel.architecture;
  }
}

}  // namespace
}  // namespace convscope
