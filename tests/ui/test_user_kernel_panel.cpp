// The "Your kernel" tab: opening a .cu file shows it in the editor, compiles it and shows each
// step's result; a save (Ctrl+S in the editor, or another editor's) runs the steps again; a
// compile error is marked on its line; no edit is lost to a change on disk or to closing; without a GPU the check and
// the timing say why they did not run and the kernel stays unselectable. On a GPU: a template passes, joins the
// selector and the Timing tab; a kernel that writes out of bounds is reported and the window goes on, and the next
// check in the same window passes.
#include <gtest/gtest.h>

#include <Qsci/qscilexercpp.h>
#include <Qsci/qsciscintilla.h>

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QLineEdit>
#include <QListWidget>
#include <QStandardItemModel>

#include "app/core/device/gpu_platform.h"
#include "gpu/user_kernel.h"
#include "tests/ui/ui_test_support.h"
#include "ui/kernel/failure_pictures.h"
#include "ui/kernel/kernel_editor.h"
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
  window->view<ui::UserKernelPanel>("kernel")->pipeline()->setProgram(CONVSCOPE_CLI_PATH);
  window->view<ui::UserKernelPanel>("kernel")->pipeline()->setTimingRepeats(2, 1);
  return window;
}

TEST(UserKernelPanel, OpeningAKernelCompilesItAndSaysWhyItCannotRunHere) {
  if (gpuInfo().usable) GTEST_SKIP() << "a GPU is usable here: GpuChecksTimesAndContainsAFault covers it";
  auto window = windowWithKernelPanel();
  QTemporaryDir dir;
  const QString file = writeFile(dir, "my_conv.cu", contentsOf(kTemplates + "naive_conv.cu"));
  ASSERT_TRUE(window->openFile(file));
  ui::UserKernelPanel* panel = window->view<ui::UserKernelPanel>("kernel");
  ASSERT_TRUE(waitForSteps(*panel, 60000));
  const QString compile = panel->stepText(ui::KernelStep::Compile);
  if (!gpu::userKernelCompilerUnavailableReason().empty()) {
    EXPECT_TRUE(compile.contains("no CUDA toolkit")) << compile.toStdString();
    EXPECT_TRUE(selectorEntry(*window, "user-my_conv").first.isEmpty());
    return;
  }
  EXPECT_EQ(compile, QString("Compile: ✔ compiled for sm_90 · block 16×16 · tile 16×16"));
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
  if (const std::string reason = gpu::userKernelCompilerUnavailableReason(); !reason.empty()) GPU_TEST_SKIP() << reason;
  auto window = windowWithKernelPanel();
  QTemporaryDir dir;
  const QString file = writeFile(dir, "mine.cu", contentsOf(kKernels + "syntax_error.cu"));
  ASSERT_TRUE(window->openFile(file));
  ui::UserKernelPanel* panel = window->view<ui::UserKernelPanel>("kernel");
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

// The 1-based number of the first line of `text` that contains `needle` (0: none).
int lineContaining(const QString& text, const QString& needle) {
  const QStringList lines = text.split('\n');
  for (int i = 0; i < lines.size(); ++i)
    if (lines[i].contains(needle)) return i + 1;
  return 0;
}

// The window's kernel tab with a fresh copy of the naive template open in it.
struct KernelInEditor {
  std::unique_ptr<gui::MainWindow> window = windowWithKernelPanel();
  QTemporaryDir dir;
  ui::UserKernelPanel* panel = window->view<ui::UserKernelPanel>("kernel");
  QsciScintilla* text = panel->editor()->editor();
  QString file;

  KernelInEditor() {
    file = writeFile(dir, "student.cu", contentsOf(kTemplates + "naive_conv.cu"));
    EXPECT_TRUE(window->openFile(file));
    EXPECT_TRUE(waitForSteps(*panel, 60000));
  }
  // Types `keys` at the start of the 1-based `line`, as a student would.
  void typeAtLine(int line, const QString& keys) {
    text->setFocus();
    text->setCursorPosition(line - 1, 0);
    const QStringList typedLines = keys.split('\n');
    for (int i = 0; i < typedLines.size(); ++i) {
      if (i > 0) QTest::keyClick(text, Qt::Key_Return);
      QTest::keyClicks(text, typedLines[i]);
    }
  }
};

TEST(UserKernelEditor, NewFromTemplateAsksWhereWritesTheCopyAndOpensIt) {
  auto window = windowWithKernelPanel();
  ui::UserKernelPanel* panel = window->view<ui::UserKernelPanel>("kernel");
  QTemporaryDir dir;
  QString suggested;
  // Cancelled: nothing written, nothing opened.
  panel->setSavePathChooser([&](const QString& start) {
    suggested = start;
    return QString();
  });
  EXPECT_FALSE(panel->newFromTemplate(ui::KernelTemplate::Naive));
  EXPECT_TRUE(suggested.endsWith(".cu")) << suggested.toStdString();
  EXPECT_TRUE(panel->file().isEmpty());

  for (const auto& [which, name] : {std::pair{ui::KernelTemplate::Naive, QString("naive_conv.cu")},
                                    std::pair{ui::KernelTemplate::Tiled, QString("tiled_conv.cu")}}) {
    // A name without ".cu" gets it: the window opens kernels by that suffix.
    const QString chosen = dir.filePath("copy_of_" + QFileInfo(name).completeBaseName());
    panel->setSavePathChooser([&](const QString&) { return chosen; });
    ASSERT_TRUE(panel->newFromTemplate(which)) << panel->errorText().toStdString();
    const QByteArray expected = contentsOf(kTemplates + name);
    EXPECT_EQ(contentsOf(chosen + ".cu"), expected) << name.toStdString();
    EXPECT_EQ(panel->file(), QFileInfo(chosen + ".cu").absoluteFilePath());
    EXPECT_EQ(panel->editor()->text(), QString::fromUtf8(expected));
    EXPECT_FALSE(panel->editor()->isModified());
    ASSERT_TRUE(waitForSteps(*panel, 60000));
  }
}

TEST(UserKernelEditor, TypingThenCtrlSSavesTheFileAndMarksTheErrorOnItsLine) {
  if (const std::string reason = gpu::userKernelCompilerUnavailableReason(); !reason.empty()) GPU_TEST_SKIP() << reason;
  KernelInEditor k;
  EXPECT_TRUE(k.panel->stepText(ui::KernelStep::Compile).contains("✔")) << k.panel->detailsText().toStdString();
  EXPECT_EQ(k.panel->diagnosticsList()->count(), 0);
  const int line = lineContaining(k.panel->editor()->text(), "float sum = 0.0f;");
  ASSERT_GT(line, 0);
  k.typeAtLine(line, "int broken = ;\n");
  EXPECT_TRUE(k.panel->editor()->isModified());
  EXPECT_NE(contentsOf(k.file), k.panel->editor()->text().toUtf8());  // typed, not yet saved

  QTest::keyClick(k.text, Qt::Key_S, Qt::ControlModifier);
  // On disk: the template with the typed line inserted.
  QByteArray expected = contentsOf(kTemplates + "naive_conv.cu");
  QList<QByteArray> lines = expected.split('\n');
  lines.insert(line - 1, "int broken = ;");
  EXPECT_EQ(contentsOf(k.file), lines.join('\n'));
  EXPECT_FALSE(k.panel->editor()->isModified());
  ASSERT_TRUE(waitForSteps(*k.panel, 60000));

  EXPECT_TRUE(k.panel->stepText(ui::KernelStep::Compile).contains("✘")) << k.panel->detailsText().toStdString();
  // The marker and the annotation on the typed line, and on no other.
  for (int other = 1; other <= k.text->lines(); ++other) {
    const bool marked = k.text->markersAtLine(other - 1) & (1 << ui::KernelEditor::kErrorMarker);
    EXPECT_EQ(marked, other == line) << "line " << other;
    EXPECT_EQ(k.text->annotation(other - 1).isEmpty(), other != line) << "line " << other;
  }
  EXPECT_TRUE(k.text->annotation(line - 1).contains("expected an expression"))
      << k.text->annotation(line - 1).toStdString();

  // The list's entry jumps to the line.
  QListWidget* list = k.panel->diagnosticsList();
  ASSERT_EQ(list->count(), 1);
  EXPECT_TRUE(list->item(0)->text().startsWith(QString("line %1: error: expected an expression").arg(line)))
      << list->item(0)->text().toStdString();
  k.text->setCursorPosition(0, 0);
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->item(0)).center());
  int cursorLine = -1, cursorIndex = -1;
  k.text->getCursorPosition(&cursorLine, &cursorIndex);
  EXPECT_EQ(cursorLine, line - 1);
  EXPECT_TRUE(k.text->hasFocus());

  // Undo takes the typed line back; a save then compiles cleanly and the marks go.
  for (int i = 0; i < 20 && k.panel->editor()->text().contains("broken"); ++i)
    QTest::keyClick(k.text, Qt::Key_Z, Qt::ControlModifier);
  EXPECT_EQ(k.panel->editor()->text().toUtf8(), expected);
  QTest::keyClick(k.text, Qt::Key_S, Qt::ControlModifier);
  EXPECT_EQ(contentsOf(k.file), expected);
  ASSERT_TRUE(waitForSteps(*k.panel, 60000));
  EXPECT_TRUE(k.panel->stepText(ui::KernelStep::Compile).contains("✔"));
  EXPECT_EQ(list->count(), 0);
  EXPECT_EQ(k.text->markersAtLine(line - 1), 0);
  EXPECT_TRUE(k.text->annotation(line - 1).isEmpty());
}

// Nothing is cut at the editor's edge (issue 30): a long line of code wraps, and a compile
// error's note under its line is wrapped again to the editor's width, each of its lines within
// the characters a line shows, wider or narrower.
TEST(UserKernelEditor, LongLinesAndErrorNotesWrapToTheEditorsWidth) {
  ui::KernelEditor editor;
  editor.resize(420, 300);
  editor.show();
  QsciScintilla* text = editor.editor();
  EXPECT_EQ(text->wrapMode(), QsciScintilla::WrapWord);
  text->setText("float a = 1.0f;\nconst int patchHeight = CONVSCOPE_TILE_HEIGHT + s.kernelHeight - 1; // " +
                QString("long comment ").repeated(12) + "\n");
  const QString message =
      "my_conv.cu:2: error: " + QString("identifier CONVSCOPE_TILE_HIGHT is undefined ").repeated(6) +
      "/a/very/long/path/to/an/include/file/that/has/no/spaces/at/all/kernel.cuh";
  editor.addDiagnostic(2, message);
  const auto linesOfNote = [&] { return text->annotation(1).split('\n'); };
  const auto columns = [&] {
    const QFont font = text->lexer()->defaultFont(0);
    return text->viewport()->width() / std::max(1, QFontMetrics(font).horizontalAdvance('M'));
  };
  QCoreApplication::processEvents();
  QStringList narrow = linesOfNote();
  ASSERT_GT(narrow.size(), 2) << narrow.join("|").toStdString();
  for (const QString& line : narrow) EXPECT_LE(line.size(), columns()) << line.toStdString();
  EXPECT_EQ(narrow.join(' ').remove(' '), QString(message).remove(' ')) << "every character is kept";
  // The code line wraps: Scintilla shows line 2 on more than one display line.
  EXPECT_GT(text->SendScintilla(QsciScintilla::SCI_WRAPCOUNT, 1), 1);

  editor.resize(1200, 300);
  QCoreApplication::processEvents();
  const QStringList wide = linesOfNote();
  EXPECT_LT(wide.size(), narrow.size()) << "wrapped again at the new width";
  for (const QString& line : wide) EXPECT_LE(line.size(), columns()) << line.toStdString();
}

TEST(UserKernelEditor, CtrlFFindsEachMatchInTurn) {
  KernelInEditor k;
  const QString source = k.panel->editor()->text();
  k.text->setFocus();
  k.text->setCursorPosition(0, 0);
  QTest::keyClick(k.text, Qt::Key_F, Qt::ControlModifier);
  QLineEdit* field = k.panel->editor()->findField();
  ASSERT_TRUE(field->isVisible());
  ASSERT_TRUE(field->hasFocus());
  QTest::keyClicks(field, "outchannels");  // not case-sensitive
  // Every line holding it, counted from the text itself.
  QList<int> expected;
  const QStringList lines = source.split('\n');
  for (int i = 0; i < lines.size(); ++i)
    if (lines[i].contains("outChannels")) expected << i;
  ASSERT_GE(expected.size(), 2);
  for (int i = 0; i <= expected.size(); ++i) {  // one more: it wraps to the first
    QTest::keyClick(field, Qt::Key_Return);
    int lineFrom = -1, indexFrom = -1, lineTo = -1, indexTo = -1;
    k.text->getSelection(&lineFrom, &indexFrom, &lineTo, &indexTo);
    EXPECT_EQ(lineFrom, expected[i % expected.size()]) << "match " << i;
    EXPECT_EQ(k.text->selectedText(), "outChannels");
  }
  // Shift+Enter goes back: from the first match (selected now), wrapping to the last.
  QTest::keyClick(field, Qt::Key_Return, Qt::ShiftModifier);
  int lineFrom = -1, indexFrom = -1, lineTo = -1, indexTo = -1;
  k.text->getSelection(&lineFrom, &indexFrom, &lineTo, &indexTo);
  EXPECT_EQ(lineFrom, expected.back());
  field->setText("no such text");
  EXPECT_FALSE(k.panel->editor()->findNext());
  QTest::keyClick(field, Qt::Key_Escape);
  EXPECT_FALSE(field->isVisible());
}

// CUDA's qualifiers read as keywords and its built-ins in a style of their own; plain names stay plain.
TEST(UserKernelEditor, HighlightsCudaKeywordsAndBuiltIns) {
  KernelInEditor k;
  k.text->SendScintilla(QsciScintilla::SCI_COLOURISE, 0, -1);
  const QByteArray bytes = k.text->text().toUtf8();  // Scintilla's positions count UTF-8 bytes
  const auto styleOf = [&](const char* word) {
    const int position = bytes.indexOf(word);
    EXPECT_GE(position, 0) << word;
    return static_cast<int>(k.text->SendScintilla(QsciScintilla::SCI_GETSTYLEAT, position));
  };
  EXPECT_EQ(styleOf("extern"), QsciLexerCPP::Keyword);  // C++'s own keywords are kept
  EXPECT_EQ(styleOf("__global__"), QsciLexerCPP::Keyword);
  EXPECT_EQ(styleOf("blockIdx"), QsciLexerCPP::KeywordSet2);
  EXPECT_EQ(styleOf("threadIdx"), QsciLexerCPP::KeywordSet2);
  EXPECT_EQ(styleOf("sum +="), QsciLexerCPP::Identifier);
  EXPECT_EQ(styleOf("// A naive"), QsciLexerCPP::CommentLine);
}

// The window takes Page Down and Ctrl+arrows from text fields for its next-image keys; in the
// editor they move in the text.
TEST(UserKernelEditor, NavigationKeysMoveInTheTextNotToTheNextImage) {
  KernelInEditor k;
  k.text->setFocus();
  k.text->setCursorPosition(0, 0);
  QTest::keyClick(k.text, Qt::Key_PageDown);
  int line = -1, index = -1;
  k.text->getCursorPosition(&line, &index);
  EXPECT_GT(line, 0);
  k.text->setCursorPosition(0, 0);
  QTest::keyClick(k.text, Qt::Key_Right, Qt::ControlModifier);
  k.text->getCursorPosition(&line, &index);
  EXPECT_EQ(line, 0);
  // Word by word: from "//" to the start of the next word, "A" of "// A naive convolution".
  EXPECT_EQ(index, k.text->text(0).indexOf("A naive"));
}

TEST(UserKernelEditor, AnotherEditorsSaveReloadsTheEditorWhenItHasNoEdits) {
  KernelInEditor k;
  int asked = 0;
  k.panel->setDiskConflictResolver([&](const QString&) {
    ++asked;
    return true;
  });
  // First a save here (written whole, by a rename): the file stays watched.
  k.typeAtLine(1, "// saved here\n");
  QTest::keyClick(k.text, Qt::Key_S, Qt::ControlModifier);
  EXPECT_TRUE(contentsOf(k.file).startsWith("// saved here\n"));
  ASSERT_TRUE(waitForSteps(*k.panel, 60000));
  QTest::qWait(500);  // the watcher's echo of that save changes nothing
  EXPECT_FALSE(k.panel->editor()->isModified());

  const QByteArray external = contentsOf(kTemplates + "tiled_conv.cu");
  writeFile(k.dir, "student.cu", external);
  ASSERT_TRUE(QTest::qWaitFor([&] { return k.panel->editor()->text().toUtf8() == external; }, 10000));
  EXPECT_FALSE(k.panel->editor()->isModified());
  EXPECT_EQ(asked, 0);  // nothing to ask: the editor held no edits
  ASSERT_TRUE(waitForSteps(*k.panel, 60000));
}

TEST(UserKernelEditor, OpeningTheSameFileAgainOverUnsavedEditsAsks) {
  KernelInEditor k;
  int asked = 0;
  k.panel->setUnsavedEditsPrompt([&](const QString&) {
    ++asked;
    return ui::UserKernelPanel::UnsavedEditsChoice::Cancel;
  });
  k.typeAtLine(1, "// mine\n");
  const QString edited = k.panel->editor()->text();
  k.panel->openKernel(k.file);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(k.panel->editor()->text(), edited);
  EXPECT_TRUE(k.panel->editor()->isModified());
}

TEST(UserKernelEditor, AChangeOnDiskOverUnsavedEditsAsksWhichToKeep) {
  KernelInEditor k;
  int asked = 0;
  bool keepEditor = true;
  k.panel->setDiskConflictResolver([&](const QString& file) {
    EXPECT_EQ(file, QFileInfo(k.file).absoluteFilePath());
    ++asked;
    return keepEditor;
  });
  k.typeAtLine(1, "// my note\n");
  const QString edited = k.panel->editor()->text();
  ASSERT_TRUE(edited.startsWith("// my note\n"));

  // Keep the editor's text: the file keeps the other program's, the editor its edits.
  const QByteArray external = contentsOf(kTemplates + "tiled_conv.cu");
  writeFile(k.dir, "student.cu", external);
  ASSERT_TRUE(QTest::qWaitFor([&] { return asked == 1; }, 10000));
  QTest::qWait(500);  // no second question for the same change
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(k.panel->editor()->text(), edited);
  EXPECT_TRUE(k.panel->editor()->isModified());
  EXPECT_EQ(contentsOf(k.file), external);

  // Load the file: the editor shows it, and Undo brings the student's text back.
  keepEditor = false;
  QByteArray secondExternal = external;
  secondExternal.replace("tile", "TILE_");
  writeFile(k.dir, "student.cu", secondExternal);
  ASSERT_TRUE(QTest::qWaitFor([&] { return asked == 2; }, 10000));
  EXPECT_EQ(k.panel->editor()->text().toUtf8(), secondExternal);
  EXPECT_FALSE(k.panel->editor()->isModified());
  k.text->setFocus();
  QTest::keyClick(k.text, Qt::Key_Z, Qt::ControlModifier);
  EXPECT_EQ(k.panel->editor()->text(), edited);
  ASSERT_TRUE(waitForSteps(*k.panel, 60000));
}

TEST(UserKernelEditor, ClosingTheWindowWithUnsavedEditsAsks) {
  using Choice = ui::UserKernelPanel::UnsavedEditsChoice;
  for (const Choice choice : {Choice::Cancel, Choice::Discard, Choice::Save}) {
    KernelInEditor k;
    const QByteArray before = contentsOf(k.file);
    int asked = 0;
    k.panel->setUnsavedEditsPrompt([&](const QString&) {
      ++asked;
      return choice;
    });
    // Without edits: no question.
    EXPECT_TRUE(k.panel->confirmClose());
    EXPECT_EQ(asked, 0);

    k.typeAtLine(1, "// unsaved\n");
    const bool closed = k.window->close();
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(closed, choice != Choice::Cancel);
    EXPECT_EQ(k.window->isVisible(), choice == Choice::Cancel);
    EXPECT_EQ(contentsOf(k.file), choice == Choice::Save ? "// unsaved\n" + before : before);
    ASSERT_TRUE(waitForSteps(*k.panel, 60000));
  }
}

TEST(UserKernelPanel, GpuChecksTimesAndContainsAFault) {
  if (!gpuInfo().usable) GPU_TEST_SKIP() << "no GPU: " << gpuInfo().unusableReason;
  auto window = windowWithKernelPanel();
  ui::UserKernelPanel* panel = window->view<ui::UserKernelPanel>("kernel");
  QTemporaryDir dir;
  const QString good = writeFile(dir, "good.cu", contentsOf(kTemplates + "tiled_conv.cu"));
  ASSERT_TRUE(window->openFile(good));
  ASSERT_TRUE(waitForSteps(*panel, 600000));
  EXPECT_TRUE(panel->stepText(ui::KernelStep::Check).contains("✔ passed")) << panel->detailsText().toStdString();
  EXPECT_TRUE(panel->stepText(ui::KernelStep::Time).contains("batch 10000")) << panel->detailsText().toStdString();
  EXPECT_TRUE(selectorEntry(*window, "user-good").second);
  ASSERT_TRUE(window->view<ui::TimingPanel>("timing")->report());
  int runs = 0;
  for (const BenchmarkRun& run : window->view<ui::TimingPanel>("timing")->report()->runs)
    runs += run.variant == "user-good";
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

// Wrong kernels on the GPU: each fails its check and the tab draws where. With
// CONVSCOPE_SCREENSHOT_DIR set, the tab of each is written there (your-kernel-<name>.png).
TEST(UserKernelPanel, GpuWrongKernelsShowTheirPattern) {
  if (!gpuInfo().usable) GPU_TEST_SKIP() << "no GPU: " << gpuInfo().unusableReason;
  auto window = windowWithKernelPanel();
  window->resize(1280, 800);
  ui::UserKernelPanel* panel = window->view<ui::UserKernelPanel>("kernel");
  QTemporaryDir dir;
  for (const QString name : {"leaves_rows_unwritten", "ignores_stride", "forgets_left_padding"}) {
    SCOPED_TRACE(name.toStdString());
    const QString file = writeFile(dir, name + ".cu", contentsOf(kKernels + name + ".cu"));
    ASSERT_TRUE(window->openFile(file));
    ASSERT_TRUE(waitForSteps(*panel, 300000));
    EXPECT_TRUE(panel->stepText(ui::KernelStep::Check).contains("✘")) << panel->detailsText().toStdString();
    ui::FailurePictures* pictures = panel->failurePictures();
    ASSERT_TRUE(pictures->isVisible());
    ASSERT_TRUE(pictures->failureMap().has_value());
    const ConvFailureMap& map = *pictures->failureMap();
    EXPECT_GT(map.bad(), 0);
    if (name == "leaves_rows_unwritten") EXPECT_GT(map.neverWritten, 0);
    // The first bad element has its verdict's colour where the picture draws it.
    QCoreApplication::processEvents();
    const QImage shown = pictures->grab().toImage();
    bool found = false;
    for (int h = 0; h < map.height && !found; ++h)
      for (int w = 0; w < map.width && !found; ++w) {
        if (map.at(h, w) == ElementVerdict::Ok) continue;
        found = true;
        const std::optional<QPoint> at = pictures->elementCentre(ui::FailurePictures::Picture::Verdicts, h, w);
        ASSERT_TRUE(at.has_value());
        EXPECT_EQ(shown.pixelColor(*at), ui::FailurePictures::verdictColour(map.at(h, w)));
      }
    EXPECT_TRUE(found);
    if (const QString folder = qEnvironmentVariable("CONVSCOPE_SCREENSHOT_DIR"); !folder.isEmpty())
      EXPECT_TRUE(window->grab().save(QDir(folder).filePath("your-kernel-" + name + ".png")));
  }
}

}  // namespace
}  // namespace convscope::testing
