// A confusion matrix drawn as a table of counts: a row per true class, a column per predicted
// class, each cell shaded by the share of its row (so a rare mistake is pale and a common one
// dark whatever the class's size), the diagonal in green and the mistakes in red, and a last
// column with each class's accuracy. A click on a cell chooses it. A model of many classes
// (ImageNet's 1,000) shows only the classes in play: those the test set's labels name and those
// predicted, in class order, each numbered as the model numbers it.
#pragma once

#include <QStringList>
#include <QWidget>

#include <memory>
#include <vector>

#include "app/core/engine/confusion.h"

namespace convscope::ui {

class ConfusionMatrixWidget : public QWidget {
  Q_OBJECT

 public:
  explicit ConfusionMatrixWidget(QWidget* parent = nullptr);

  void setMatrix(std::shared_ptr<const ConfusionMatrix> matrix, const QStringList& classNames);
  void clear();
  void setSelectedCell(int trueClass, int predicted);  // -1, -1: none
  int selectedTrueClass() const { return selectedTrue_; }
  int selectedPredicted() const { return selectedPredicted_; }
  // The centre of cell (trueClass, predicted) in widget coordinates: for tests and tours.
  QPoint pointOf(int trueClass, int predicted) const;
  // The text drawn in a cell: its count.
  QString cellText(int trueClass, int predicted) const;
  // The text drawn beside a row: the class's accuracy ("87.1 %").
  QString accuracyText(int trueClass) const;
  // The classes drawn, as rows and as columns, in order.
  const std::vector<int>& shownClasses() const { return shown_; }

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void cellClicked(int trueClass, int predicted);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  struct Geometry {
    int labelWidth = 0, headerHeight = 0, cell = 0;
  };
  Geometry geometry() const;
  bool hit(const QPoint& point, int* trueClass, int* predicted) const;

  // Position of `classIndex` among the drawn classes, -1 when it is not drawn.
  int positionOf(int classIndex) const;

  std::shared_ptr<const ConfusionMatrix> matrix_;
  QStringList names_;
  std::vector<int> shown_;
  int selectedTrue_ = -1;
  int selectedPredicted_ = -1;
};

}  // namespace convscope::ui
