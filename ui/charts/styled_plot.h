// What every chart of ConvScope shares, written once: a title across the top whose parts wrap to
// the chart's width (setFittedTitle), the application's palette and font (presentation mode
// restyles every chart with the rest of the window), and a tooltip for what the pointer is on.
// A chart says what its tooltip is, what it restyles, and what it fits to a new size; the events
// are handled here.
#pragma once

#include <qcustomplot.h>

#include <QStringList>

namespace convscope::ui {

class StyledPlot : public QCustomPlot {
  Q_OBJECT

 public:
  enum class Title { Shown, None };
  explicit StyledPlot(QWidget* parent = nullptr, Title title = Title::Shown);

  QString titleText() const;  // as shown, with its line breaks

 protected:
  QCPTextElement* titleElement() const { return title_; }
  // The title's parts, joined by " · " on as few lines as fit the chart's width: set them, then
  // restyle() (or a resize) fits them.
  QStringList titleParts_;

  // The palette's and font's colours and sizes (styleChart) and the title fitted again; a chart
  // that styles more extends it, calling this first.
  virtual void restyle();
  // The palette or font changed (presentation mode, a theme): restyle() and a replot, unless a
  // chart that draws with them (pens sized by the font, items in the palette's colours) draws
  // itself again instead.
  virtual void styleChanged(QEvent::Type change);
  // Before the chart is laid out at `size`, after its title was fitted to it: what else follows
  // the width (captions, legends).
  virtual void fitTo(const QSize& size) { (void)size; }
  // After it was laid out at a new size.
  virtual void laidOut() {}
  // The tooltip of what is at `position` (widget pixels); empty: none.
  virtual QString toolTipAt(const QPoint& position) const {
    (void)position;
    return {};
  }

  bool event(QEvent* event) final;
  void changeEvent(QEvent* event) final;
  void resizeEvent(QResizeEvent* event) final;

 private:
  QCPTextElement* title_ = nullptr;
};

}  // namespace convscope::ui
