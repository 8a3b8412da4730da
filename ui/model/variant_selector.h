// Choosing the convolution: every entry of the registry, in the registry's order, each with its
// description and course step. Variants that cannot run on this machine stay in the list,
// disabled, with the reason (a student sees what exists and why it is grey).
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;

namespace convscope::ui {

class VariantSelector : public QWidget {
  Q_OBJECT

 public:
  explicit VariantSelector(QWidget* parent = nullptr);

  QString currentVariant() const;
  // False (and no change) when `id` is unknown or cannot run here.
  bool setCurrentVariant(const QString& id);
  QComboBox* combo() const { return combo_; }
  QString descriptionText() const;

  // A student's kernel (docs/your-kernel.md), after the course's rows: added the first time, updated
  // after. Selectable only when `unavailableReason` is empty (it passed its check), so that the
  // window never runs a kernel that has not been checked in a child process.
  void setUserVariant(const QString& id, const QString& displayName, const QString& unavailableReason);

  // Compact: the choice alone, the text under it hidden (presentation mode needs the room).
  void setCompact(bool compact);

 public slots:
  void selectNext();
  void selectPrevious();

 signals:
  void variantChanged(const QString& id);

 private:
  void step(int delta);
  void showDescription();

  QComboBox* combo_;
  QLabel* description_;
};

}  // namespace convscope::ui
