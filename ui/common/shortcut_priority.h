// Keys that belong to the window's shortcuts even while a text field has the focus. A spin box
// or line edit claims Ctrl+Left/Right for moving word by word (and Ctrl+Up/Down, Page Up/Down
// for stepping), so after typing a number into the "#" box the next-picture keys did nothing.
// Installed on the application, it keeps those keys from being claimed; the actions then fire.
// A widget whose own keys these are (the kernel editor) opts out with leaveKeysTo.
#pragma once

#include <QKeySequence>
#include <QList>
#include <QObject>

class QWidget;

namespace convscope::ui {

class ShortcutPriority : public QObject {
  Q_OBJECT

 public:
  // Filters the whole application's events for as long as `parent` lives.
  ShortcutPriority(QList<QKeySequence> keys, QObject* parent);
  ~ShortcutPriority() override;

  // `widget` and its children keep these keys (a code editor pages and moves word by word with them).
  static void leaveKeysTo(QWidget* widget);

  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  QList<QKeySequence> keys_;
};

}  // namespace convscope::ui
