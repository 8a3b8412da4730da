// The "Your kernel" tab: opening a .cu file compiles it and shows each step's result; a save runs
// the steps again (the file is watched); without a GPU the check and the timing say why they did
// not run and the kernel stays unselectable. On a GPU: a template passes, joins the selector and
// the Timing tab; a kernel that writes out of bounds is reported and the window goes on, and the
// next check in the same window passes.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QFileInfo>
#include <QStandardItemModel>

#include "app/core/engine/gpu_platform.h"
#include "gpu/user_kernel.h"
#include "tests/ui/ui_test_support.h"
#include "ui/kernel/user_kernel_panel.h"
#include "ui/model/variant_selector.h"
#include "ui/timing/timing_panel.h"

namespace convscope::testing {
namespace {

const QString kTemplates = QString::fromUtf8(CONVSCOPE_SOURCE_DIR) + "/examples/kernels/";
const QString kKernels = QString::fromUtf8(CONVSCOPE_TEST_DATA_DIR) + "/kernels/";

QByteArray contentsOf(const QString& path) {
  QFile file(path);
  EXPECT_TRUE(file.open(QIODevice::ReadOnly)) << path.toStdString();
  return file.readAll();
}

bool waitForSteps(ui::UserKernelPanel& panel, int timeoutMs) {
  return QTest::qWaitFor([&] { return !panel.pipeline()->running(); }, timeoutMs);
}

// The selector's entry for `id`: its text, and whether it can be chosen.
std::pair<QString, bool> selectorEntry(gui::MainWindow& window, const QString& id) {
  QComboBox* combo = window.findChild<ui::VariantSelector*>()->combo();
  const int index = combo->findData(id);
  if (index < 0) return {QString(), false};
  const auto* items = qobject_cast<QStandardItemModel*>(combo->model());
  return {combo->itemText(index), items->item(index)->isEnabled()};
}

std::unique_ptr<gui::MainWindow> windowWithKernelPanel() {
  auto window = openWindow();
  window->userKernel()->pipeline()->setProgram(CONVSCOPE_CLI_PATH);
  window->userKernel()->pipeline()->setTimingRepeats(2, 1);
  return window;
}

TEST(UserKernelPanel, OpeningAKernelCompilesItAndSaysWhyItCannotRunHere) {
  if (gpuInfo().usable) GTEST_SKIP() << "a GPU is usable here: GpuChecksTimesAndContainsAFault covers it";
  auto window = windowWithKernelPanel();
  QTemporaryDir dir;
  const QString file = writeFile(dir, "my_conv.cu", contentsOf(kTemplates + "naive_conv.cu"));
  ASSERT_TRUE(window->openFile(file));
  ui::UserKernelPanel* panel = window->userKernel();
  ASSERT_TRUE(waitForSteps(*panel, 60000));
  const QString compile = panel->stepText(ui::KernelStep::Compile);
  if (!gpu::userKernelCompilerUnavailableReason().empty()) {
    EXPECT_TRUE(compile.contains("no CUDA toolkit")) << compile.toStdString();
    EXPECT_TRUE(selectorEntry(*window, "user-my_conv").first.isEmpty());
    return;
  }
  EXPECT_EQ(compile, QString("Compile: ✔ compiled for compute_75 · block 16×16 · tile 16×16"));
  const QString why = QString::fromStdString(gpuInfo().unusableReason);
  EXPECT_EQ(panel->stepText(ui::KernelStep::Check), "Check: not run cannot run the kernel here: " + why);
  EXPECT_EQ(panel->stepText(ui::KernelStep::Time), "Timing: not run cannot run the kernel here: " + why);
  // In the selector, named after the file, and not selectable: it was never checked.
  const auto [text, enabled] = selectorEntry(*window, "user-my_conv");
  EXPECT_TRUE(text.startsWith("Your kernel: my_conv.cu")) << text.toStdString();
  EXPECT_FALSE(enabled);
  EXPECT_FALSE(window->selectVariant("user-my_conv"));

  // The tab exports as the other views do.
  for (const QString name : {"steps.png", "steps.pdf"}) {
    const QString path = dir.filePath(name);
    EXPECT_EQ(panel->exportTo(path), QString()) << name.toStdString();
    EXPECT_GT(QFileInfo(path).size(), 1000) << name.toStdString();
  }
  EXPECT_GT(distinctColours(QImage(dir.filePath("steps.png"))), 8);
}

TEST(UserKernelPanel, ASyntaxErrorShowsItsLineAndASaveRecompiles) {
  if (const std::string reason = gpu::userKernelCompilerUnavailableReason(); !reason.empty()) GTEST_SKIP() << reason;
  auto window = windowWithKernelPanel();
  QTemporaryDir dir;
  const QString file = writeFile(dir, "mine.cu", contentsOf(kKernels + "syntax_error.cu"));
  ASSERT_TRUE(window->openFile(file));
  ui::UserKernelPanel* panel = window->userKernel();
  ASSERT_TRUE(waitForSteps(*panel, 60000));
  EXPECT_EQ(panel->stepText(ui::KernelStep::Compile),
            QString("Compile: ✘ 1 error(s); the first: mine.cu:11: error: expected a \";\""));
  EXPECT_TRUE(panel->detailsText().contains(file + ":11: error: expected a \";\""))
      << panel->detailsText().toStdString();
  EXPECT_EQ(panel->stepText(ui::KernelStep::Check), QString("Check: –"));  // never reached

  // The student fixes it and saves: the watcher runs the steps again.
  writeFile(dir, "mine.cu", contentsOf(kTemplates + "naive_conv.cu"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return panel->stepText(ui::KernelStep::Compile).contains("✔"); }, 30000))
      << panel->stepText(ui::KernelStep::Compile).toStdString();
  ASSERT_TRUE(waitForSteps(*panel, 300000));
  EXPECT_TRUE(panel->stepText(ui::KernelStep::Compile).contains("block 16×16"));
}

TEST(UserKernelPanel, GpuChecksTimesAndContainsAFault) {
  if (!gpuInfo().usable) GTEST_SKIP() << "no GPU: " << gpuInfo().unusableReason;
  auto window = windowWithKernelPanel();
  ui::UserKernelPanel* panel = window->userKernel();
  QTemporaryDir dir;
  const QString good = writeFile(dir, "good.cu", contentsOf(kTemplates + "tiled_conv.cu"));
  ASSERT_TRUE(window->openFile(good));
  ASSERT_TRUE(waitForSteps(*panel, 600000));
  EXPECT_TRUE(panel->stepText(ui::KernelStep::Check).contains("✔ passed")) << panel->detailsText().toStdString();
  EXPECT_TRUE(panel->stepText(ui::KernelStep::Time).contains("batch 10000")) << panel->detailsText().toStdString();
  EXPECT_TRUE(selectorEntry(*window, "user-good").second);
  ASSERT_TRUE(window->timing()->report());
  int runs = 0;
  for (const BenchmarkRun& run : window->timing()->report()->runs) runs += run.variant == "user-good";
  EXPECT_EQ(runs, 3);

  // A kernel that writes out of bounds: reported, the window goes on.
  const QString bad = writeFile(dir, "bad.cu", contentsOf(kKernels + "out_of_bounds_write.cu"));
  ASSERT_TRUE(window->openFile(bad));
  ASSERT_TRUE(waitForSteps(*panel, 300000));
  EXPECT_TRUE(panel->stepText(ui::KernelStep::Check).contains("illegal memory access"))
      << panel->stepText(ui::KernelStep::Check).toStdString();
  EXPECT_FALSE(selectorEntry(*window, "user-bad").second);

  // The next check in the same window works, and the window still infers.
  ASSERT_TRUE(window->openFile(good));
  ASSERT_TRUE(waitForSteps(*panel, 600000));
  EXPECT_TRUE(panel->stepText(ui::KernelStep::Check).contains("✔ passed")) << panel->detailsText().toStdString();
  ASSERT_TRUE(window->selectVariant("user-good"));
  ASSERT_TRUE(window->selectTestImage(3));
  EXPECT_TRUE(waitForInference(*window));
}

}  // namespace
}  // namespace convscope::testing
