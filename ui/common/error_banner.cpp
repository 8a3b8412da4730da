#include "ui/common/error_banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace convscope::ui {

ErrorBanner::ErrorBanner(QWidget* parent) : QFrame(parent), text_(new QLabel(this)) {
  setObjectName("errorBanner");
  // Fixed colours: an error must read as one in the normal and the high-contrast palette alike.
  setStyleSheet(
      "#errorBanner { background: #fde2e1; border: 1px solid #c0392b; border-radius: 4px; }"
      "#errorBanner QLabel { color: #7b1d14; }");
  text_->setWordWrap(true);
  text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* close = new QToolButton(this);
  close->setText("✕");
  close->setToolTip(tr("Dismiss"));
  close->setAutoRaise(true);
  connect(close, &QToolButton::clicked, this, &ErrorBanner::dismiss);

  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(8, 4, 4, 4);
  auto* icon = new QLabel("⚠", this);
  layout->addWidget(icon);
  layout->addWidget(text_, 1);
  layout->addWidget(close, 0, Qt::AlignTop);
  hide();
}

void ErrorBanner::showError(const QString& message) {
  text_->setText(message);
  show();
}

QString ErrorBanner::message() const {
  return isHidden() ? QString() : text_->text();
}

void ErrorBanner::dismiss() {
  text_->clear();
  hide();
}

}  // namespace convscope::ui
