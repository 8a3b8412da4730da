// The History pane of the Your kernel tab as a student meets it: each save that compiles is a
// version in the list and a point on the chart, a save that changes nothing adds none, and choosing
// two versions shows the line that changed. Without a GPU there are no op times here, so the
// chart's figures are checked on a history written through the core (kernel_history.h), against
// sums computed in the test. The history goes to a temporary XDG_DATA_HOME (ui_test_main.cpp).
#include <gtest/gtest.h>

#include <Qsci/qsciscintilla.h>

#include <QDir>
#include <QFileInfo>
#include <QTabWidget>
#include <QTreeWidget>

#include <fstream>

#include "app/core/conv/kernel_resources.h"
#include "app/core/device/gpu_platform.h"
#include "gpu/user_kernel.h"
#include "tests/ui/ui_test_support.h"
#include "ui/kernel/kernel_editor.h"
#include "ui/kernel/kernel_history_chart.h"
#include "ui/kernel/kernel_history_view.h"
#include "ui/kernel/user_kernel_panel.h"

namespace convscope::testing {
namespace {

const QString kTemplates = QString::fromUtf8(CONVSCOPE_SOURCE_DIR) + "/examples/kernels/";

QByteArray contentsOf(const QString& path) {
  QFile file(path);
  EXPECT_TRUE(file.open(QIODevice::ReadOnly)) << path.toStdString();
  return file.readAll();
}

// Chooses the list's rows for versions `numbers` as a user does: a click, then Ctrl+clicks.
void chooseVersions(QTreeWidget& list, const std::vector<int>& numbers) {
  bool first = true;
  for (int number : numbers)
    for (int i = 0; i < list.topLevelItemCount(); ++i) {
      QTreeWidgetItem* item = list.topLevelItem(i);
      if (item->data(0, Qt::UserRole).toInt() != number) continue;
      list.scrollToItem(item);
      const QRect rect = list.visualItemRect(item);
      QTest::mouseClick(list.viewport(), Qt::LeftButton, first ? Qt::NoModifier : Qt::ControlModifier, rect.center());
      first = false;
    }
}

int drawnPoints(const ui::KernelHistoryChart& chart) {
  int points = 0;
  for (int g = 0; g < chart.graphCount(); ++g) points += chart.graph(g)->dataCount();
  return points;
}

TEST(KernelHistoryPane, EachSaveThatCompilesIsAVersionAndTwoChosenShowTheChangedLine) {
  if (const std::string reason = gpu::userKernelCompilerUnavailableReason(); !reason.empty()) GPU_TEST_SKIP() << reason;
  auto window = openWindow();
  window->view<ui::UserKernelPanel>("kernel")->pipeline()->setProgram(CONVSCOPE_CLI_PATH);
  QTemporaryDir dir;
  const QString file = writeFile(dir, "student.cu", contentsOf(kTemplates + "naive_conv.cu"));
  ASSERT_TRUE(window->openFile(file));
  ui::UserKernelPanel* panel = window->view<ui::UserKernelPanel>("kernel");
  const auto waitForSteps = [&] { return QTest::qWaitFor([&] { return !panel->pipeline()->running(); }, 60000); };
  ASSERT_TRUE(waitForSteps());
  ui::KernelHistoryView* history = panel->historyView();
  // The pane is a tab beside the steps.
  auto* tabs = qobject_cast<QTabWidget*>(history->parentWidget()->parentWidget());
  ASSERT_TRUE(tabs);
  tabs->setCurrentWidget(history);
  QTreeWidget* list = history->versionList();
  EXPECT_EQ(list->topLevelItemCount(), 1);  // opening it compiled it: the first version

  // Three edits, each saved with Ctrl+S: a comment line typed at the top, different each time.
  QsciScintilla* text = panel->editor()->editor();
  for (int edit = 1; edit <= 3; ++edit) {
    text->setFocus();
    text->setCursorPosition(0, 0);
    QTest::keyClicks(text, QString("// edit %1").arg(edit));
    QTest::keyClick(text, Qt::Key_Return);
    QTest::keyClick(text, Qt::Key_S, Qt::ControlModifier);
    ASSERT_TRUE(waitForSteps());
    ASSERT_TRUE(QTest::qWaitFor([&] { return list->topLevelItemCount() == edit + 1; }, 10000))
        << "after save " << edit << ": " << list->topLevelItemCount() << " versions";
  }
  // Saved again without a change: the same source is not kept twice.
  ASSERT_TRUE(panel->save());
  ASSERT_TRUE(waitForSteps());
  QTest::qWait(100);
  EXPECT_EQ(list->topLevelItemCount(), 4);
  EXPECT_EQ(history->history()->versions().size(), 4u);
  EXPECT_EQ(history->history()->versions().back().source, panel->editor()->text().toStdString());
  // Four points on the chart. Without a GPU none is timed (all on the axis, "not timed"); on a GPU
  // each version was checked and timed (GpuAVersionHoldsItsCheckAndTheTimingStepsOpTime checks what).
  EXPECT_EQ(history->chart()->points().size(), 4u);
  EXPECT_EQ(drawnPoints(*history->chart()), 4);
  const bool timedHere = gpuInfo().usable;
  for (int i = 0; i < list->topLevelItemCount(); ++i)
    EXPECT_EQ(list->topLevelItem(i)->text(3) == "not timed", !timedHere)
        << i << ": " << list->topLevelItem(i)->text(3).toStdString();
  EXPECT_TRUE(history->messageText().isEmpty()) << history->messageText().toStdString();

  // Versions 2 and 4: the diff adds the lines typed in the edits 2 and 3, and removes nothing.
  chooseVersions(*list, {2, 4});
  const QString diff = history->sourceDiffText();
  EXPECT_TRUE(diff.contains("--- student.cu v2\n+++ student.cu v4\n")) << diff.toStdString();
  EXPECT_TRUE(diff.contains("\n+// edit 3\n+// edit 2\n // edit 1\n")) << diff.toStdString();
  EXPECT_EQ(diff.count(QRegularExpression("^-", QRegularExpression::MultilineOption)), 1) << diff.toStdString();
  // Without a GPU the code is PTX: no SASS, and the pane says why. On a GPU the versions hold SASS
  // where nvdisasm is found.
  if (!timedHere) {
    EXPECT_TRUE(history->sassDiffText().isEmpty());
  }
}

// On a GPU the version that compiled is checked and timed, and the history holds what the steps
// reported: passed, and the op time the timing step's report gives (summed here from its layers),
// and the SASS where nvdisasm is found.
TEST(KernelHistoryPane, GpuAVersionHoldsItsCheckAndTheTimingStepsOpTime) {
  if (!gpuInfo().usable) GPU_TEST_SKIP() << "no usable GPU: " << gpuInfo().unusableReason;
  auto window = openWindow();
  ui::UserKernelPanel* panel = window->view<ui::UserKernelPanel>("kernel");
  panel->pipeline()->setProgram(CONVSCOPE_CLI_PATH);
  panel->pipeline()->setTimingRepeats(2, 1);
  std::shared_ptr<const BenchmarkReport> timed;
  QObject::connect(panel, &ui::UserKernelPanel::timed, panel,
                   [&](std::shared_ptr<const BenchmarkReport> report) { timed = std::move(report); });
  QTemporaryDir dir;
  ASSERT_TRUE(window->openFile(writeFile(dir, "gpu_student.cu", contentsOf(kTemplates + "naive_conv.cu"))));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !panel->pipeline()->running(); }, 600000));
  ASSERT_TRUE(timed) << panel->stepText(ui::KernelStep::Time).toStdString();
  // The independent figure: the largest batch's run (10,000 is the largest the pipeline times), its layers summed.
  const BenchmarkRun* largest = nullptr;
  for (const BenchmarkRun& run : timed->runs)
    if (!largest || run.batch > largest->batch) largest = &run;
  ASSERT_TRUE(largest);
  double expectedSeconds = 0.0;
  for (const LayerBenchmark& layer : largest->layers) expectedSeconds += layer.opTime.median;

  const KernelHistory& history = *panel->historyView()->history();
  ASSERT_EQ(history.versions().size(), 1u);
  const KernelVersion& version = history.versions()[0];
  EXPECT_EQ(version.status(), "passed") << version.checkSummary;
  EXPECT_EQ(version.opTimes.size(), timed->runs.size());
  ASSERT_TRUE(version.chartedOpTime());
  EXPECT_EQ(version.chartedOpTime()->batch, largest->batch);
  EXPECT_NEAR(version.chartedOpTime()->seconds, expectedSeconds, 1e-12);
  ASSERT_EQ(panel->historyView()->chart()->points().size(), 1u);
  EXPECT_EQ(panel->historyView()->chart()->points()[0].kind, ui::KernelHistoryChart::PointKind::Passed);
  if (findNvdisasm()) {
    ASSERT_TRUE(version.sass) << version.sassMissingReason;
    EXPECT_NE(version.sass->find("convscope"), std::string::npos) << "the SASS names the kernel";
  } else {
    EXPECT_FALSE(version.sass);
    EXPECT_NE(version.sassMissingReason.find("nvdisasm"), std::string::npos) << version.sassMissingReason;
  }
  // What the pane shows is on disk too: a fresh reader finds the same.
  const KernelHistory reread(history.kernelFile());
  ASSERT_EQ(reread.versions().size(), 1u);
  EXPECT_EQ(reread.versions()[0].opTimes.size(), version.opTimes.size());
}

// A history written through the core: v1 failed its check, v2 passed and was timed at 100 and
// 10,000, v3 passed and was timed at 100 and 1,000 only, v4 compiled and is not checked yet.
struct InjectedHistory {
  QTemporaryDir dir;
  QString root = dir.filePath("history");
  QString file = dir.filePath("my_conv.cu");

  static BenchmarkReport report(const std::vector<std::pair<int, std::vector<double>>>& batches) {
    BenchmarkReport result;
    for (const auto& [batch, layers] : batches) {
      BenchmarkRun run;
      run.batch = batch;
      for (double seconds : layers) {
        LayerBenchmark layer;
        layer.opTime.median = seconds;
        run.layers.push_back(layer);
      }
      result.runs.push_back(run);
    }
    return result;
  }

  InjectedHistory() {
    KernelHistory history(file.toStdString(), root.toStdString());
    history.recordCompiled("int a;\nint b;\n", std::string("IMAD\nSTG\n"), "");
    history.recordCompiled("int a;\nint c;\n", std::string("IMAD\nFFMA\nSTG\n"), "");
    history.recordCompiled("int a;\nint c;\nint d;\n", std::nullopt, "no nvdisasm here");
    history.recordCompiled("int e;\n", std::nullopt, "no nvdisasm here");
    history.recordCheck(1, false, "wrong at [n=0][m=0][h=0][w=1]");
    history.recordCheck(2, true, "passed 12 random shapes");
    history.recordOpTimes(2, opTimeSumsPerBatch(report({{100, {0.001, 0.002}}, {10000, {0.030, 0.050}}})));
    history.recordCheck(3, true, "passed 12 random shapes");
    history.recordOpTimes(3, opTimeSumsPerBatch(report({{100, {0.0005}}, {1000, {0.004, 0.002}}})));
  }
};

TEST(KernelHistoryPane, TheChartShowsEachVersionsOpTimeAndStatus) {
  InjectedHistory injected;
  ui::KernelHistoryView view;
  view.resize(700, 800);
  view.show();
  view.setKernelFile(injected.file, injected.root);
  const std::vector<ui::KernelHistoryChart::Point>& points = view.chart()->points();
  ASSERT_EQ(points.size(), 4u);
  using Kind = ui::KernelHistoryChart::PointKind;
  EXPECT_EQ(points[0].kind, Kind::Failed);
  EXPECT_FALSE(points[0].milliseconds);
  EXPECT_EQ(points[1].kind, Kind::Passed);
  ASSERT_TRUE(points[1].milliseconds);
  EXPECT_DOUBLE_EQ(*points[1].milliseconds, (0.030 + 0.050) * 1e3);  // at 10,000, the sum over layers
  EXPECT_EQ(points[1].batch, 10000);
  EXPECT_EQ(points[2].kind, Kind::Passed);
  ASSERT_TRUE(points[2].milliseconds);
  EXPECT_DOUBLE_EQ(*points[2].milliseconds, (0.004 + 0.002) * 1e3);  // no 10,000: the largest batch
  EXPECT_EQ(points[2].batch, 1000);
  EXPECT_EQ(points[3].kind, Kind::Untimed);
  // Drawn: the two passed versions at their times on the step line, the others on the axis.
  const ui::KernelHistoryChart& chart = *view.chart();
  ASSERT_EQ(chart.graphCount(), 3);
  ASSERT_EQ(chart.graph(0)->dataCount(), 2);
  EXPECT_DOUBLE_EQ(chart.graph(0)->data()->at(0)->key, 2);
  EXPECT_DOUBLE_EQ(chart.graph(0)->data()->at(0)->value, 80.0);
  EXPECT_DOUBLE_EQ(chart.graph(0)->data()->at(1)->value, 6.0);
  EXPECT_EQ(chart.graph(1)->dataCount(), 1);
  EXPECT_EQ(chart.graph(2)->dataCount(), 1);
  EXPECT_GE(chart.yAxis->range().upper, 80.0);
  // The versions without a time are in a row of their own under zero, labelled "not timed": on
  // the axis at 0 they read as 0 ms.
  const double untimedRow = chart.graph(2)->data()->at(0)->value;
  EXPECT_LT(untimedRow, 0.0);
  EXPECT_EQ(chart.graph(1)->data()->at(0)->value, untimedRow);
  EXPECT_GT(untimedRow, chart.yAxis->range().lower);
  view.chart()->replot();  // the ticks of what is drawn now, not of the queued replot
  const QVector<double> ticks = chart.yAxis->tickVector();
  const QVector<QString> labels = chart.yAxis->tickVectorLabels();
  ASSERT_FALSE(ticks.isEmpty());
  EXPECT_EQ(ticks.front(), untimedRow);
  EXPECT_EQ(labels.front(), "not timed");
  for (int i = 1; i < ticks.size(); ++i) EXPECT_GE(ticks[i], 0.0) << "no negative time is labelled";

  // The list, newest first: status and op time as the chart has them.
  QTreeWidget* list = view.versionList();
  ASSERT_EQ(list->topLevelItemCount(), 4);
  EXPECT_EQ(list->topLevelItem(0)->text(2), "not checked");
  EXPECT_EQ(list->topLevelItem(1)->text(3), "6.000 ms (batch 1000)");
  EXPECT_EQ(list->topLevelItem(2)->text(3), "80.000 ms (batch 10000)");
  EXPECT_EQ(list->topLevelItem(3)->text(2), "failed");

  // Two versions chosen: their source and SASS diffs.
  chooseVersions(*list, {1, 2});
  EXPECT_TRUE(view.sourceDiffText().contains("-int b;\n+int c;\n")) << view.sourceDiffText().toStdString();
  EXPECT_TRUE(view.sassDiffText().contains(" IMAD\n+FFMA\n STG\n")) << view.sassDiffText().toStdString();
  // One chosen: compared with the one before it; v3 has no SASS, and that is said.
  chooseVersions(*list, {3});
  EXPECT_TRUE(view.sourceDiffText().contains("+int d;\n")) << view.sourceDiffText().toStdString();
  EXPECT_TRUE(view.sassDiffText().isEmpty());

  // Exported as the other charts are.
  for (const QString name : {"history.png", "history.pdf"}) {
    const QString path = injected.dir.filePath(name);
    EXPECT_EQ(view.exportTo(path), QString()) << name.toStdString();
    EXPECT_GT(QFileInfo(path).size(), 1000) << name.toStdString();
  }
  EXPECT_GT(distinctColours(QImage(injected.dir.filePath("history.png"))), 4);
}

TEST(KernelHistoryPane, ABrokenHistoryFileIsNamedAndTheRestShown) {
  InjectedHistory injected;
  const std::filesystem::path folder =
      kernelHistoryFolder(injected.file.toStdString(), injected.root.toStdString()) / "v000002.json";
  std::ofstream(folder, std::ios::binary | std::ios::trunc) << "{ not json";
  ui::KernelHistoryView view;
  view.setKernelFile(injected.file, injected.root);
  EXPECT_EQ(view.versionList()->topLevelItemCount(), 3);
  EXPECT_TRUE(view.messageText().contains(QString::fromStdString(folder.string()))) << view.messageText().toStdString();
}

}  // namespace
}  // namespace convscope::testing
