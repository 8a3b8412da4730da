// The student's kernel source in an editor: QScintilla with C++/CUDA highlighting (CudaLexer),
// line numbers, undo and a find bar (Ctrl+F; Enter finds the next, Shift+Enter the previous,
// Escape closes it). A compiler diagnostic is a marker in the margin, its line tinted, and the
// message as an annotation under the line. Nothing is cut at the editor's edge: long code lines
// wrap (indented, marked in the margin) and annotations are wrapped again to the width on resize.
#pragma once

#include <QString>
#include <QWidget>

#include <utility>
#include <vector>

class QLabel;
class QLineEdit;
class QsciScintilla;

namespace convscope::ui {

class CudaLexer;

class KernelEditor : public QWidget {
  Q_OBJECT

 public:
  // Scintilla's marker numbers: the margin's symbol and the tinted line.
  static constexpr int kErrorMarker = 0;
  static constexpr int kErrorLineMarker = 1;

  explicit KernelEditor(QWidget* parent = nullptr);

  QsciScintilla* editor() const { return editor_; }
  QString text() const;
  // Replaces the text (a file just read): no undo back into the previous file, not modified.
  void setTextFromFile(const QString& text);
  bool isModified() const;
  void setModified(bool modified);

  // `line` counts from 1, as the compiler does. Several messages on one line share its annotation.
  void addDiagnostic(int line, const QString& message);
  void clearDiagnostics();
  void goToLine(int line);  // moves the cursor to the line's start, shows it, and gives the focus

  void showFindBar();
  bool findNext(bool forward = true);  // from the cursor, wrapping; false when nothing matches
  QLineEdit* findField() const { return findField_; }

  void setEditorFont(const QFont& font);  // every style in it, and the line numbers' width

 signals:
  void modificationChanged(bool modified);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  // The annotations again, each message wrapped to the characters a line of the editor shows.
  void annotate();

  QsciScintilla* editor_;
  CudaLexer* lexer_;
  QWidget* findBar_;
  QLineEdit* findField_;
  QLabel* findStatus_;
  QString lastFindExpression_;
  bool lastFindForward_ = true;
  int annotationStyle_ = 0;
  std::vector<std::pair<int, QString>> diagnostics_;  // (line from 1, message), as added
};

}  // namespace convscope::ui
