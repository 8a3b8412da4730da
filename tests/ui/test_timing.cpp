// The timing tab: benchmark JSON files (the CLI's and synthetic ones with any number of
// variants) become one line per variant with the right points, bars at one batch size and a
// table; sweeps run on the job runner's thread while the window stays responsive, and cancel.
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QProgressBar>
#include <QTimer>

#include <QToolTip>
#include <array>
#include <cmath>
#include <set>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/benchmark.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/benchmark_series.h"
#include "ui/charts/chart_style.h"
#include "ui/charts/end_to_end_breakdown_chart.h"
#include "ui/charts/timing_bar_chart.h"
#include "ui/charts/timing_line_chart.h"
#include "ui/common/error_banner.h"
#include "ui/roofline/roofline_panel.h"
#include "ui/timing/speedup_table.h"
#include "ui/timing/sweep_controls.h"
#include "ui/timing/timing_panel.h"
#include "ui/timing/timing_table.h"

namespace convscope::testing {
namespace {

// Eleven variants (nine GPU ones this machine may lack, and one no registry knows), four batch
// sizes, two conv layers with op times that encode variant, batch and layer.
// The synthetic report's variants: rows of the registry, in its order, and one unknown last.
const std::vector<std::string> kSyntheticVariants = {"cpu-reference",         "cpu-im2col-gemm",      "gpu-baseline",
                                                     "gpu-tiled-shared",      "gpu-constant-weights", "gpu-unroll-gemm",
                                                     "gpu-fused-unroll-gemm", "gpu-atomics",          "gpu-per-layer",
                                                     "gpu-restrict-unroll",   "someone-elses-kernel"};

BenchmarkReport syntheticReport() {
  BenchmarkReport report;
  report.model = "course-high";
  report.device = "NVIDIA H100 80GB HBM3";
  report.repeats = 20;
  const std::vector<std::string>& variants = kSyntheticVariants;
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

  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
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
  ASSERT_EQ(window->view<ui::TimingPanel>("timing")->loadJson(json), QString());
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->lineChart()->graphCount(), 2);
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->lineChart()->graph(0)->data()->size(), 2);

  const QString saved = dir.filePath("saved.json"), csv = dir.filePath("saved.csv");
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->saveJson(saved), QString());
  EXPECT_EQ(readBenchmarkJson(saved.toStdString()).runs.size(), 4u);
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->exportCsv(csv), QString());
  QFile file(csv);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
  EXPECT_EQ(lines.size(), 1 + 4 * 2) << "a header, then one row per run and conv layer";
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->exportLineChart(dir.filePath("chart.pdf")), QString());
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->exportBarChart(dir.filePath("bars.png")), QString());
  EXPECT_GT(distinctColours(QImage(dir.filePath("bars.png"))), 10);

  const QString garbage = writeFile(dir, "garbage.json", "{ not json");
  EXPECT_FALSE(window->openBenchmark(garbage));
  EXPECT_TRUE(window->errorBanner()->message().contains("garbage.json")) << window->lastError().toStdString();
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->lineChart()->graphCount(), 2) << "the chart shown before stays";
}

TEST(Timing, ASweepRunsOnAWorkerThreadWhileTheWindowStaysResponsive) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
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
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  timing->controls()->setCheckedVariants({"cpu-im2col-gemm", "cpu-reference"});
  timing->controls()->setBatches("1,300");  // cpu-reference runs first (registry order)
  ASSERT_TRUE(timing->startSweep());
  // Let the first (small) run finish, then cancel while the second (large) one is under way: past
  // its warm-up, in its timed repetitions. Under the sanitizers, on a busy 2-core machine, the
  // warm-up of cpu-reference on 300 images alone can take half a minute: a generous wait here (it
  // times nothing), and the cancel's own time is checked below.
  auto* progress = timing->controls()->findChild<QProgressBar*>();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning() || progress->value() > 26; }, 90000));
  QElapsedTimer clock;
  clock.start();
  timing->cancelSweep();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 60000));
  EXPECT_LT(clock.elapsed(), 20000) << "cancel takes effect after the inference in flight";
  ASSERT_NE(timing->report(), nullptr);
  EXPECT_GE(timing->report()->runs.size(), 1u);
  EXPECT_LT(timing->report()->runs.size(), 4u) << "not every run was made";
}

// The tab keeps one layout: the same four tabs, in the same order, the line chart among them, with
// a many-variant file, with a sweep's few runs, at 1024x700 and on a 1920x1080 projector.
TEST(Timing, TheTabKeepsOneLayoutWithAFileAndAfterASweep) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  const auto layout = [&] {
    QStringList tabs;
    for (int i = 0; i < timing->lowerTabs()->count(); ++i) tabs << timing->lowerTabs()->tabText(i);
    return tabs;
  };
  const QStringList expected = {"Op time", "Bars", "Breakdown", "Speed-ups", "Table"};
  for (const QSize size : {QSize(1024, 700), QSize(1920, 1080)}) {
    window->resize(size);
    timing->setReport(std::make_shared<BenchmarkReport>(syntheticReport()), "eleven variants");
    QCoreApplication::processEvents();
    EXPECT_EQ(layout(), expected);
    EXPECT_EQ(timing->lowerTabs()->indexOf(timing->lineChart()), 0);
    BenchmarkReport small = syntheticReport();
    small.runs.resize(2);
    timing->setReport(std::make_shared<BenchmarkReport>(small), "a sweep");
    QCoreApplication::processEvents();
    EXPECT_EQ(layout(), expected);
    EXPECT_EQ(timing->lowerTabs()->indexOf(timing->lineChart()), 0);
  }
}

// In presentation mode on a 1440x900 projector every speed-up and op time reads whole.
TEST(Timing, EverySpeedUpReadsWholeInPresentationMode) {
  auto window = openWindow();
  window->setPresentation(true);
  window->resize(1440, 900);
  ASSERT_TRUE(window->selectTab("timing"));
  BenchmarkReport report = syntheticReport();
  window->view<ui::TimingPanel>("timing")->setReport(std::make_shared<BenchmarkReport>(report), "synthetic");
  window->view<ui::TimingPanel>("timing")->barChart()->setBatch(10000);
  ui::SpeedupTable* table = window->view<ui::TimingPanel>("timing")->speedups();
  window->view<ui::TimingPanel>("timing")->lowerTabs()->setCurrentWidget(table);
  for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();
  ASSERT_GT(table->rowCount(), 5);
  for (int row = 0; row < table->rowCount(); ++row)
    for (int column : {2, 3, 4}) {
      const QTableWidgetItem* item = table->item(row, column);
      ASSERT_NE(item, nullptr);
      EXPECT_GE(table->columnWidth(column), table->fontMetrics().horizontalAdvance(item->text()) + 6)
          << "row " << row << ", column " << column << ": '" << item->text().toStdString() << "' is cut";
    }
  window->setPresentation(false);
}

// Nothing lost: each finished run reaches the recovery file while the sweep runs; the results stay
// "unsaved" (and the file stays) until saved; a later window reads them back.
TEST(Timing, ASweepWritesEachRunToTheRecoveryFileUntilItIsSaved) {
  QTemporaryDir dir;
  const QString recovery = dir.filePath("recovery/sweep.json");
  auto window = openWindow();
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  timing->setRecoveryFile(recovery);
  timing->controls()->setCheckedVariants({"cpu-im2col-gemm", "cpu-onednn"});
  timing->controls()->setBatches("1,10");
  ASSERT_TRUE(timing->startSweep());
  // While it runs, the file grows run by run: seen with 1, 2 or 3 runs before the last one.
  std::set<size_t> seen;
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        if (const auto partial = ui::TimingPanel::readRecoveryFile(recovery)) seen.insert(partial->runs.size());
        return !timing->sweepRunning();
      },
      120000));
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](size_t runs) { return runs > 0 && runs < 4; }))
      << "no run reached the file before the sweep ended";
  ASSERT_NE(timing->report(), nullptr);
  EXPECT_TRUE(timing->hasUnsavedResults());
  EXPECT_TRUE(timing->originText().contains("not saved")) << timing->originText().toStdString();
  const auto kept = ui::TimingPanel::readRecoveryFile(recovery);
  ASSERT_NE(kept, nullptr);
  ASSERT_EQ(kept->runs.size(), 4u);
  for (const BenchmarkRun& run : timing->report()->runs) {
    const BenchmarkRun* same = ui::findRun(*kept, run.variant, run.batch);
    ASSERT_NE(same, nullptr) << run.variant << " at " << run.batch;
    EXPECT_EQ(same->layers.size(), run.layers.size());
    EXPECT_DOUBLE_EQ(same->layers[0].opTime.median, run.layers[0].opTime.median);
  }
  // A window started after a kill offers them back; shown, they are still unsaved.
  {
    auto later = openWindow();
    later->view<ui::TimingPanel>("timing")->setRecoveryFile(recovery);
    later->view<ui::TimingPanel>("timing")->showRecovered(ui::TimingPanel::readRecoveryFile(recovery));
    EXPECT_TRUE(later->view<ui::TimingPanel>("timing")->hasUnsavedResults());
    EXPECT_EQ(later->view<ui::TimingPanel>("timing")->report()->runs.size(), 4u);
  }
  // Saved: nothing is at risk any more.
  EXPECT_EQ(timing->saveJson(dir.filePath("kept.json")), QString());
  EXPECT_FALSE(timing->hasUnsavedResults());
  EXPECT_FALSE(QFileInfo::exists(recovery));
  EXPECT_EQ(ui::TimingPanel::readRecoveryFile(recovery), nullptr);
}

// A sweep on this machine after opening another machine's benchmark keeps that file in the chart,
// its lines told apart, and says so; nothing is replaced without a word.
TEST(Timing, ASweepAfterOpeningAnotherMachinesFileDrawsBesideIt) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  // The H100's file as another machine's, whatever this one is (on the GPU machine it is an H100).
  BenchmarkReport other = readBenchmarkJson(CONVSCOPE_SOURCE_DIR "/docs/results/bench-h100.json");
  other.device = "Another lab's GPU";
  QTemporaryDir dir;
  const QString h100 = dir.filePath("bench-h100.json");
  writeBenchmarkJson(other, h100.toStdString());
  ASSERT_TRUE(window->openBenchmark(h100)) << window->lastError().toStdString();
  const auto opened = timing->report();
  const size_t h100Variants = ui::variantsIn(*opened).size();
  timing->controls()->setCheckedVariants({"cpu-onednn"});
  timing->controls()->setBatches("1,10");
  ASSERT_TRUE(timing->startSweep());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 120000));
  ASSERT_NE(timing->report(), nullptr);
  EXPECT_NE(timing->report()->device, opened->device);
  EXPECT_EQ(timing->comparison(), opened) << "the H100's results were replaced";
  EXPECT_EQ(static_cast<size_t>(timing->lineChart()->comparisonGraphCount()), h100Variants);
  EXPECT_EQ(timing->lineChart()->graphCount(), static_cast<int>(1 + h100Variants));
  EXPECT_TRUE(timing->originText().contains("bench-h100.json")) << timing->originText().toStdString();
  QStringList names;
  for (int g = 0; g < timing->lineChart()->graphCount(); ++g) names << timing->lineChart()->graph(g)->name();
  EXPECT_EQ(names.filter(" · bench-h100.json").size(), static_cast<int>(h100Variants))
      << names.join(" | ").toStdString();
}

// A JSON file of the repository copied into `dir` with its device renamed, so that it is another
// machine's whatever this one is (the GPU machine may be an H100 itself).
QString copyAsAnotherMachine(const QString& from, const QTemporaryDir& dir) {
  QFile in(from);
  EXPECT_TRUE(in.open(QIODevice::ReadOnly)) << from.toStdString();
  QJsonObject object = QJsonDocument::fromJson(in.readAll()).object();
  object["device"] = "Another lab's GPU";
  const QString to = dir.filePath(QFileInfo(from).fileName());
  QFile out(to);
  EXPECT_TRUE(out.open(QIODevice::WriteOnly));
  out.write(QJsonDocument(object).toJson());
  return to;
}

// The walkthrough's step (issue 30, item 2): a benchmark opened with its PyTorch peer, then a
// sweep of two CPU variants at batches 1 and 10 here. Every view shows the opened results or the
// sweep's and says which; the Results choice brings the opened file back whole (its batches, its
// peer, its rows) in every view, the Roofline included, and the sweep stays, still unsaved.
TEST(Timing, ASweepNeverHidesAnOpenedBenchmarkFromAnyView) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  QTemporaryDir dir;
  const QString folder = CONVSCOPE_SOURCE_DIR "/docs/results/2026-11-26-wgmma-ss/call-6/";
  const QString bench = copyAsAnotherMachine(folder + "bench.json", dir);
  copyAsAnotherMachine(folder + "pytorch.json", dir);
  ASSERT_TRUE(window->openBenchmark(bench)) << window->lastError().toStdString();
  const auto opened = timing->report();
  ASSERT_NE(timing->peer(), nullptr) << "the pytorch.json beside it opens with it";
  EXPECT_FALSE(timing->resultsChoice()->isVisibleTo(timing)) << "one set of results: nothing to choose";
  // The "log scale" box changes the bars only: it is not there, ticked, on the other tabs.
  for (int tab = 0; tab < timing->lowerTabs()->count(); ++tab) {
    timing->lowerTabs()->setCurrentIndex(tab);
    EXPECT_EQ(timing->logarithmicBars()->isVisibleTo(timing),
              timing->lowerTabs()->currentWidget() == timing->barChart())
        << timing->lowerTabs()->tabText(tab).toStdString();
  }
  auto* roofline = window->findChild<ui::RooflinePanel*>();
  ASSERT_NE(roofline, nullptr);
  ASSERT_EQ(roofline->machineChoice()->count(), 1);
  EXPECT_TRUE(roofline->machineChoice()->itemText(0).contains("Another lab"))
      << roofline->machineChoice()->itemText(0).toStdString();

  timing->controls()->setCheckedVariants({"cpu-reference", "cpu-onednn"});
  timing->controls()->setBatches("1,10");
  ASSERT_TRUE(timing->startSweep());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 180000));
  const auto swept = timing->report();
  ASSERT_NE(swept, opened);
  EXPECT_EQ(timing->comparison(), opened);
  // Two sets: the choice is there and the line says which one the other views show.
  EXPECT_TRUE(timing->resultsChoice()->isVisibleTo(timing));
  ASSERT_EQ(timing->resultsChoice()->count(), 2);
  EXPECT_TRUE(timing->resultsChoice()->itemText(1).contains("bench.json"));
  EXPECT_TRUE(timing->originText().contains("the other views show the first")) << timing->originText().toStdString();
  // The Roofline has both machines, not "no benchmark open".
  EXPECT_EQ(roofline->machineChoice()->count(), 2);
  EXPECT_TRUE(timing->hasUnsavedResults());

  // Back to the opened file: every view shows it whole.
  emit timing->resultsChoice()->activated(1);
  EXPECT_EQ(timing->report(), opened);
  EXPECT_EQ(timing->comparison(), swept);
  EXPECT_NE(timing->peer(), nullptr) << "the peer came back with its benchmark";
  EXPECT_NE(timing->breakdownChart()->peerBars(), nullptr) << "the Breakdown draws the peer again";
  QStringList batches;
  for (int i = 0; i < timing->batchChoice()->count(); ++i) batches << timing->batchChoice()->itemText(i);
  EXPECT_EQ(batches.join(","), "1,100,1000,10000") << "\"at batch\" offers the opened file's batches";
  EXPECT_EQ(std::set<std::string>(timing->barChart()->variants().begin(), timing->barChart()->variants().end()), [&] {
    std::set<std::string> ids;
    for (const BenchmarkRun& run : opened->runs)
      if (run.batch == timing->barChart()->batch()) ids.insert(run.variant);
    return ids;
  }());
  EXPECT_EQ(timing->table()->rowCount(), static_cast<int>(opened->runs.size()));
  EXPECT_TRUE(timing->hasUnsavedResults()) << "the sweep beside it is still unsaved";
  EXPECT_TRUE(timing->originText().contains("not saved yet")) << timing->originText().toStdString();
  EXPECT_EQ(roofline->machineChoice()->count(), 2);
  EXPECT_TRUE(roofline->machineChoice()->itemText(0).contains("Another lab")) << "the shown results first";

  // And the sweep again.
  emit timing->resultsChoice()->activated(1);
  EXPECT_EQ(timing->report(), swept);
  EXPECT_EQ(timing->table()->rowCount(), static_cast<int>(swept->runs.size()));
  batches.clear();
  for (int i = 0; i < timing->batchChoice()->count(); ++i) batches << timing->batchChoice()->itemText(i);
  EXPECT_EQ(batches.join(","), "1,10");
}

TEST(Timing, SweepSettingsThatCannotRunAreRefusedWithAMessage) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  timing->controls()->setBatches("10, x");
  EXPECT_FALSE(timing->startSweep());
  EXPECT_TRUE(window->lastError().contains("'x'")) << window->lastError().toStdString();
  timing->controls()->setBatches("10");
  timing->controls()->setCheckedVariants({});
  EXPECT_FALSE(timing->startSweep());
  EXPECT_TRUE(window->lastError().contains("variant")) << window->lastError().toStdString();
  EXPECT_FALSE(timing->sweepRunning());
}

// Waits for a sweep of `variants` at `batches` to finish.
void runSweep(ui::TimingPanel* timing, const QStringList& variants, const QString& batches) {
  timing->controls()->setCheckedVariants(variants);
  timing->controls()->setBatches(batches);
  ASSERT_TRUE(timing->startSweep());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 60000));
}

TEST(Timing, CancellingASecondSweepKeepsTheFirstSweepsResultsAndMarksTheNewRuns) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  runSweep(timing, {"cpu-im2col-gemm"}, "1,2");
  ASSERT_NE(timing->report(), nullptr);
  ASSERT_EQ(timing->report()->runs.size(), 2u);

  // The second sweep: cpu-reference at batch 1 finishes, then it is cancelled during batch 300.
  timing->controls()->setCheckedVariants({"cpu-reference"});
  timing->controls()->setBatches("1,300");
  ASSERT_TRUE(timing->startSweep());
  auto* progress = timing->controls()->findChild<QProgressBar*>();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning() || progress->value() >= 50; },
                              30000));  // 50 %: batch 1 done, 300 begun
  timing->cancelSweep();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 60000));

  const auto report = timing->report();
  ASSERT_NE(report, nullptr);
  EXPECT_NE(ui::findRun(*report, "cpu-im2col-gemm", 1), nullptr) << "the first sweep's results stay";
  EXPECT_NE(ui::findRun(*report, "cpu-im2col-gemm", 2), nullptr) << "the first sweep's results stay";
  ASSERT_NE(ui::findRun(*report, "cpu-reference", 1), nullptr) << "the run the cancelled sweep finished joins them";
  EXPECT_EQ(ui::findRun(*report, "cpu-reference", 300), nullptr);
  EXPECT_EQ(timing->lineChart()->graphCount(), 2);
  EXPECT_TRUE(timing->originText().contains("cancelled sweep")) << timing->originText().toStdString();
  // The table marks the runs of the cancelled sweep, and only those.
  ui::TimingTable* table = timing->table();
  ASSERT_EQ(table->rowCount(), 3);
  for (int row = 0; row < table->rowCount(); ++row) {
    const QString variant = table->item(row, 0)->text();
    SCOPED_TRACE(variant.toStdString());
    EXPECT_EQ(variant.contains("cancelled sweep"), variant.startsWith("CPU reference"));
  }
  EXPECT_TRUE(timing->controls()->statusText().contains("stay")) << timing->controls()->statusText().toStdString();
}

TEST(Timing, OpeningABenchmarkAfterACancelledSweepSaysWhichFileIsShown) {
  auto window = openWindow();
  ui::TimingPanel* timing = window->view<ui::TimingPanel>("timing");
  timing->controls()->setCheckedVariants({"cpu-reference"});
  timing->controls()->setBatches("500");
  ASSERT_TRUE(timing->startSweep());
  timing->cancelSweep();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 60000));
  ASSERT_TRUE(timing->controls()->statusText().contains("Cancelled")) << timing->controls()->statusText().toStdString();

  QTemporaryDir dir;
  const QString path = dir.filePath("gpu-lab.json");
  writeBenchmarkJson(syntheticReport(), path.toStdString());
  ASSERT_TRUE(window->openBenchmark(path));
  const QString status = timing->controls()->statusText();
  EXPECT_FALSE(status.contains("Cancelled")) << status.toStdString();
  EXPECT_TRUE(status.contains("gpu-lab.json")) << status.toStdString();
  EXPECT_TRUE(timing->originText().contains("gpu-lab.json"));
}

// Every row of the table, CPU and GPU, has a colour of its own: a chart of all of them (a sweep
// with the CPU rows ticked) never shows two variants in one colour.
TEST(TimingChart, EveryVariantHasAColourNoOtherVariantHas) {
  std::set<QRgb> seen;
  for (const ConvVariant& v : convVariants())
    EXPECT_TRUE(seen.insert(ui::variantColour(v.id).rgb()).second) << v.id << " shares its colour";
  EXPECT_EQ(seen.size(), convVariants().size());
}

// CIELAB lightness and distance of two colours (sRGB, D65), computed here from the formulas, not
// taken from Qt or the chart code.
std::array<double, 3> cieLab(QColor colour) {
  const auto linear = [](double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); };
  const double r = linear(colour.redF()), g = linear(colour.greenF()), b = linear(colour.blueF());
  const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, y = 0.2126 * r + 0.7152 * g + 0.0722 * b,
               z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
  return {116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))};
}

// From the back of a room: every series reads on white and on black, and two series either have
// clearly different colours or differ in dash or marker as well (a palette for 16 series).
TEST(TimingChart, EverySeriesStandsApartOnWhiteAndBlackByColourOrBySecondCue) {
  const int count = std::max<int>(16, static_cast<int>(convVariants().size()));
  for (int i = 0; i < count; ++i) {
    const double lightness = cieLab(ui::variantStyleAt(i).colour)[0];
    EXPECT_GE(lightness, 35.0) << "series " << i << " is lost on a black background";
    EXPECT_LE(lightness, 76.0) << "series " << i << " is lost on a white background";
  }
  for (int i = 0; i < count; ++i)
    for (int j = i + 1; j < count; ++j) {
      const ui::VariantStyle a = ui::variantStyleAt(i), b = ui::variantStyleAt(j);
      const auto la = cieLab(a.colour), lb = cieLab(b.colour);
      const double distance = std::hypot(la[0] - lb[0], la[1] - lb[1], la[2] - lb[2]);
      EXPECT_GE(distance, 25.0) << "series " << i << " and " << j << " are nearly one colour";
      if (distance < 45.0) {
        EXPECT_TRUE(a.line != b.line || a.marker != b.marker)
            << "series " << i << " and " << j << " look alike (colour distance " << distance
            << ") and share dash and marker";
      }
    }
}

TEST(TimingChart, TheLegendListsTheVariantsInCourseOrderWhateverTheFilesOrder) {
  auto window = openWindow();
  BenchmarkReport report = syntheticReport();
  std::reverse(report.runs.begin(), report.runs.end());  // the file lists the course backwards
  ui::TimingLineChart* chart = window->view<ui::TimingPanel>("timing")->lineChart();
  window->view<ui::TimingPanel>("timing")->setReport(std::make_shared<BenchmarkReport>(report), "reversed.json");
  QStringList expected;
  for (const ConvVariant& v : convVariants())
    if (ui::findRun(report, v.id, 1)) expected << QString::fromStdString(v.displayName);
  expected << "someone-elses-kernel";  // unknown to the registry: last
  QStringList legend;
  for (int i = 0; i < chart->legend->itemCount(); ++i)  // in reading order, beside the axes or under them
    if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(chart->legend->item(i)))
      legend << entry->plottable()->name();
  EXPECT_EQ(legend, expected);
}

TEST(TimingChart, ClickingALegendEntryHidesItsLineAndClickingAgainShowsIt) {
  auto window = openWindow();
  window->view<ui::TimingPanel>("timing")->setReport(std::make_shared<BenchmarkReport>(syntheticReport()), "synthetic");
  ASSERT_TRUE(window->selectTab("timing"));  // clicks reach a chart the user sees
  ui::TimingLineChart* chart = window->view<ui::TimingPanel>("timing")->lineChart();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(window.get()));
  ASSERT_TRUE(chart->isVisible());
  chart->replot(QCustomPlot::rpImmediateRefresh);  // lays the legend out
  QCPPlottableLegendItem* entry = chart->legend->itemWithPlottable(chart->graph(2));
  ASSERT_NE(entry, nullptr);
  QCPAbstractPlottable* line = entry->plottable();
  ASSERT_TRUE(line->visible());
  const QColor shownColour = entry->textColor();
  const QPoint centre = entry->outerRect().center();
  QTest::mouseClick(chart, Qt::LeftButton, Qt::NoModifier, centre);
  EXPECT_FALSE(line->visible()) << "a click on '" << line->name().toStdString() << "' hides its line";
  EXPECT_NE(entry->textColor(), shownColour) << "its entry is grayed, and stays to be clicked back";
  int entries = 0;
  for (int i = 0; i < chart->legend->itemCount(); ++i) entries += chart->legend->item(i) != nullptr;
  EXPECT_EQ(entries, 11);
  // The other lines stay; a hidden line stays hidden when another layer is chosen.
  for (int g = 0; g < chart->graphCount(); ++g)
    if (chart->graph(g) != line) {
      EXPECT_TRUE(chart->graph(g)->visible());
    }
  window->view<ui::TimingPanel>("timing")->layerChoice()->setCurrentIndex(
      window->view<ui::TimingPanel>("timing")->layerChoice()->findData(0));
  QCPPlottableLegendItem* again = chart->legend->itemWithPlottable(chart->graph(2));
  ASSERT_NE(again, nullptr);
  EXPECT_FALSE(again->plottable()->visible());
  chart->replot(QCustomPlot::rpImmediateRefresh);
  QTest::mouseClick(chart, Qt::LeftButton, Qt::NoModifier, again->outerRect().center());
  EXPECT_TRUE(again->plottable()->visible());
}

TEST(TimingChart, EveryPointAndEveryBarHasATooltipWithVariantLayerBatchAndTime) {
  auto window = openWindow();
  window->resize(1600, 1000);
  const BenchmarkReport report = syntheticReport();
  window->view<ui::TimingPanel>("timing")->setReport(std::make_shared<BenchmarkReport>(report), "synthetic");
  ASSERT_TRUE(window->selectTab("timing"));
  ui::TimingLineChart* chart = window->view<ui::TimingPanel>("timing")->lineChart();
  chart->replot(QCustomPlot::rpImmediateRefresh);
  for (int g = 0; g < chart->graphCount(); ++g) {
    const auto data = chart->graph(g)->data();
    for (int i = 0; i < data->size(); ++i) {
      const QPoint at(qRound(chart->xAxis->coordToPixel(data->at(i)->key)),
                      qRound(chart->yAxis->coordToPixel(data->at(i)->value)));
      const QString tip = chart->pointToolTip(at);
      SCOPED_TRACE(tip.toStdString());
      // Points of different lines may lie on one another (the synthetic lines are parallel);
      // the tooltip names one of them, with its own numbers.
      const QString expectedTime = QString::number(data->at(i)->value, 'g', 4);
      EXPECT_TRUE(tip.contains(QString("batch %1\n").arg(data->at(i)->key)));
      EXPECT_TRUE(tip.contains("all conv layers"));
      EXPECT_TRUE(tip.contains(" ms"));
      if (tip.startsWith(chart->graph(g)->name() + "\n")) {
        EXPECT_TRUE(tip.contains("op time " + expectedTime + " ms"));
      }
    }
  }
  // A real tooltip event over the largest point of the slowest line.
  const auto last = chart->graph(10)->data()->at(3);
  const QPoint at(qRound(chart->xAxis->coordToPixel(last->key)), qRound(chart->yAxis->coordToPixel(last->value)));
  QHelpEvent help(QEvent::ToolTip, at, chart->mapToGlobal(at));
  QApplication::sendEvent(chart, &help);
  EXPECT_TRUE(QToolTip::text().contains("someone-elses-kernel")) << QToolTip::text().toStdString();
  EXPECT_TRUE(QToolTip::text().contains("batch 10000"));
  EXPECT_TRUE(chart->pointToolTip(QPoint(2, 2)).isEmpty()) << "no tooltip away from the points";

  // Bars: every variant's bar of each conv layer answers with its own numbers.
  ui::TimingBarChart* bars = window->view<ui::TimingPanel>("timing")->barChart();
  bars->setBatch(100);
  window->view<ui::TimingPanel>("timing")->lowerTabs()->setCurrentWidget(bars);
  bars->replot(QCustomPlot::rpImmediateRefresh);
  for (size_t v = 0; v < bars->variants().size(); ++v) {
    QStringList tips;
    for (int layer = 0; layer < bars->layerBarCount(); ++layer) {
      const double value = 1e-3 * (double(v) + 1) * 100 * (layer + 1);  // ms, as the synthetic report says
      const int x = qRound(bars->xAxis->coordToPixel(value * 0.5));
      const double key = double(v) + 1;
      const int top = qRound(bars->yAxis->coordToPixel(key - 0.45)),
                bottom = qRound(bars->yAxis->coordToPixel(key + 0.45));
      for (int y = std::min(top, bottom); y <= std::max(top, bottom); ++y) {
        const QString tip = bars->barToolTip(QPoint(x, y));
        if (!tip.isEmpty() && !tips.contains(tip)) tips << tip;
      }
    }
    SCOPED_TRACE(tips.join(" | ").toStdString());
    const QString name = ui::variantDisplayName(bars->variants()[v]);
    ASSERT_EQ(tips.size(), 2) << "one tooltip per conv layer's bar";
    for (int layer = 0; layer < 2; ++layer) {
      const double value = 1e-3 * (double(v) + 1) * 100 * (layer + 1);
      EXPECT_TRUE(std::any_of(tips.begin(), tips.end(), [&](const QString& tip) {
        return tip.startsWith(name + "\n") && tip.contains(QString("conv %1").arg(layer + 1)) &&
               tip.contains("batch 100\n") && tip.contains("op time " + QString::number(value, 'g', 4) + " ms");
      }));
    }
  }
}

TEST(TimingChart, TheBarsHaveALinearTimeAxisAndSayWhenItIsLogarithmic) {
  auto window = openWindow();
  window->view<ui::TimingPanel>("timing")->setReport(std::make_shared<BenchmarkReport>(syntheticReport()), "synthetic");
  ui::TimingBarChart* bars = window->view<ui::TimingPanel>("timing")->barChart();
  EXPECT_EQ(bars->xAxis->scaleType(), QCPAxis::stLinear);
  EXPECT_TRUE(bars->xAxis->label().contains("linear")) << bars->xAxis->label().toStdString();
  EXPECT_DOUBLE_EQ(bars->xAxis->range().lower, 0.0) << "a linear bar starts at zero";
  window->view<ui::TimingPanel>("timing")->logarithmicBars()->setChecked(true);
  EXPECT_EQ(bars->xAxis->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_TRUE(bars->xAxis->label().contains("logarithmic")) << bars->xAxis->label().toStdString();
  window->view<ui::TimingPanel>("timing")->logarithmicBars()->setChecked(false);
  EXPECT_EQ(bars->xAxis->scaleType(), QCPAxis::stLinear);
}

TEST(TimingChart, TimesSpanningMoreThanAHundredfoldGetALogarithmicAxisThatSaysWhyAndEveryBarShows) {
  auto window = openWindow();
  BenchmarkReport report = syntheticReport();
  // A CPU-like variant 2,000 times slower than the rest, as a laptop's row beside an H100's.
  for (BenchmarkRun& run : report.runs)
    if (run.variant == kSyntheticVariants.front())
      for (LayerBenchmark& layer : run.layers) layer.opTime.median *= 2000.0;
  window->view<ui::TimingPanel>("timing")->setReport(std::make_shared<BenchmarkReport>(report), "synthetic");
  ASSERT_TRUE(window->selectTab("timing"));  // the bars laid out as the user sees them
  ui::TimingBarChart* bars = window->view<ui::TimingPanel>("timing")->barChart();
  bars->setBatch(100);
  window->view<ui::TimingPanel>("timing")->lowerTabs()->setCurrentWidget(bars);
  QCoreApplication::processEvents();
  bars->replot(QCustomPlot::rpImmediateRefresh);
  ASSERT_GT(bars->axisRect()->width(), 100) << "the bars are laid out";
  EXPECT_EQ(bars->xAxis->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_TRUE(bars->logarithmic());
  EXPECT_TRUE(window->view<ui::TimingPanel>("timing")->logarithmicBars()->isChecked())
      << "the box shows the scale in use";
  const QString label = bars->xAxis->label();
  EXPECT_TRUE(label.contains("logarithmic") && label.contains("span")) << label.toStdString();
  // Every bar is long enough to see: at least 4 pixels from the axis's start.
  for (int i = 0; i < bars->plottableCount(); ++i) {
    auto* layer = qobject_cast<QCPBars*>(bars->plottable(i));
    ASSERT_NE(layer, nullptr);
    for (auto bar = layer->data()->constBegin(); bar != layer->data()->constEnd(); ++bar) {
      const double pixels = bars->xAxis->coordToPixel(bar->value) - bars->xAxis->coordToPixel(layer->baseValue());
      EXPECT_GE(pixels, 4.0) << "bar of variant " << bar->key << " at " << bar->value << " ms";
    }
  }
  // The user's choice holds, also for the next file.
  window->view<ui::TimingPanel>("timing")->logarithmicBars()->setChecked(false);
  EXPECT_EQ(bars->xAxis->scaleType(), QCPAxis::stLinear);
  window->view<ui::TimingPanel>("timing")->setReport(std::make_shared<BenchmarkReport>(report), "synthetic again");
  EXPECT_EQ(bars->xAxis->scaleType(), QCPAxis::stLinear);
  EXPECT_TRUE(bars->xAxis->label().contains("linear")) << bars->xAxis->label().toStdString();
}

TEST(TimingChart, TheSpeedUpsOfEachCourseStepOverTheBaselineAndTheStepBefore) {
  auto window = openWindow();
  BenchmarkReport report = syntheticReport();
  std::reverse(report.runs.begin(), report.runs.end());
  window->view<ui::TimingPanel>("timing")->setReport(std::make_shared<BenchmarkReport>(report), "synthetic");
  window->view<ui::TimingPanel>("timing")->barChart()->setBatch(100);
  window->view<ui::TimingPanel>("timing")->layerChoice()->setCurrentIndex(
      window->view<ui::TimingPanel>("timing")->layerChoice()->findData(ui::kAllConvLayers));
  ui::SpeedupTable* table = window->view<ui::TimingPanel>("timing")->speedups();
  // At batch 100, variant v (registry position) takes 1e-6 (v+1) 100 (1+2) s: the speed-up over
  // gpu-baseline (v = 2) is 3/(v+1), over the step before v/(v+1).
  ASSERT_EQ(table->rowCount(), 11);
  EXPECT_EQ(table->baseline(), "gpu-baseline");
  const auto number = [](const QString& text) { return QString(text).remove("×").trimmed().toDouble(); };
  for (int row = 0; row < 11; ++row) {
    const double v = row;  // the synthetic report's variants are the registry's, in its order, and one unknown last
    SCOPED_TRACE(table->item(row, 1)->text().toStdString());
    const QString name = row < 10 ? QString::fromStdString(findConvVariant(kSyntheticVariants[size_t(row)]).displayName)
                                  : QString("someone-elses-kernel");
    EXPECT_EQ(table->item(row, 1)->text(), name) << "course order";
    EXPECT_NEAR(number(table->item(row, 3)->text()), 3.0 / (v + 1), 0.01 * 3.0 / (v + 1) + 0.005);
    if (row == 0)
      EXPECT_EQ(table->item(row, 4)->text(), "—") << "the first step has none before it";
    else
      EXPECT_NEAR(number(table->item(row, 4)->text()), v / (v + 1), 0.01);
  }
  EXPECT_TRUE(table->horizontalHeaderItem(3)->text().contains("GPU baseline"));
}

}  // namespace
}  // namespace convscope::testing
