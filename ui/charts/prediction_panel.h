// What the network says about the current picture: a headline (the top-1 class, its probability,
// and whether it is right when the label is known), the bar chart of all ten classes, and the
// op times of this very inference per conv layer.
#pragma once

#include <QWidget>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ui/inference/inference_outcome.h"

class QLabel;

namespace convscope::ui {

class PredictionChart;

class PredictionPanel : public QWidget {
  Q_OBJECT

 public:
  // The op-time table lists every conv layer of a network of up to kAllLayersUpTo, else its
  // kSlowestListed slowest (in network order) and the others summed in one row.
  static constexpr size_t kAllLayersUpTo = 10;
  static constexpr int kSlowestListed = 6;

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
  // "Unlike the test set's pictures ..." for a user's picture (data_set_distance.h), or nothing.
  QString distanceNote(const InferenceOutcome& o) const;
  // Why this picture's op times may be off: other jobs, the machine's load, or a total far above
  // the recent pictures' median. Records `convTotal` among the recent ones.
  QString loadNote(const InferenceOutcome& o, double convTotal);

  QStringList classNames_;
  QLabel* headline_;
  QLabel* verdict_;
  PredictionChart* chart_;
  QLabel* times_;
  std::shared_ptr<const InferenceOutcome> outcome_;
  std::map<std::string, std::vector<double>> recentConvTotals_;  // the last 20 per model|variant|device
};

}  // namespace convscope::ui
