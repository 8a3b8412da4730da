// A strip across the top of the window that says what went wrong (a model that would not load,
// a file that is not an image) without blocking: the user reads it, closes it or just goes on.
#pragma once

#include <QFrame>

class QLabel;

namespace convscope::ui {

class ErrorBanner : public QFrame {
  Q_OBJECT

 public:
  explicit ErrorBanner(QWidget* parent = nullptr);

  void showError(const QString& message);
  QString message() const;  // empty while hidden

 public slots:
  void dismiss();

 private:
  QLabel* text_;
};

}  // namespace convscope::ui
