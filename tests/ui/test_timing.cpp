// The timing tab: benchmark JSON files (the CLI's and synthetic ones with any number of
// variants) become one line per variant with the right points, bars at one batch size and a
// table; sweeps run on a worker thread while the window stays responsive, and cancel.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QProgressBar>
#include <QTimer>

#include "engine/benchmark.h"
#include "ui/charts/benchmark_series.h"
#include "ui/charts/timing_bar_chart.h"
#include "ui/charts/timing_line_chart.h"
#include "ui/common/error_banner.h"
#include "ui/timing/sweep_controls.h"
#include "ui/timing/timing_panel.h"
#include "ui/timing/timing_table.h"
#include "ui_test_support.h"

namespace convscope::testing {
namespace {

// Eleven variants (nine GPU ones this machine may lack, and one no registry knows), four batch
// sizes, two conv layers with op times that encode variant, batch and layer.
BenchmarkReport syntheticReport() {
  BenchmarkReport report;
  report.model = "course-high";
  report.device = "NVIDIA H100 80GB HBM3";
  report.repeats = 20;
  const std::vector<std::string> variants = {"cpu-reference",         "cpu-im2col-gemm",      "gpu-baseline",
                                             "gpu-tiled-shared",      "gpu-constant-weights", "gpu-unroll-gemm",
                                             "gpu-fused-unroll-gemm", "gpu-atomics",          "gpu-per-layer",
                                             "gpu-restrict-unroll",   "someone-elses-kernel"};
  for (size_t v = 0; v < variants.size(); ++v)
    for (int batch : {1, 10, 100, 10000}) {
      BenchmarkRun run;
      run.variant = variants[v];
      run.batch = batch;
      run.accuracy = 0.9;
      for (int layer = 0; layer < 2; ++layer) {
        LayerBenchmark l;
        l.node = layer == 0 ? "/0/Conv" : "/3/Conv";
        l.ranVariant = run.variant;
        const double seconds = 1e-6 * (v + 1) * batch * (layer + 1);
        l.opTime = {seconds, seconds * 0.9, seconds * 1.1};
        run.layers.push_back(l);
      }
      run.inference = {0.01, 0.01, 0.01};
      report.runs.push_back(run);
    }
  return report;
}

TEST(Timing, ABenchmarkJsonBecomesOneGraphPerVariantWithTheRightPoints) {
  auto window = openWindow();
  QTemporaryDir dir;
  const QString path = dir.filePath("gpu-bench.json");
  const BenchmarkReport report = syntheticReport();
  writeBenchmarkJson(report, path.toStdString());

  ui::TimingPanel* timing = window->timing();
  ASSERT_TRUE(window->openBenchmark(path)) << window->lastError().toStdString();
  ui::TimingLineChart* chart = timing->lineChart();
  ASSERT_EQ(chart->graphCount(), 11);
  const std::vector<std::string> variants = ui::variantsIn(report);
  const std::vector<double> batches = {1, 10, 100, 10000};
  for (int g = 0; g < chart->graphCount(); ++g) {
    SCOPED_TRACE(variants[static_cast<size_t>(g)]);
    EXPECT_EQ(chart->variants()[static_cast<size_t>(g)], variants[static_cast<size_t>(g)]);
    EXPECT_EQ(chart->graph(g)->name(), ui::variantDisplayName(variants[static_cast<size_t>(g)]));
    const auto data = chart->graph(g)->data();
    ASSERT_EQ(data->size(), 4);
    for (int i = 0; i < data->size(); ++i) {
      EXPECT_DOUBLE_EQ(data->at(i)->key, batches[static_cast<size_t>(i)]);
      // The sum of both layers, in milliseconds: 1e-6 (v+1) batch (1 + 2) s.
      EXPECT_NEAR(data->at(i)->value, 1e-3 * (g + 1) * batches[static_cast<size_t>(i)] * 3, 1e-9);
    }
  }
  EXPECT_EQ(chart->xAxis->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_EQ(chart->yAxis->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_TRUE(chart->legend->visible());
  EXPECT_EQ(chart->graph(10)->name(), "someone-elses-kernel") << "unknown ids are plotted under their own name";

  // One conv layer instead of the sum.
  timing->layerChoice()->setCurrentIndex(timing->layerChoice()->findData(1));
  EXPECT_EQ(chart->layer(), 1);
  EXPECT_NEAR(chart->graph(2)->data()->at(3)->value, 1e-3 * 3 * 10000 * 2, 1e-9);

  // Bars: the variants side by side at one batch size, one bar series per conv layer.
  ui::TimingBarChart* bars = timing->barChart();
  bars->setBatch(100);
  EXPECT_EQ(bars->variants().size(), 11u);
  ASSERT_EQ(bars->layerBarCount(), 2);
  auto* second = qobject_cast<QCPBars*>(bars->plottable(1));
  ASSERT_NE(second, nullptr);
  EXPECT_NEAR(second->data()->at(4)->value, 1e-3 * 5 * 100 * 2, 1e-9);

  // The table: one row per run, with the accuracy.
  EXPECT_EQ(timing->table()->rowCount(), static_cast<int>(report.runs.size()));
  EXPECT_EQ(timing->table()->item(0, timing->table()->columnCount() - 1)->text(), "0.9000");
}

TEST(Timing, OpensWhatTheCliWritesAndSavesJsonAndCsvBack) {
  auto window = openWindow();
  QTemporaryDir dir;
  const QString json = dir.filePath("cli.json");
  const ProcessResult cli =
      runProgram(CONVSCOPE_CLI_PATH, {"bench", "--variants", "cpu-reference,cpu-im2col-gemm", "--batches", "1,4",
                                      "--repeats", "1", "--warmups", "0", "--json", json});
  ASSERT_EQ(cli.exitCode, 0) << cli.output.toStdString();
  ASSERT_EQ(window->timing()->loadJson(json), QString());
  EXPECT_EQ(window->timing()->lineChart()->graphCount(), 2);
  EXPECT_EQ(window->timing()->lineChart()->graph(0)->data()->size(), 2);

  const QString saved = dir.filePath("saved.json"), csv = dir.filePath("saved.csv");
  EXPECT_EQ(window->timing()->saveJson(saved), QString());
  EXPECT_EQ(readBenchmarkJson(saved.toStdString()).runs.size(), 4u);
  EXPECT_EQ(window->timing()->exportCsv(csv), QString());
  QFile file(csv);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
  EXPECT_EQ(lines.size(), 1 + 4 * 2) << "a header, then one row per run and conv layer";
  EXPECT_EQ(window->timing()->exportLineChart(dir.filePath("chart.pdf")), QString());
  EXPECT_EQ(window->timing()->exportBarChart(dir.filePath("bars.png")), QString());
  EXPECT_GT(distinctColours(QImage(dir.filePath("bars.png"))), 10);

  const QString garbage = writeFile(dir, "garbage.json", "{ not json");
  EXPECT_FALSE(window->openBenchmark(garbage));
  EXPECT_TRUE(window->errorBanner()->message().contains("garbage.json")) << window->lastError().toStdString();
  EXPECT_EQ(window->timing()->lineChart()->graphCount(), 2) << "the chart shown before stays";
}

TEST(Timing, ASweepRunsOnAWorkerThreadWhileTheWindowStaysResponsive) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->timing();
  timing->controls()->setCheckedVariants({"cpu-reference", "cpu-im2col-gemm"});
  timing->controls()->setBatches("1, 8");
  int ticks = 0;
  QTimer heartbeat;
  QObject::connect(&heartbeat, &QTimer::timeout, [&] { ++ticks; });
  heartbeat.start(5);
  ASSERT_TRUE(timing->startSweep());
  EXPECT_TRUE(timing->sweepRunning());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 60000));
  EXPECT_GT(ticks, 0) << "the GUI thread kept running its timers during the sweep";
  ASSERT_NE(timing->report(), nullptr);
  EXPECT_EQ(timing->report()->runs.size(), 4u);
  EXPECT_EQ(timing->lineChart()->graphCount(), 2);
  for (const BenchmarkRun& run : timing->report()->runs) EXPECT_EQ(run.layers.size(), 2u);
}

TEST(Timing, CancellingASweepStopsItAndKeepsTheRunsDone) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->timing();
  timing->controls()->setCheckedVariants({"cpu-im2col-gemm", "cpu-reference"});
  timing->controls()->setBatches("1,300");  // cpu-reference runs first (registry order)
  ASSERT_TRUE(timing->startSweep());
  // Let the first (small) run finish, then cancel while the second (large) one is under way.
  auto* progress = timing->controls()->findChild<QProgressBar*>();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning() || progress->value() > 26; }, 30000));
  QElapsedTimer clock;
  clock.start();
  timing->cancelSweep();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 60000));
  EXPECT_LT(clock.elapsed(), 20000) << "cancel takes effect after the inference in flight";
  ASSERT_NE(timing->report(), nullptr);
  EXPECT_GE(timing->report()->runs.size(), 1u);
  EXPECT_LT(timing->report()->runs.size(), 4u) << "not every run was made";
}

TEST(Timing, SweepSettingsThatCannotRunAreRefusedWithAMessage) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->timing();
  timing->controls()->setBatches("10, x");
  EXPECT_FALSE(timing->startSweep());
  EXPECT_TRUE(window->lastError().contains("'x'")) << window->lastError().toStdString();
  timing->controls()->setBatches("10");
  timing->controls()->setCheckedVariants({});
  EXPECT_FALSE(timing->startSweep());
  EXPECT_TRUE(window->lastError().contains("variant")) << window->lastError().toStdString();
  EXPECT_FALSE(timing->sweepRunning());
}

}  // namespace
}  // namespace convscope::testing
