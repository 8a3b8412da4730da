#include "ui/charts/styled_plot.h"

#include "ui/charts/chart_style.h"

namespace convscope::ui {

StyledPlot::StyledPlot(QWidget* parent, Title title) : QCustomPlot(parent) {
  if (title == Title::Shown) {
    title_ = new QCPTextElement(this);
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, title_);
  }
}

QString StyledPlot::titleText() const {
  return title_ ? title_->text() : QString();
}

void StyledPlot::restyle() {
  styleChart(*this);
  if (title_) setFittedTitle(*title_, titleParts_, width());
}

void StyledPlot::styleChanged(QEvent::Type change) {
  (void)change;
  restyle();
  replot(rpQueuedReplot);
}

bool StyledPlot::event(QEvent* event) {
  if (answerToolTip(*this, event, [this](const QPoint& at) { return toolTipAt(at); })) return true;
  return QCustomPlot::event(event);
}

void StyledPlot::changeEvent(QEvent* event) {
  QCustomPlot::changeEvent(event);
  if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange) styleChanged(event->type());
}

void StyledPlot::resizeEvent(QResizeEvent* event) {
  if (title_) setFittedTitle(*title_, titleParts_, event->size().width());
  fitTo(event->size());
  QCustomPlot::resizeEvent(event);
  laidOut();
}

}  // namespace convscope::ui
