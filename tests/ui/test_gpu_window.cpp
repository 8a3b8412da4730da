// The window's GPU paths, run on a machine with a GPU (scripts/device.sh runs them on the lent
// H100; without a GPU every test here skips and says why): live inference with every GPU
// variant agrees with the double-precision CPU reference, the Profile tab fills its kernel
// table, and a small GPU sweep produces timings. With CONVSCOPE_SCREENSHOT_DIR set, each test
// also leaves a screenshot of what it checked there, to look at.
#include <gtest/gtest.h>

#include <QDir>
#include <QTableWidget>

#include <algorithm>
#include <cmath>

#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/benchmark.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/timing_line_chart.h"
#include "ui/profile/profile_panel.h"
#include "ui/timing/sweep_controls.h"
#include "ui/timing/timing_panel.h"

namespace convscope::testing {
namespace {

// A macro, not a function: GPU_TEST_SKIP() returns from the function it is written in.
#define REQUIRE_GPU() \
  if (!gpuInfo().usable) GPU_TEST_SKIP() << "no GPU here: " << gpuInfo().unusableReason

std::vector<std::string> gpuVariants() {
  std::vector<std::string> ids;
  for (const ConvVariant& variant : convVariants())
    if (variant.runsOnGpu() && variant.unavailableReason().empty()) ids.push_back(variant.id);
  return ids;
}

void saveScreenshot(QWidget& window, const QString& name) {
  const QString dir = qEnvironmentVariable("CONVSCOPE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  QDir().mkpath(dir);
  // The charts replot on the event loop (QCustomPlot's queued replot): let them, or the picture
  // shows the chart as it was before the last change (an empty sweep chart, once).
  QTest::qWait(100);
  EXPECT_TRUE(window.grab().save(dir + "/" + name + ".png")) << "cannot save a screenshot in " << dir.toStdString();
}

TEST(GpuWindow, EveryGpuVariantShowsTheSameProbabilitiesAsTheCpuReference) {
  REQUIRE_GPU();
  const std::vector<std::string> variants = gpuVariants();
  ASSERT_GE(variants.size(), 9u) << "the nine course GPU variants (cuDNN too where it is built)";
  auto window = openWindow();
  const std::vector<int> images = {0, 1, 42, 9999};
  for (const int index : images) {
    ASSERT_TRUE(window->selectVariant("cpu-reference")) << window->lastError().toStdString();
    ASSERT_TRUE(window->selectTestImage(index));
    ASSERT_TRUE(waitForInference(*window));
    const auto reference = window->inference()->lastOutcome();
    ASSERT_NE(reference, nullptr);
    for (const std::string& id : variants) {
      SCOPED_TRACE(id + ", test image " + std::to_string(index));
      ASSERT_TRUE(window->selectVariant(QString::fromStdString(id))) << window->lastError().toStdString();
      ASSERT_TRUE(waitForInference(*window));
      const auto outcome = window->inference()->lastOutcome();
      ASSERT_NE(outcome, nullptr);
      EXPECT_EQ(outcome->variant, id);
      EXPECT_EQ(outcome->deviceName, gpuInfo().name) << "ran on the GPU";
      ASSERT_EQ(outcome->probabilities.size(), reference->probabilities.size());
      // FP32 variants to 1e-4; TF32 ones (inputs rounded to 11 bits) to twice their conv tolerance.
      const double tolerance = std::max(1e-4, 2 * findConvVariant(id).relativeTolerance);
      for (size_t k = 0; k < reference->probabilities.size(); ++k)
        EXPECT_NEAR(outcome->probabilities[k], reference->probabilities[k], tolerance) << "class " << k;
      EXPECT_EQ(outcome->topClass(), reference->topClass());
      ASSERT_EQ(outcome->layers.size(), reference->layers.size()) << "every layer's maps are captured";
      ASSERT_FALSE(outcome->convTimes.empty());
      for (const ConvLayerTime& time : outcome->convTimes) EXPECT_GT(time.seconds, 0.0);
      EXPECT_TRUE(window->lastError().isEmpty()) << window->lastError().toStdString();
      if (index == 0) saveScreenshot(*window, QString::fromStdString("explore-" + id));
    }
  }
}

TEST(GpuWindow, TheProfileTabFillsTheKernelTableForEveryGpuVariant) {
  REQUIRE_GPU();
  auto window = openWindow();
  window->selectTab("profile");
  for (const std::string& id : gpuVariants()) {
    SCOPED_TRACE(id);
    ASSERT_TRUE(window->selectVariant(QString::fromStdString(id)));
    ui::ProfilePanel* profile = window->view<ui::ProfilePanel>("profile");
    ASSERT_TRUE(profile->canProfile()) << profile->message().toStdString();
    profile->table()->setRowCount(0);
    profile->runProfile();
    ASSERT_TRUE(QTest::qWaitFor([&] { return profile->table()->rowCount() > 0; }, 60000))
        << window->lastError().toStdString();
    // The course's table: every row names a kernel; the "Time (%)" column adds up to the whole.
    QTableWidget* table = profile->table();
    double share = 0.0;
    for (int row = 0; row < table->rowCount(); ++row) {
      EXPECT_FALSE(table->item(row, table->columnCount() - 1)->text().isEmpty()) << "row " << row << " names a kernel";
      share += table->item(row, 1)->text().remove('%').trimmed().toDouble();
    }
    EXPECT_NEAR(share, 100.0, 0.1 * table->rowCount());
    if (id == "gpu-restrict-unroll") saveScreenshot(*window, "profile-gpu-restrict-unroll");
  }
}

TEST(GpuWindow, ASmallGpuSweepTimesEveryVariantAtEveryBatch) {
  REQUIRE_GPU();
  auto window = openWindow();
  window->selectTab("timing");
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  QStringList ids;
  for (const std::string& id : gpuVariants()) ids << QString::fromStdString(id);
  timing->controls()->setCheckedVariants(ids);
  timing->controls()->setBatches("100, 1000");
  ASSERT_TRUE(timing->startSweep()) << window->lastError().toStdString();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 300000));
  ASSERT_NE(timing->report(), nullptr);
  EXPECT_EQ(timing->report()->runs.size(), static_cast<size_t>(ids.size() * 2));
  for (const BenchmarkRun& run : timing->report()->runs) {
    SCOPED_TRACE(run.variant + " batch " + std::to_string(run.batch));
    ASSERT_EQ(run.layers.size(), findConvVariant(run.variant).runNetwork ? 1u : 2u) << "one time for a whole network";
    for (const LayerBenchmark& layer : run.layers)
      EXPECT_TRUE(std::isfinite(layer.opTime.median) && layer.opTime.median > 0.0);
    EXPECT_GT(run.accuracy, 0.85) << "course-high is 0.9065 on the whole test set";
  }
  EXPECT_EQ(timing->lineChart()->graphCount(), ids.size());
  saveScreenshot(*window, "timing-gpu-sweep");
}

}  // namespace
}  // namespace convscope::testing
