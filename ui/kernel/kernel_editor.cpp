#include "ui/kernel/kernel_editor.h"

#include <Qsci/qsciscintilla.h>
#include <Qsci/qscistyle.h>

#include <algorithm>
#include <functional>
#include <map>

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QShortcut>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/common/shortcut_priority.h"
#include "ui/kernel/cuda_lexer.h"

namespace convscope::ui {
namespace {

const QColor kErrorRed("#d62728");
const QColor kErrorLineTint("#fde2e2");
const QColor kAnnotationPaper("#fff0f0");
const QColor kCudaBuiltInColour("#8a2be2");

// In the find field: Enter finds the next match, Shift+Enter the previous, Escape closes the bar.
class FindField : public QLineEdit {
 public:
  using QLineEdit::QLineEdit;
  std::function<void()> onEscape;
  std::function<void(bool forward)> onEnter;

 protected:
  void keyPressEvent(QKeyEvent* event) override {
    if (event->key() == Qt::Key_Escape && onEscape) return onEscape();
    if ((event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) && onEnter)
      return onEnter(!(event->modifiers() & Qt::ShiftModifier));
    QLineEdit::keyPressEvent(event);
  }
};

}  // namespace

KernelEditor::KernelEditor(QWidget* parent)
    : QWidget(parent), editor_(new QsciScintilla(this)), lexer_(new CudaLexer(this)), findBar_(new QWidget(this)) {
  editor_->setUtf8(true);
  editor_->setLexer(lexer_);
  lexer_->setColor(kCudaBuiltInColour, QsciLexerCPP::KeywordSet2);
  editor_->setAutoIndent(true);
  editor_->setIndentationsUseTabs(false);
  editor_->setTabWidth(2);
  editor_->setBraceMatching(QsciScintilla::SloppyBraceMatch);
  editor_->setCaretLineVisible(true);
  editor_->setCaretLineBackgroundColor(QColor("#f4f7fb"));
  editor_->setEolMode(QsciScintilla::EolUnix);
  // Page Up/Down and Ctrl+arrows move in the text here, not to the next test image.
  ShortcutPriority::leaveKeysTo(editor_);

  // Margin 0: line numbers. Margin 1: the error markers.
  editor_->setMarginType(0, QsciScintilla::NumberMargin);
  editor_->setMarginLineNumbers(0, true);
  editor_->setMarginType(1, QsciScintilla::SymbolMargin);
  editor_->setMarginWidth(1, 14);
  editor_->setMarginMarkerMask(1, 1 << kErrorMarker);
  editor_->setMarginMarkerMask(0, 0);
  editor_->markerDefine(QsciScintilla::Circle, kErrorMarker);
  editor_->setMarkerBackgroundColor(kErrorRed, kErrorMarker);
  editor_->setMarkerForegroundColor(kErrorRed, kErrorMarker);
  editor_->markerDefine(QsciScintilla::Background, kErrorLineMarker);
  editor_->setMarkerBackgroundColor(kErrorLineTint, kErrorLineMarker);
  editor_->setAnnotationDisplay(QsciScintilla::AnnotationBoxed);
  // A projected editor shows every character: a long line continues, indented, on the next.
  editor_->setWrapMode(QsciScintilla::WrapWord);
  editor_->setWrapVisualFlags(QsciScintilla::WrapFlagByBorder, QsciScintilla::WrapFlagNone);
  editor_->setWrapIndentMode(QsciScintilla::WrapIndentIndented);

  findField_ = new FindField(findBar_);
  findField_->setPlaceholderText(tr("Find"));
  findField_->setClearButtonEnabled(true);
  findStatus_ = new QLabel(findBar_);
  auto* previous = new QToolButton(findBar_);
  previous->setText(tr("Previous"));
  auto* next = new QToolButton(findBar_);
  next->setText(tr("Next"));
  auto* close = new QToolButton(findBar_);
  close->setText(tr("✕"));
  close->setToolTip(tr("Close the find bar (Escape)"));
  auto* findLayout = new QHBoxLayout(findBar_);
  findLayout->setContentsMargins(0, 0, 0, 0);
  findLayout->addWidget(findField_, 1);
  findLayout->addWidget(previous);
  findLayout->addWidget(next);
  findLayout->addWidget(findStatus_);
  findLayout->addWidget(close);
  findBar_->hide();

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(editor_, 1);
  layout->addWidget(findBar_);
  setEditorFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

  auto hideFindBar = [this] {
    findBar_->hide();
    editor_->setFocus();
  };
  auto* field = static_cast<FindField*>(findField_);
  field->onEscape = hideFindBar;
  field->onEnter = [this](bool forward) { findNext(forward); };
  connect(close, &QToolButton::clicked, this, hideFindBar);
  connect(next, &QToolButton::clicked, this, [this] { findNext(true); });
  connect(previous, &QToolButton::clicked, this, [this] { findNext(false); });
  auto* find = new QShortcut(QKeySequence::Find, this, this, &KernelEditor::showFindBar);
  find->setContext(Qt::WidgetWithChildrenShortcut);
  connect(editor_, &QsciScintilla::modificationChanged, this, &KernelEditor::modificationChanged);
}

QString KernelEditor::text() const {
  return editor_->text();
}

void KernelEditor::setTextFromFile(const QString& text) {
  editor_->setText(text);
  editor_->SendScintilla(QsciScintilla::SCI_EMPTYUNDOBUFFER);
  editor_->setModified(false);
}

bool KernelEditor::isModified() const {
  return editor_->isModified();
}

void KernelEditor::setModified(bool modified) {
  editor_->setModified(modified);
}

void KernelEditor::addDiagnostic(int line, const QString& message) {
  if (line < 1 || line > editor_->lines()) return;
  const int index = line - 1;  // Scintilla counts lines from 0
  editor_->markerAdd(index, kErrorMarker);
  editor_->markerAdd(index, kErrorLineMarker);
  diagnostics_.emplace_back(line, message);
  annotate();
}

void KernelEditor::annotate() {
  editor_->clearAnnotations();
  if (diagnostics_.empty()) return;
  // The characters a line of the editor shows, less the annotation box's border.
  const QFont font = lexer_->defaultFont(0);  // what the text is drawn in (setEditorFont)
  const int character = std::max(1, QFontMetrics(font).horizontalAdvance('M'));
  const int columns = std::max(24, editor_->viewport()->width() / character - 2);
  std::map<int, QStringList> linesOf;
  for (const auto& [line, message] : diagnostics_) {
    for (const QString& paragraph : message.split('\n')) {
      QString current;
      for (const QString& word : paragraph.split(' ')) {
        if (!current.isEmpty() && current.size() + 1 + word.size() > columns) {
          linesOf[line - 1] << current;
          current.clear();
        }
        // A word longer than a line (a path) is cut into pieces of a line each.
        QString rest = current.isEmpty() ? word : current + ' ' + word;
        while (rest.size() > columns) {
          linesOf[line - 1] << rest.left(columns);
          rest = rest.mid(columns);
        }
        current = rest;
      }
      linesOf[line - 1] << current;
    }
  }
  const QsciStyle style(annotationStyle_ ? annotationStyle_ : -1, tr("compiler error"), kErrorRed.darker(130),
                        kAnnotationPaper, font);
  annotationStyle_ = style.style();
  for (const auto& [index, lines] : linesOf) editor_->annotate(index, lines.join('\n'), style);
}

void KernelEditor::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  annotate();
}

void KernelEditor::clearDiagnostics() {
  editor_->markerDeleteAll(kErrorMarker);
  editor_->markerDeleteAll(kErrorLineMarker);
  diagnostics_.clear();
  editor_->clearAnnotations();
}

void KernelEditor::goToLine(int line) {
  const int index = std::clamp(line - 1, 0, std::max(0, editor_->lines() - 1));
  editor_->setCursorPosition(index, 0);
  editor_->ensureLineVisible(index);
  editor_->setFocus();
}

void KernelEditor::showFindBar() {
  findBar_->show();
  if (editor_->hasSelectedText() && !editor_->selectedText().contains('\n'))
    findField_->setText(editor_->selectedText());
  findField_->selectAll();
  findField_->setFocus();
}

bool KernelEditor::findNext(bool forward) {
  const QString expression = findField_->text();
  if (expression.isEmpty()) return false;
  bool found = false;
  if (expression == lastFindExpression_ && forward == lastFindForward_ && editor_->hasSelectedText()) {
    found = editor_->findNext();  // the same search again: on from the last match
  } else {
    // A new search starts at the cursor; going back, before the match that is selected.
    int line = -1, index = -1;
    if (!forward && editor_->hasSelectedText()) {
      int lineTo = 0, indexTo = 0;
      editor_->getSelection(&line, &index, &lineTo, &indexTo);
    }
    found =
        editor_->findFirst(expression, /*re=*/false, /*cs=*/false, /*wo=*/false, /*wrap=*/true, forward, line, index);
  }
  lastFindExpression_ = found ? expression : QString();
  lastFindForward_ = forward;
  findStatus_->setText(found ? QString() : tr("not found"));
  return found;
}

void KernelEditor::setEditorFont(const QFont& font) {
  lexer_->setDefaultFont(font);
  lexer_->setFont(font, -1);  // every style
  editor_->setMarginsFont(font);
  editor_->setMarginWidth(0, QFontMetrics(font).horizontalAdvance("00000"));
  annotate();  // wrapped again at the new character width
}

}  // namespace convscope::ui
