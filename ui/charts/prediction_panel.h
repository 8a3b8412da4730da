// What the network says about the current picture: a headline (the top-1 class, its probability,
// and whether it is right when the label is known), the bar chart of all ten classes, and the
// op times of this very inference per conv layer.
#pragma once

#include <QWidget>

#include <memory>

#include "ui/inference/inference_outcome.h"

class QLabel;

namespace convscope::ui {

class PredictionChart;

class PredictionPanel : public QWidget {
  Q_OBJECT

 public:
  explicit PredictionPanel(QWidget* parent = nullptr);

  void setClassNames(const QStringList& names) { classNames_ = names; }
  void setOutcome(std::shared_ptr<const InferenceOutcome> outcome);
  // No prediction: `message` as the headline, `detail` (the reason, in smaller type) under it.
  void clear(const QString& message, const QString& detail = {});

  PredictionChart* chart() const { return chart_; }
  QString headline() const;  // plain text of the headline
  QLabel* headlineLabel() const { return headline_; }
  QString shownTopClassName() const;
  QString timesText() const;  // plain text of the op-time table
  QString exportChart(const QString& path);

 signals:
  void errorOccurred(const QString& message);

 protected:
  void changeEvent(QEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void exportAsked();
  void updateHeadlineFont();

  QStringList classNames_;
  QLabel* headline_;
  QLabel* verdict_;
  PredictionChart* chart_;
  QLabel* times_;
  std::shared_ptr<const InferenceOutcome> outcome_;
};

}  // namespace convscope::ui
