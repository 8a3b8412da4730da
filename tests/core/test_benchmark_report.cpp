// Runs joining a report (mergeRuns) and the op-time sums a kernel's history keeps of one.
#include <gtest/gtest.h>

#include "app/core/engine/benchmark.h"

namespace convscope {
namespace {

BenchmarkRun runOf(const std::string& variant, int batch, double opTime) {
  BenchmarkRun run;
  run.variant = variant;
  run.batch = batch;
  LayerBenchmark layer;
  layer.opTime.median = opTime;
  run.layers = {layer};
  return run;
}

BenchmarkReport reportOf(std::vector<BenchmarkRun> runs) {
  BenchmarkReport report;
  report.runs = std::move(runs);
  return report;
}

double opTimeOf(const BenchmarkReport& report, const std::string& variant, int batch) {
  for (const BenchmarkRun& run : report.runs)
    if (run.variant == variant && run.batch == batch) return run.layers.front().opTime.median;
  return -1.0;
}

TEST(MergeRuns, AVariantRetimedReplacesAllItsEarlierRunsAndNoOtherVariants) {
  BenchmarkReport shown = reportOf({runOf("gpu-a", 100, 1.0), runOf("user-k", 100, 2.0), runOf("user-k", 1000, 3.0)});
  const BenchmarkReport retimed = reportOf({runOf("user-k", 10, 0.5)});
  EXPECT_EQ(mergeRuns(shown, retimed, RunMerge::kReplaceTheVariants), 1);
  ASSERT_EQ(shown.runs.size(), 2u) << "its runs at 100 and 1000 give way to the one at 10";
  EXPECT_EQ(opTimeOf(shown, "gpu-a", 100), 1.0);
  EXPECT_EQ(opTimeOf(shown, "user-k", 10), 0.5);
  EXPECT_EQ(opTimeOf(shown, "user-k", 100), -1.0);
}

TEST(MergeRuns, PerBatchTheRuleDecidesWhichMeasurementOfASameRunStays) {
  const BenchmarkReport shown = reportOf({runOf("gpu-a", 100, 1.0), runOf("gpu-a", 1000, 9.0)});
  const BenchmarkReport sweep = reportOf({runOf("gpu-a", 100, 1.5), runOf("gpu-b", 100, 0.7)});
  BenchmarkReport newer = shown;
  EXPECT_EQ(mergeRuns(newer, sweep, RunMerge::kNewerPerBatch), 2);
  EXPECT_EQ(newer.runs.size(), 3u);
  EXPECT_EQ(opTimeOf(newer, "gpu-a", 100), 1.5);
  EXPECT_EQ(opTimeOf(newer, "gpu-a", 1000), 9.0);
  BenchmarkReport kept = shown;
  EXPECT_EQ(mergeRuns(kept, sweep, RunMerge::kShownPerBatch), 1) << "only gpu-b joins";
  EXPECT_EQ(opTimeOf(kept, "gpu-a", 100), 1.0);
  EXPECT_EQ(opTimeOf(kept, "gpu-b", 100), 0.7);
}

TEST(OpTimeSums, OnePerBatchTheSumOfItsLayersFromTheFirstRun) {
  BenchmarkRun three = runOf("k", 100, 0.001);
  three.layers.push_back(three.layers.front());
  three.layers.back().opTime.median = 0.004;
  const BenchmarkReport report = reportOf({three, runOf("k", 100, 7.0), runOf("k", 10, 0.25)});
  const std::vector<KernelOpTime> sums = opTimeSumsPerBatch(report);
  ASSERT_EQ(sums.size(), 2u);
  EXPECT_EQ(sums[0].batch, 100);
  EXPECT_DOUBLE_EQ(sums[0].seconds, 0.005);
  EXPECT_EQ(sums[1].batch, 10);
  EXPECT_DOUBLE_EQ(sums[1].seconds, 0.25);
}

}  // namespace
}  // namespace convscope
