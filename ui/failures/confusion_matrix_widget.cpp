#include "ui/failures/confusion_matrix_widget.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

namespace convscope::ui {

ConfusionMatrixWidget::ConfusionMatrixWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

namespace {

// Up to this many classes, every class is drawn (Fashion-MNIST's ten, a course model's).
constexpr int kAllClassesUpTo = 20;

}  // namespace

void ConfusionMatrixWidget::setMatrix(std::shared_ptr<const ConfusionMatrix> matrix, const QStringList& classNames) {
  matrix_ = std::move(matrix);
  names_ = classNames;
  shown_.clear();
  if (matrix_) {
    const int classes = matrix_->classes();
    std::vector<bool> inPlay(static_cast<size_t>(classes), classes <= kAllClassesUpTo);
    for (int t = 0; t < classes; ++t)
      if (matrix_->classTotal(t) > 0)
        for (int p = 0; p < classes; ++p)
          if (matrix_->count(t, p) > 0) inPlay[static_cast<size_t>(t)] = inPlay[static_cast<size_t>(p)] = true;
    for (int c = 0; c < classes; ++c)
      if (inPlay[static_cast<size_t>(c)]) shown_.push_back(c);
  }
  selectedTrue_ = selectedPredicted_ = -1;
  updateGeometry();
  update();
}

void ConfusionMatrixWidget::clear() {
  setMatrix(nullptr, {});
}

void ConfusionMatrixWidget::setSelectedCell(int trueClass, int predicted) {
  selectedTrue_ = trueClass;
  selectedPredicted_ = predicted;
  update();
}

ConfusionMatrixWidget::Geometry ConfusionMatrixWidget::geometry() const {
  Geometry g;
  const QFontMetrics metrics = fontMetrics();
  int widest = metrics.horizontalAdvance(tr("true class"));
  for (const int c : shown_)
    if (c < names_.size()) widest = std::max(widest, metrics.horizontalAdvance(QString("%1 %2").arg(names_[c]).arg(c)));
  g.labelWidth = widest + 10;
  g.headerHeight = 2 * metrics.height() + 8;  // "predicted" over the column numbers
  const int classes = matrix_ ? std::max<int>(1, static_cast<int>(shown_.size())) : 10;
  // Square cells as large as the widget allows, never smaller than a three-digit count.
  const int minimum = metrics.horizontalAdvance("000") + 4;
  const int byWidth = (width() - g.labelWidth - 8) / (classes + 2);  // the accuracy column is two cells wide
  const int byHeight = (height() - g.headerHeight - 8) / classes;
  g.cell = std::max(minimum, std::min(byWidth, byHeight));
  return g;
}

QSize ConfusionMatrixWidget::sizeHint() const {
  return {640, 520};
}

QSize ConfusionMatrixWidget::minimumSizeHint() const {
  // Room for three-digit counts: a class of a thousand test images that are all right is the
  // exception, and a small screen in presentation mode must still take the window.
  const QFontMetrics metrics = fontMetrics();
  const int cell = metrics.horizontalAdvance("000") + 4;
  const int classes = matrix_ ? std::max<int>(1, static_cast<int>(shown_.size())) : 10;
  return {metrics.horizontalAdvance(tr("true class")) + 10 + (classes + 2) * cell,
          2 * metrics.height() + 8 + classes * cell};
}

int ConfusionMatrixWidget::positionOf(int classIndex) const {
  const auto found = std::lower_bound(shown_.begin(), shown_.end(), classIndex);
  return found != shown_.end() && *found == classIndex ? static_cast<int>(found - shown_.begin()) : -1;
}

QPoint ConfusionMatrixWidget::pointOf(int trueClass, int predicted) const {
  const Geometry g = geometry();
  const int row = positionOf(trueClass), column = positionOf(predicted);
  if (row < 0 || column < 0) return {-1, -1};  // not drawn
  return {g.labelWidth + column * g.cell + g.cell / 2, g.headerHeight + row * g.cell + g.cell / 2};
}

bool ConfusionMatrixWidget::hit(const QPoint& point, int* trueClass, int* predicted) const {
  if (!matrix_) return false;
  const Geometry g = geometry();
  const int column = (point.x() - g.labelWidth) / g.cell, row = (point.y() - g.headerHeight) / g.cell;
  const int drawn = static_cast<int>(shown_.size());
  if (point.x() < g.labelWidth || point.y() < g.headerHeight || column >= drawn || row >= drawn) return false;
  *trueClass = shown_[static_cast<size_t>(row)];
  *predicted = shown_[static_cast<size_t>(column)];
  return true;
}

QString ConfusionMatrixWidget::cellText(int trueClass, int predicted) const {
  return matrix_ ? QString::number(matrix_->count(trueClass, predicted)) : QString();
}

QString ConfusionMatrixWidget::accuracyText(int trueClass) const {
  if (!matrix_) return {};
  if (matrix_->classTotal(trueClass) == 0) return QStringLiteral("–");  // a class predicted, not in the test set
  return QString("%1 %").arg(100.0 * matrix_->classAccuracy(trueClass), 0, 'f', 1);
}

void ConfusionMatrixWidget::paintEvent(QPaintEvent*) {
  if (!matrix_) return;
  QPainter painter(this);
  const Geometry g = geometry();
  const int classes = static_cast<int>(shown_.size());
  const QColor text = palette().color(QPalette::WindowText);
  const QFontMetrics metrics = fontMetrics();

  painter.setPen(text);
  painter.drawText(QRect(g.labelWidth, 0, classes * g.cell, metrics.height() + 4), Qt::AlignCenter,
                   tr("predicted class →"));
  painter.drawText(QRect(0, 0, g.labelWidth, g.headerHeight), Qt::AlignLeft | Qt::AlignBottom, tr("true class ↓"));
  const int accuracyLeft = g.labelWidth + classes * g.cell + 6;
  painter.drawText(QRect(accuracyLeft, 0, std::max(2 * g.cell, width() - accuracyLeft), g.headerHeight),
                   Qt::AlignLeft | Qt::AlignBottom, tr("accuracy"));
  for (int i = 0; i < classes; ++i) {
    const int c = shown_[static_cast<size_t>(i)];
    const QString name = c < names_.size() ? names_[c] : QString::number(c);
    painter.drawText(QRect(g.labelWidth + i * g.cell, metrics.height() + 4, g.cell, metrics.height() + 4),
                     Qt::AlignCenter, QString::number(c));
    painter.drawText(QRect(0, g.headerHeight + i * g.cell, g.labelWidth - 6, g.cell), Qt::AlignRight | Qt::AlignVCenter,
                     QString("%1 %2").arg(name).arg(c));
  }
  for (int row = 0; row < classes; ++row) {
    const int t = shown_[static_cast<size_t>(row)];
    const int rowTotal = std::max(1, matrix_->classTotal(t));
    for (int column = 0; column < classes; ++column) {
      const int p = shown_[static_cast<size_t>(column)];
      const int count = matrix_->count(t, p);
      const double share = static_cast<double>(count) / rowTotal;
      // Mistakes are rare next to the diagonal: their shade grows faster, so a 5 % confusion shows.
      const double strength = t == p ? share : std::min(1.0, share * 5.0);
      const QColor base = t == p ? QColor(26, 152, 80) : QColor(215, 48, 39);
      const QColor fill = QColor::fromRgbF(1.0 - strength * (1.0 - base.redF()), 1.0 - strength * (1.0 - base.greenF()),
                                           1.0 - strength * (1.0 - base.blueF()));
      const QRect r(g.labelWidth + column * g.cell, g.headerHeight + row * g.cell, g.cell, g.cell);
      painter.fillRect(r, fill);
      painter.setPen(QColor(200, 200, 200));
      painter.drawRect(r.adjusted(0, 0, -1, -1));
      painter.setPen(strength > 0.55 ? Qt::white : Qt::black);
      painter.drawText(r, Qt::AlignCenter, QString::number(count));
    }
    painter.setPen(text);
    painter.drawText(QRect(g.labelWidth + classes * g.cell + 6, g.headerHeight + row * g.cell, 2 * g.cell, g.cell),
                     Qt::AlignLeft | Qt::AlignVCenter, accuracyText(t));
  }
  const int selectedRow = positionOf(selectedTrue_), selectedColumn = positionOf(selectedPredicted_);
  if (selectedRow >= 0 && selectedColumn >= 0) {
    painter.setPen(QPen(palette().color(QPalette::Highlight), 3));
    painter.drawRect(
        QRect(g.labelWidth + selectedColumn * g.cell, g.headerHeight + selectedRow * g.cell, g.cell, g.cell)
            .adjusted(1, 1, -2, -2));
  }
}

void ConfusionMatrixWidget::mousePressEvent(QMouseEvent* event) {
  int t = 0, p = 0;
  if (!hit(event->position().toPoint(), &t, &p)) return;
  setSelectedCell(t, p);
  emit cellClicked(t, p);
}

void ConfusionMatrixWidget::mouseMoveEvent(QMouseEvent* event) {
  int t = 0, p = 0;
  if (!hit(event->position().toPoint(), &t, &p)) {
    setToolTip({});
    return;
  }
  const auto name = [this](int c) { return c < names_.size() ? names_[c] : QString::number(c); };
  setToolTip(
      tr("%1 images of %2 classified as %3; click to list them").arg(matrix_->count(t, p)).arg(name(t), name(p)));
}

void ConfusionMatrixWidget::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) updateGeometry();
  QWidget::changeEvent(event);
}

}  // namespace convscope::ui
