// Why the student's kernel is slow, in the Your kernel tab, used as a student would: after New from
// template the figures shown are the core's for that file (kernel info: registers, shared, local
// and constant memory, occupancy), computed by the test through the core's API; moving the cursor
// (arrow keys) to the line of the inner multiply-add highlights exactly the PTX and SASS lines the
// core maps to it, and a line with no code highlights none; without nvdisasm the SASS pane says
// so. The inspection runs off the GUI thread (a job), so every check waits for it.
#include <gtest/gtest.h>

#include <Qsci/qsciscintilla.h>

#include <QDir>
#include <QPlainTextEdit>
#include <QTextBlock>
#include <QToolButton>

#include "app/core/conv/kernel_resources.h"
#include "app/core/conv/user_kernel_compiler.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/device/gpu_platform.h"
#include "gpu/user_kernel.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/roofline_chart.h"
#include "ui/gpumap/gpu_mapping_panel.h"
#include "ui/gpumap/gpu_mapping_view.h"
#include "ui/jobs/kernel_inspection_job.h"
#include "ui/kernel/kernel_editor.h"
#include "ui/kernel/kernel_listing_pane.h"
#include "ui/kernel/kernel_resources_view.h"
#include "ui/kernel/user_kernel_panel.h"
#include "ui/roofline/roofline_panel.h"

namespace convscope::testing {
namespace {

bool waitForInspection(ui::UserKernelPanel& panel, int timeoutMs = 120000) {
  return QTest::qWaitFor([&] { return !panel.pipeline()->running() && !panel.inspection()->running(); }, timeoutMs);
}

// The 1-based number of the first line of `text` that contains `needle` (0: none).
int lineContaining(const QString& text, const QString& needle) {
  const QStringList lines = text.split('\n');
  for (int i = 0; i < lines.size(); ++i)
    if (lines[i].contains(needle)) return i + 1;
  return 0;
}

// The window's kernel tab with a new kernel from the naive template, as New from template makes it.
struct NaiveTemplateInTheTab {
  std::unique_ptr<gui::MainWindow> window = openWindow();
  QTemporaryDir dir;
  ui::UserKernelPanel* panel = window->view<ui::UserKernelPanel>("kernel");
  QsciScintilla* text = panel->editor()->editor();
  QString file = dir.filePath("why_slow.cu");

  NaiveTemplateInTheTab() {
    window->view<ui::UserKernelPanel>("kernel")->pipeline()->setProgram(CONVSCOPE_CLI_PATH);
    // On screen, as the student has it: Scintilla tells of a cursor move when it updates its view.
    EXPECT_TRUE(window->selectTab("kernel"));
    panel->setSavePathChooser([this](const QString&) { return file; });
    EXPECT_TRUE(panel->newFromTemplate(ui::KernelTemplate::Naive)) << panel->errorText().toStdString();
    EXPECT_TRUE(waitForInspection(*panel));
  }
  // Moves the cursor to the 1-based `line` with the arrow keys, from the top, as a student would
  // (long lines wrap in the editor: Down steps through the lines as shown, so as often as it takes).
  void cursorToLine(int line) {
    text->setFocus();
    QTest::keyClick(text, Qt::Key_Home, Qt::ControlModifier);
    int at = 0, index = 0;
    for (int presses = 0; presses < 10 * line && at + 1 < line; ++presses) {
      QTest::keyClick(text, Qt::Key_Down);
      text->getCursorPosition(&at, &index);
    }
    text->getCursorPosition(&at, &index);
    EXPECT_EQ(at + 1, line);
    // Scintilla tells of the move when it next updates the view (an event): the pane follows then.
    EXPECT_TRUE(QTest::qWaitFor([&] { return panel->listingPane()->sourceLine() == line; }, 5000))
        << "the listing pane still shows line " << panel->listingPane()->sourceLine();
  }
  // The core's inspection of the same file: what the window must show.
  UserKernelInspection coreInspection() const {
    return userKernelCompiler().inspect(readUserKernelSource(file.toStdString()), "");
  }
  // The listing's text of each highlighted line.
  QStringList highlightedText() const {
    QStringList lines;
    QPlainTextEdit* listing = panel->listingPane()->listing();
    for (int line : panel->listingPane()->highlightedLines())
      lines << listing->document()->findBlockByNumber(line - 1).text();
    return lines;
  }
};

// The pane shows `listing` line for line (line N of the pane is line N of the listing), each line
// without its padding; nvdisasm's "//## File "path", line N" shortened to "//## name:N".
void expectShowsListing(ui::KernelListingPane& pane, const std::string& listing) {
  const QStringList shown = pane.listing()->toPlainText().split('\n');
  const QStringList original = QString::fromStdString(listing).split('\n');
  ASSERT_EQ(shown.size(), original.size());
  for (qsizetype i = 0; i < shown.size(); ++i) {
    const QString line = original[i].simplified();
    if (line.startsWith("//## File"))
      EXPECT_TRUE(line.endsWith(", line " + shown[i].section(':', -1))) << shown[i].toStdString();
    else
      EXPECT_EQ(shown[i], line) << "line " << i + 1;
  }
}

std::string skipReason() {
  return gpu::userKernelCompilerUnavailableReason();  // no NVRTC in this build
}

TEST(KernelWhySlow, TheFiguresShownAreTheCoresForTheTemplate) {
  if (const std::string reason = skipReason(); !reason.empty()) GPU_TEST_SKIP() << reason;
  NaiveTemplateInTheTab tab;
  const UserKernelInspection core = tab.coreInspection();
  ASSERT_TRUE(core.kernel.ok()) << core.kernel.errorText();
  ASSERT_TRUE(core.resources.found);
  ASSERT_TRUE(core.occupancy.has_value());
  const QString shown = tab.panel->resourcesView()->text();
  const QString details = tab.panel->resourcesView()->detailsText();
  const KernelResources& r = core.resources;
  const BlockOccupancy& o = *core.occupancy;
  // The naive template's block is 16x16 (its macros): 256 threads in 8 warps.
  EXPECT_EQ(o.threadsPerBlock, 256);
  // In view, short; each figure also in words in the tooltip.
  for (const QString& expected :
       {QString("%1 registers/thread · %2 B shared/block · %3 B local/thread")
            .arg(r.registers)
            .arg(r.sharedStaticBytes)
            .arg(r.localBytes),
        QString("%1 B constant").arg(r.constantBytes),
        QString("occupancy of a 16×16 block: %1 blocks/SM, %2 of %3 warps (%4%), limited by %5")
            .arg(o.blocksPerSm)
            .arg(o.activeWarps)
            .arg(o.maxWarps)
            .arg(qRound(o.fraction() * 100))
            .arg(QString::fromStdString(o.limitedBy))})
    EXPECT_TRUE(shown.simplified().contains(expected)) << "missing: " << expected.toStdString() << "\nshown:\n"
                                                       << shown.toStdString();
  for (const QString& expected :
       {QString("registers per thread: %1").arg(r.registers),
        QString("shared memory per block: %1 bytes (static)").arg(r.sharedStaticBytes),
        QString("local memory per thread: %1 bytes").arg(r.localBytes),
        QString("constant memory: %1 bytes").arg(r.constantBytes), QString("block: 16×16 = 256 threads (8 warps)")})
    EXPECT_TRUE(details.contains(expected)) << "missing: " << expected.toStdString() << "\ndetails:\n"
                                            << details.toStdString();
  if (!gpuInfo().usable) {
    // Without a GPU: for sm_90, from the compiler, and the occupancy said to be computed, and
    // equal to the occupancy calculator's rules applied here to the same figures.
    EXPECT_TRUE(shown.contains("computed for sm_90 (the compiler's figures; no GPU here)")) << shown.toStdString();
    EXPECT_TRUE(shown.contains(QString("(spills %1 B)").arg(r.spillStoreBytes + r.spillLoadBytes)));
    EXPECT_TRUE(details.contains("occupancy computed from sm_90's limits")) << details.toStdString();
    const BlockOccupancy recomputed = computeOccupancy(*architectureLimits("sm_90"), 256, r);
    EXPECT_EQ(recomputed.blocksPerSm, o.blocksPerSm);
    EXPECT_EQ(recomputed.limitedBy, o.limitedBy);
  } else {
    EXPECT_TRUE(shown.contains("from the driver on")) << shown.toStdString();
  }

  // A syntax error: the figures are no longer the file's, and the view says why.
  tab.cursorToLine(lineContaining(tab.text->text(), "float sum = 0.0f;"));
  QTest::keyClick(tab.text, Qt::Key_End);
  QTest::keyClick(tab.text, Qt::Key_Backspace);  // the ';'
  ASSERT_TRUE(tab.panel->save());
  ASSERT_TRUE(waitForInspection(*tab.panel));
  EXPECT_TRUE(tab.panel->resourcesView()->text().contains("why_slow.cu does not compile"))
      << tab.panel->resourcesView()->text().toStdString();
  EXPECT_TRUE(tab.panel->listingPane()->highlightedLines().empty());

  // Fixed and saved again: the figures are back, refreshed from the new compile. A local array
  // makes them differ from the template's, so stale figures would show.
  QTest::keyClicks(tab.text,
                   "; float unused[64]; unused[threadIdx.x & 63] = 0.0f; sum += unused[(threadIdx.y * 7) & 63];");
  ASSERT_TRUE(tab.panel->save());
  ASSERT_TRUE(waitForInspection(*tab.panel));
  const UserKernelInspection changed = tab.coreInspection();
  ASSERT_TRUE(changed.kernel.ok()) << changed.kernel.errorText();
  ASSERT_NE(changed.resources.localBytes, r.localBytes);  // else this could not tell new figures from old
  const QString again = tab.panel->resourcesView()->text().simplified();
  EXPECT_TRUE(again.contains(QString("%1 registers/thread · %2 B shared/block · %3 B local/thread")
                                 .arg(changed.resources.registers)
                                 .arg(changed.resources.sharedStaticBytes)
                                 .arg(changed.resources.localBytes)))
      << again.toStdString();
}

TEST(KernelWhySlow, TheListingFollowsTheCursorToTheLinesTheCoreMapsItTo) {
  if (const std::string reason = skipReason(); !reason.empty()) GPU_TEST_SKIP() << reason;
  NaiveTemplateInTheTab tab;
  const UserKernelInspection core = tab.coreInspection();
  ASSERT_TRUE(core.kernel.ok()) << core.kernel.errorText();
  const std::string path = readUserKernelSource(tab.file.toStdString()).path.string();
  // The statement `sum += input[...] *\n weights[...]` spans two lines; NVRTC and ptxas put its
  // multiply-add on the second (where the product's last operand is), its input load on the first.
  const int loadLine = lineContaining(tab.text->text(), "sum += input");
  const int fmaLine = lineContaining(tab.text->text(), "weights[((m * s.inChannels");
  const int commentLine = 1;  // the file's header comment: no code
  ASSERT_EQ(fmaLine, loadLine + 1);
  ui::KernelListingPane* pane = tab.panel->listingPane();
  ASSERT_EQ(pane->kind(), ListingKind::Ptx);
  expectShowsListing(*pane, core.kernel.ptx);

  tab.cursorToLine(fmaLine);
  const std::vector<int> ptxExpected =
      listingLinesOfSourceLine(sourceLinesOfListing(core.kernel.ptx, ListingKind::Ptx, path), fmaLine);
  ASSERT_FALSE(ptxExpected.empty());
  EXPECT_EQ(pane->highlightedLines(), ptxExpected);
  EXPECT_EQ(pane->listing()->extraSelections().size(), static_cast<qsizetype>(ptxExpected.size()));
  // Independently of the map: the multiply-add of that line is among what is highlighted.
  EXPECT_TRUE(tab.highlightedText().join('\n').contains("fma.rn.f32"))
      << tab.highlightedText().join('\n').toStdString();
  EXPECT_TRUE(pane->captionText().contains(QString("line %1:").arg(fmaLine))) << pane->captionText().toStdString();
  // Scrolled into view: the first highlighted line is visible in the pane.
  QPlainTextEdit* listing = pane->listing();
  const int topShown = listing->cursorForPosition(QPoint(0, 0)).blockNumber() + 1;
  const int bottomShown = listing->cursorForPosition(QPoint(0, listing->viewport()->height() - 1)).blockNumber() + 1;
  EXPECT_LE(topShown, ptxExpected.front());
  EXPECT_GE(bottomShown, ptxExpected.front());
  EXPECT_GT(ptxExpected.front(), 30);  // far enough down the PTX that following it needed a scroll

  // The line above: its loads, and no multiply-add.
  tab.cursorToLine(loadLine);
  EXPECT_EQ(pane->highlightedLines(),
            listingLinesOfSourceLine(sourceLinesOfListing(core.kernel.ptx, ListingKind::Ptx, path), loadLine));
  EXPECT_TRUE(tab.highlightedText().join('\n').contains("ld.global.f32"));
  EXPECT_FALSE(tab.highlightedText().join('\n').contains("fma.rn.f32"));

  tab.cursorToLine(commentLine);
  EXPECT_TRUE(pane->highlightedLines().empty());
  EXPECT_TRUE(pane->listing()->extraSelections().isEmpty());
  EXPECT_EQ(pane->captionText(), QString("line 1: no PTX comes from it"));

  // SASS, where nvdisasm is: the toggle, then the same line's SASS lines, FFMA among them.
  if (!findNvdisasm()) GTEST_SKIP() << "SASS part: " << nvdisasmMissingMessage();
  tab.panel->findChild<ui::KernelListingPane*>()->findChildren<QToolButton*>().at(1)->click();
  ASSERT_EQ(pane->kind(), ListingKind::Sass);
  const std::string sass = disassembleCubin(core.kernel.image, path);
  expectShowsListing(*pane, sass);
  tab.cursorToLine(fmaLine);
  const std::vector<int> sassExpected =
      listingLinesOfSourceLine(sourceLinesOfListing(sass, ListingKind::Sass, path), fmaLine);
  ASSERT_FALSE(sassExpected.empty());
  EXPECT_EQ(pane->highlightedLines(), sassExpected);
  EXPECT_TRUE(tab.highlightedText().join('\n').contains("FFMA")) << tab.highlightedText().join('\n').toStdString();
  tab.cursorToLine(commentLine);
  EXPECT_TRUE(pane->highlightedLines().empty());
}

TEST(KernelWhySlow, WithoutNvdisasmTheSassPaneSaysWhy) {
  if (const std::string reason = skipReason(); !reason.empty()) GPU_TEST_SKIP() << reason;
  const QByteArray before = qgetenv("CONVSCOPE_NVDISASM");
  const bool wasSet = qEnvironmentVariableIsSet("CONVSCOPE_NVDISASM");
  qputenv("CONVSCOPE_NVDISASM", "/nonexistent/nvdisasm");  // when set, ConvScope looks only there
  {
    NaiveTemplateInTheTab tab;
    ui::KernelListingPane* pane = tab.panel->listingPane();
    pane->findChildren<QToolButton*>().at(1)->click();  // SASS
    ASSERT_EQ(pane->kind(), ListingKind::Sass);
    const QString shown = pane->listing()->toPlainText();
    EXPECT_EQ(shown, QString::fromStdString(nvdisasmMissingMessage())) << shown.toStdString();
    EXPECT_TRUE(shown.contains("/nonexistent/nvdisasm")) << shown.toStdString();
    tab.cursorToLine(lineContaining(tab.text->text(), "weights[((m * s.inChannels"));
    EXPECT_TRUE(pane->highlightedLines().empty());
    // The PTX needs no nvdisasm: back on PTX, the same line is highlighted.
    pane->findChildren<QToolButton*>().at(0)->click();
    EXPECT_FALSE(pane->highlightedLines().empty());
  }
  if (wasSet)
    qputenv("CONVSCOPE_NVDISASM", before);
  else
    qunsetenv("CONVSCOPE_NVDISASM");
}

// The pictures in docs/your-kernel.md: CONVSCOPE_SCREENSHOT_DIR=docs/images writes them there,
// the window at 1024x700 (the smallest the project supports), the cursor on the multiply-add.
TEST(KernelWhySlow, Screenshots) {
  const QString folder = qEnvironmentVariable("CONVSCOPE_SCREENSHOT_DIR");
  if (folder.isEmpty()) GTEST_SKIP() << "set CONVSCOPE_SCREENSHOT_DIR to write the screenshots";
  if (const std::string reason = skipReason(); !reason.empty()) GPU_TEST_SKIP() << reason;
  NaiveTemplateInTheTab tab;
  tab.window->resize(1024, 700);
  QTest::qWait(200);
  const int fmaLine = lineContaining(tab.text->text(), "weights[((m * s.inChannels");  // its multiply-add
  tab.cursorToLine(fmaLine);
  QTest::qWait(200);
  EXPECT_TRUE(tab.window->grab().save(QDir(folder).filePath("your-kernel-why-slow-ptx.png")));
  if (!findNvdisasm()) return;
  tab.panel->listingPane()->setKind(ListingKind::Sass);
  tab.cursorToLine(fmaLine);
  QTest::qWait(200);
  EXPECT_TRUE(tab.window->grab().save(QDir(folder).filePath("your-kernel-why-slow-sass.png")));
}

// The student's kernel, once timed, is a point on the Roofline: its timing is injected as the
// timing step hands it over (a benchmark report, as `bench --kernel` writes it), since no GPU
// times it here. Its FLOPs and bytes are the course's model, recomputed here by hand.
TEST(KernelWhySlow, ATimedKernelIsAPointOnTheRooflineAndCanBeDrawnInTheGpuMapping) {
  auto window = openWindow();
  ConvProblem problem;  // the course's first layer: 1 -> 6 channels, 5x5, 28x28 padded by 2
  problem.batch = 100;
  problem.inChannels = 1;
  problem.inHeight = problem.inWidth = 28;
  problem.outChannels = 6;
  problem.kernelHeight = problem.kernelWidth = 5;
  problem.padTop = problem.padLeft = problem.padBottom = problem.padRight = 2;
  auto report = std::make_shared<BenchmarkReport>();
  report->device = "NVIDIA H100 80GB HBM3";
  report->repeats = 10;
  BenchmarkRun run;
  run.variant = "user-why_slow";
  run.batch = 100;
  LayerBenchmark layer;
  layer.node = "/conv1/Conv";
  layer.problem = problem;
  layer.opTime = SampleStats{40e-6, 38e-6, 45e-6};
  run.layers.push_back(layer);
  report->runs.push_back(run);
  emit window->view<ui::UserKernelPanel>("kernel")->timed(report);

  const double flops = 2.0 * 100 * 6 * 28 * 28 * 1 * 5 * 5;                                // multiply-add = 2
  const double bytes = 4.0 * (100.0 * 1 * 28 * 28 + 6 * 1 * 5 * 5 + 100.0 * 6 * 28 * 28);  // in, weights, out
  ui::RooflineChart* chart = window->view<ui::RooflinePanel>("roofline")->chart();
  int found = -1;
  for (size_t i = 0; i < chart->points().size(); ++i)
    if (chart->points()[i].point.variant == "user-why_slow") found = static_cast<int>(i);
  ASSERT_GE(found, 0) << "no point of the student's kernel on the Roofline";
  const ui::RooflinePoint& point = chart->points()[static_cast<size_t>(found)].point;
  EXPECT_DOUBLE_EQ(point.flops, flops);
  EXPECT_DOUBLE_EQ(point.bytes, bytes);
  EXPECT_DOUBLE_EQ(point.seconds, 40e-6);
  EXPECT_TRUE(chart->pointText(found).contains("why_slow")) << chart->pointText(found).toStdString();

  // A second timing of the same kernel replaces its point rather than adding one.
  emit window->view<ui::UserKernelPanel>("kernel")->timed(report);
  int points = 0;
  for (const auto& plotted : chart->points()) points += plotted.point.variant == "user-why_slow";
  EXPECT_EQ(points, 1);

  // Checked (its row installed in the variant table), it joins the GPU mapping view's choices.
  // The rows of students' kernels belong to the process, and stay: on a GPU the other tests of this
  // program install why_slow.cu's when its check passes, so the program run whole once found this
  // kernel offered before it was installed. A name no other test here gives a kernel keeps the test
  // independent of the tests run before it.
  if (const std::string reason = skipReason(); !reason.empty()) GPU_TEST_SKIP() << "GPU mapping part: " << reason;
  QTemporaryDir dir;
  const QString file = writeFile(dir, "tiled_conv.cu", [] {
    QFile t(QString::fromUtf8(CONVSCOPE_SOURCE_DIR) + "/examples/kernels/tiled_conv.cu");
    EXPECT_TRUE(t.open(QIODevice::ReadOnly));
    return t.readAll();
  }());
  const UserKernelSource source = readUserKernelSource(file.toStdString());
  ui::GpuMappingPanel* mapping = window->view<ui::GpuMappingPanel>("gpu-mapping");
  EXPECT_FALSE(mapping->addUserVariant(source.id));  // not installed yet: not a choice
  EXPECT_EQ(mapping->variantChoice(1)->findData(QString::fromStdString(source.id)), -1);
  const CompiledUserKernel compiled = userKernelCompiler().compile(source);
  ASSERT_TRUE(compiled.ok()) << compiled.errorText();
  userKernelCompiler().install(compiled);
  emit window->view<ui::UserKernelPanel>("kernel")->variantReady(QString::fromStdString(source.id),
                                                                 QString::fromStdString(source.displayName), QString());
  for (int side = 0; side < 2; ++side)
    EXPECT_GE(mapping->variantChoice(side)->findData(QString::fromStdString(source.id)), 0) << side;
  ASSERT_TRUE(mapping->setVariant(1, source.id));
  EXPECT_EQ(mapping->view(1)->variant(), source.id);
  EXPECT_EQ(mapping->variantChoice(1)->currentText(), QString::fromStdString(source.displayName));
  // Drawn with the file's own geometry (its macros).
  EXPECT_EQ(mapping->view(1)->launch().blockX, source.launch.blockX);
  EXPECT_EQ(mapping->view(1)->launch().blockY, source.launch.blockY);
  EXPECT_EQ(mapping->view(1)->launch().tileWidth, source.launch.tileWidth);
  EXPECT_TRUE(mapping->view(1)->figuresText().contains("thread (")) << mapping->view(1)->figuresText().toStdString();
  // The picture in docs/your-kernel.md, with CONVSCOPE_SCREENSHOT_DIR set.
  if (const QString folder = qEnvironmentVariable("CONVSCOPE_SCREENSHOT_DIR"); !folder.isEmpty()) {
    ASSERT_TRUE(window->selectTab("gpu-mapping"));
    window->resize(1024, 700);
    QTest::qWait(300);
    EXPECT_TRUE(window->grab().save(QDir(folder).filePath("your-kernel-gpu-mapping.png")));
  }
}

}  // namespace
}  // namespace convscope::testing
