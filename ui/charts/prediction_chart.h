// The class probabilities as horizontal bars with the class names beside them: every class of a
// model with up to ten, else the five likeliest, most likely first, and the true class below them
// when it is not among them (1,000 bars of ImageNet would be unreadable). The top-1 bar stands
// out: green when it is the true label, red when it is not, the highlight colour when the truth
// is unknown (drawings, files); the true class's row is framed with a dashed box.
#pragma once

#include <qcustomplot.h>

#include <vector>

#include "ui/charts/styled_plot.h"

namespace convscope::ui {

class PredictionChart : public StyledPlot {
  Q_OBJECT

 public:
  static QColor correctColour() { return QColor(0x2e, 0x9e, 0x44); }
  static QColor wrongColour() { return QColor(0xd0, 0x34, 0x2c); }

  // A model with more classes than kAllClassesUpTo shows its kLikeliestShown likeliest.
  static constexpr int kAllClassesUpTo = 10;
  static constexpr int kLikeliestShown = 5;

  explicit PredictionChart(QWidget* parent = nullptr);

  // `trueLabel` < 0 when unknown.
  void setPrediction(const std::vector<float>& probabilities, const QStringList& classNames, int trueLabel);
  void clearPrediction();

  int topClass() const { return topClass_; }
  int trueLabel() const { return trueLabel_; }
  // The rows, top to bottom: the class each shows and its probability.
  const std::vector<int>& shownClasses() const { return shownClasses_; }
  const std::vector<double>& shownProbabilities() const { return probabilities_; }
  QString className(int index) const;
  QColor topBarColour() const;

  // Room for the class names, their "✓" and a plot of 240 pixels (the layout rule of
  // tests/ui/test_layout.cpp), at the chart's font: a splitter never squeezes the bars below it.
  QSize minimumSizeHint() const override;

 private:
  void restyle() override;
  void laidOut() override;
  double fontScale() const;

  double appliedScale_ = 1.0;
  QCPBars* bars_;
  QCPBars* topBar_;
  QCPBars* truthBox_;
  std::vector<QCPItemText*> valueLabels_;
  std::vector<int> shownClasses_;
  std::vector<double> probabilities_;  // of the shown classes, row by row
  QStringList classNames_;
  int topClass_ = -1;
  int trueLabel_ = -1;
};

}  // namespace convscope::ui
