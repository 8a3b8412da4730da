// Nothing lost, and a window that fits: a sweep's unsaved results are offered back after the window
// closed (or died) with them, Quit asks before it throws them away, and the window opens no larger
// than its screen with the status bar's two facts apart.
#include <gtest/gtest.h>

#include <QCloseEvent>
#include <QFileInfo>
#include <QFrame>
#include <QGuiApplication>
#include <QLabel>
#include <QScreen>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>

#include <Qsci/qsciscintilla.h>
#include "tests/ui/ui_test_support.h"

#include "ui/kernel/kernel_editor.h"
#include "ui/kernel/user_kernel_panel.h"
#include "ui/timing/sweep_controls.h"
#include "ui/timing/timing_panel.h"

namespace convscope::testing {
namespace {

// A window whose questions are answered by `answers` in turn (and counted).
struct AnsweredWindow {
  std::vector<QMessageBox::StandardButton> answers;
  std::vector<QString> asked;
  QString savePath;
  std::unique_ptr<gui::MainWindow> window;

  AnsweredWindow(const QString& recovery, std::vector<QMessageBox::StandardButton> replies, QString save = {})
      : answers(std::move(replies)), savePath(std::move(save)) {
    gui::MainWindow::Options options{false, false};
    options.recoveryFile = recovery;
    options.ask = [this](const QString& text, QMessageBox::StandardButtons) {
      asked.push_back(text);
      if (answers.empty()) return QMessageBox::Cancel;
      const QMessageBox::StandardButton answer = answers.front();
      answers.erase(answers.begin());
      return answer;
    };
    options.chooseSavePath = [this](const QString&) { return savePath; };
    window = std::make_unique<gui::MainWindow>(options);
    window->resize(1440, 900);
    window->show();
    EXPECT_TRUE(waitForInference(*window));
  }
  bool close() { return window->close(); }
};

// Runs a small sweep (two CPU variants at batch 1 and 10) and waits for it.
void runSweep(gui::MainWindow& window) {
  ui::TimingPanel* timing = window.view<ui::TimingPanel>("timing");
  timing->controls()->setCheckedVariants({"cpu-im2col-gemm", "cpu-onednn"});
  timing->controls()->setBatches("1,10");
  ASSERT_TRUE(timing->startSweep());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !timing->sweepRunning(); }, 120000));
  ASSERT_TRUE(timing->hasUnsavedResults());
}

TEST(NothingLost, QuitWithAnUnsavedSweepAsksAndCancelKeepsTheWindowOpen) {
  QTemporaryDir dir;
  const QString recovery = dir.filePath("sweep.json");
  AnsweredWindow w(recovery, {QMessageBox::Cancel, QMessageBox::Discard});
  runSweep(*w.window);
  EXPECT_FALSE(w.close()) << "Cancel keeps the window open";
  ASSERT_EQ(w.asked.size(), 1u);
  EXPECT_TRUE(w.asked[0].contains("4 run(s) are not saved")) << w.asked[0].toStdString();
  EXPECT_TRUE(QFileInfo::exists(recovery));
  EXPECT_TRUE(w.close()) << "Discard lets it close";
  EXPECT_FALSE(QFileInfo::exists(recovery)) << "discarded results leave no recovery file";
}

// The user's own writing is asked about before results that can be measured again, whatever the
// tabs' order (the Timing tab comes before the Your kernel tab).
TEST(NothingLost, AtQuitAKernelsUnsavedEditsAreAskedAboutBeforeASweepsResults) {
  using Choice = ui::UserKernelPanel::UnsavedEditsChoice;
  QTemporaryDir dir;
  AnsweredWindow w(dir.filePath("sweep.json"), {QMessageBox::Discard});
  runSweep(*w.window);
  QFile::copy(QString::fromUtf8(CONVSCOPE_SOURCE_DIR) + "/examples/kernels/naive_conv.cu", dir.filePath("mine.cu"));
  ASSERT_TRUE(w.window->openFile(dir.filePath("mine.cu"))) << w.window->lastError().toStdString();
  ui::UserKernelPanel* kernel = w.window->view<ui::UserKernelPanel>("kernel");
  QsciScintilla* text = kernel->editor()->editor();
  text->setCursorPosition(0, 0);
  text->insert("// unsaved\n");
  std::vector<QString> order;
  Choice kernelAnswer = Choice::Cancel;
  kernel->setUnsavedEditsPrompt([&](const QString&) {
    order.push_back("kernel (sweep asked " + QString::number(w.asked.size()) + " times)");
    return kernelAnswer;
  });
  EXPECT_FALSE(w.close()) << "the kernel's Cancel keeps the window open";
  EXPECT_EQ(order, (std::vector<QString>{"kernel (sweep asked 0 times)"}));
  EXPECT_TRUE(w.asked.empty()) << "the sweep is not asked about once the kernel kept the window open";

  kernelAnswer = Choice::Discard;
  EXPECT_TRUE(w.close());
  EXPECT_EQ(order.back(), "kernel (sweep asked 0 times)") << "the kernel first";
  ASSERT_EQ(w.asked.size(), 1u) << "then the sweep";
  EXPECT_TRUE(w.asked[0].contains("not saved")) << w.asked[0].toStdString();
}

TEST(NothingLost, SaveAtQuitWritesTheFileAndLeavesNothingToRecover) {
  QTemporaryDir dir;
  const QString recovery = dir.filePath("sweep.json"), saved = dir.filePath("kept.json");
  AnsweredWindow w(recovery, {QMessageBox::Save}, saved);
  runSweep(*w.window);
  EXPECT_TRUE(w.close());
  ASSERT_TRUE(QFileInfo::exists(saved));
  EXPECT_EQ(readBenchmarkJson(saved.toStdString()).runs.size(), 4u);
  EXPECT_FALSE(QFileInfo::exists(recovery));
}

TEST(NothingLost, TheNextStartOffersAnUnsavedSweepBackAfterAKill) {
  QTemporaryDir dir;
  const QString recovery = dir.filePath("sweep.json");
  {
    AnsweredWindow first(recovery, {});
    runSweep(*first.window);
    // Killed: destroyed without a close event or a question; only the recovery file remains.
  }
  ASSERT_TRUE(QFileInfo::exists(recovery));
  const BenchmarkReport before = readBenchmarkJson(recovery.toStdString());
  AnsweredWindow second(recovery, {QMessageBox::Yes, QMessageBox::Discard});
  ASSERT_TRUE(QTest::qWaitFor([&] { return !second.asked.empty(); }, 5000));
  EXPECT_TRUE(second.asked[0].contains("4 run(s)")) << second.asked[0].toStdString();
  ASSERT_NE(second.window->view<ui::TimingPanel>("timing")->report(), nullptr);
  EXPECT_EQ(second.window->view<ui::TimingPanel>("timing")->report()->runs.size(), before.runs.size());
  EXPECT_TRUE(second.window->view<ui::TimingPanel>("timing")->hasUnsavedResults());
  EXPECT_TRUE(second.close());
  // Declined at the next start: nothing is offered again.
  AnsweredWindow third(recovery, {});
  QTest::qWait(200);
  EXPECT_TRUE(third.asked.empty());
}

TEST(Fit, TheWindowOpensNoLargerThanItsScreen) {
  gui::MainWindow window(gui::MainWindow::Options::with(false, false));
  const QRect room = window.screen()->availableGeometry();
  const QSize least = window.minimumSizeHint();
  EXPECT_LE(window.width(), std::max(room.width(), least.width())) << "screen " << room.width();
  EXPECT_LE(window.height(), std::max(room.height(), least.height())) << "screen " << room.height();
}

TEST(Fit, TheStatusBarKeepsTheTimeAndTheDeviceApart) {
  auto window = openWindow();
  window->setPresentation(true);
  window->resize(1440, 900);
  for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();
  QLabel* time = window->timeLabel();
  QLabel* device = window->deviceLabel();
  ASSERT_FALSE(time->text().isEmpty());
  ASSERT_FALSE(device->text().isEmpty());
  auto* rule = window->statusBar()->findChild<QFrame*>("statusRule");
  ASSERT_NE(rule, nullptr);
  EXPECT_TRUE(rule->isVisible());
  const int timeEnd = time->mapTo(window.get(), QPoint(time->width(), 0)).x();
  const int deviceStart = device->mapTo(window.get(), QPoint(0, 0)).x();
  const int ruleX = rule->mapTo(window.get(), QPoint(rule->width() / 2, 0)).x();
  EXPECT_LT(timeEnd, ruleX);
  EXPECT_LT(ruleX, deviceStart);
  // The texts themselves stand at least half a letter from the rule.
  EXPECT_GE(time->contentsMargins().right() + device->contentsMargins().left(), time->fontMetrics().averageCharWidth());
  window->setPresentation(false);
}

// A class demo: in presentation mode on a 1440x900 or 1920x1080 projector every tab is in the bar
// at a glance (no scroll arrows), whichever tab is shown (some keep the left column beside them).
TEST(Fit, InPresentationModeEveryTabIsInTheBarAtAGlance) {
  for (const QSize size : {QSize(1440, 900), QSize(1920, 1080)}) {
    auto window = openWindow();
    window->setPresentation(true);
    window->resize(size);
    QTabWidget* tabs = window->tabWidget();
    for (int i = 0; i < tabs->count(); ++i) {
      tabs->setCurrentIndex(i);
      for (int k = 0; k < 3; ++k) QCoreApplication::processEvents();
      SCOPED_TRACE(std::to_string(size.width()) + "x" + std::to_string(size.height()) + ", tab " +
                   tabs->tabText(i).toStdString());
      EXPECT_LE(window->mainTabBar()->sizeHint().width(), window->mainTabBar()->width()) << "the tab bar scrolls";
      EXPECT_EQ(window->mainTabBar()->tabText(i), tabs->tabText(i)) << "the bar the user clicks says the same";
      EXPECT_FALSE(tabs->tabToolTip(i).isEmpty() &&
                   tabs->tabText(i) !=
                       QCoreApplication::translate("convscope::gui::MainWindow", window->tabRows()[i].title))
          << "a shortened title keeps the full one as its tooltip";
    }
    window->setPresentation(false);
    EXPECT_EQ(tabs->tabText(0), QString("Feature maps && prediction")) << "the full titles come back";
  }
}

}  // namespace
}  // namespace convscope::testing
