// Students' kernels on the GPU, run as ConvScope runs them: `convscope-cli kernel run-isolated` in
// a child process with a time limit (runUserKernelJob). The templates pass the check, reproduce
// the course's accuracy on the test set and are timed at batches 100, 1,000 and 10,000; a kernel
// with an off-by-one halo fails at the right coordinates; an out-of-bounds write and an endless
// loop end their own process only, with a message that says what happened, and the next check
// works. Skips, saying why, where no GPU can be used.
#include <gtest/gtest.h>

#include <cmath>

#include "app/core/conv/conv_check.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/engine/gpu_platform.h"
#include "app/core/engine/user_kernel_job.h"
#include "gpu/user_kernel.h"

namespace convscope {
namespace {

const std::filesystem::path kTemplates = std::filesystem::path(CONVSCOPE_SOURCE_DIR) / "examples/kernels";
const std::filesystem::path kKernels = std::filesystem::path(CONVSCOPE_TEST_DATA_DIR) / "kernels";

class UserKernelsOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpuInfo().usable) GTEST_SKIP() << "no GPU can run students' kernels here: " << gpuInfo().unusableReason;
    if (const std::string reason = gpu::userKernelCompilerUnavailableReason(); !reason.empty()) GTEST_SKIP() << reason;
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
    for (const ConvProblem& p : randomCheckShapes(20261124, 12)) computable += launch.unsupportedReason(p).empty();
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
  const UserKernelJobResult next = runUserKernelJob(checkJob(kTemplates / "naive_conv.cu", false), {});
  EXPECT_TRUE(next.passed) << next.report << next.childOutput;
}

}  // namespace
}  // namespace convscope
