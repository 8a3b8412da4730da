#include "ui/model/variant_selector.h"

#include <QComboBox>
#include <QLabel>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "app/core/conv/variant_table.h"

namespace convscope::ui {

VariantSelector::VariantSelector(QWidget* parent)
    : QWidget(parent), combo_(new QComboBox(this)), description_(new QLabel(this)) {
  auto* items = qobject_cast<QStandardItemModel*>(combo_->model());
  for (const ConvVariant& v : convVariants()) {
    const QString reason = QString::fromStdString(v.unavailableReason());
    QString text = QString::fromStdString(v.displayName);
    if (!reason.isEmpty()) text += tr("  (unavailable)");
    combo_->addItem(text, QString::fromStdString(v.id));
    QStandardItem* item = items->item(combo_->count() - 1);
    item->setToolTip(reason.isEmpty()
                         ? QString::fromStdString(v.description)
                         : tr("%1\nUnavailable here: %2").arg(QString::fromStdString(v.description), reason));
    if (!reason.isEmpty()) item->setEnabled(false);
  }
  combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  combo_->setMinimumContentsLength(16);
  description_->setWordWrap(true);
  description_->setTextFormat(Qt::RichText);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(combo_);
  layout->addWidget(description_);
  setCurrentVariant(QString::fromStdString(defaultConvVariant()));
  connect(combo_, &QComboBox::currentIndexChanged, this, [this] {
    showDescription();
    emit variantChanged(currentVariant());
  });
  showDescription();
}

QString VariantSelector::currentVariant() const {
  return combo_->currentData().toString();
}

bool VariantSelector::setCurrentVariant(const QString& id) {
  const int index = combo_->findData(id);
  if (index < 0) return false;
  const auto* items = qobject_cast<QStandardItemModel*>(combo_->model());
  if (!items->item(index)->isEnabled()) return false;
  combo_->setCurrentIndex(index);
  return true;
}

void VariantSelector::setUserVariant(const QString& id, const QString& displayName, const QString& unavailableReason) {
  int index = combo_->findData(id);
  const QString text = unavailableReason.isEmpty() ? tr("Your kernel: %1").arg(displayName)
                                                   : tr("Your kernel: %1  (%2)").arg(displayName, unavailableReason);
  if (index < 0) {
    const QSignalBlocker quiet(combo_);  // adding an item never changes the choice
    combo_->addItem(text, id);
    index = combo_->count() - 1;
  } else {
    combo_->setItemText(index, text);
  }
  auto* items = qobject_cast<QStandardItemModel*>(combo_->model());
  items->item(index)->setEnabled(unavailableReason.isEmpty());
  items->item(index)->setToolTip(unavailableReason.isEmpty() ? tr("Your kernel, checked: %1").arg(displayName)
                                                             : tr("Not selectable: %1").arg(unavailableReason));
  // A kernel that stopped passing is deselected: the window must not run it.
  if (!unavailableReason.isEmpty() && combo_->currentIndex() == index)
    setCurrentVariant(QString::fromStdString(defaultConvVariant()));
}

void VariantSelector::selectNext() {
  step(1);
}
void VariantSelector::selectPrevious() {
  step(-1);
}

void VariantSelector::step(int delta) {
  const auto* items = qobject_cast<QStandardItemModel*>(combo_->model());
  for (int i = combo_->currentIndex() + delta; i >= 0 && i < combo_->count(); i += delta)
    if (items->item(i)->isEnabled()) {
      combo_->setCurrentIndex(i);
      return;
    }
}

QString VariantSelector::descriptionText() const {
  return description_->text();
}

void VariantSelector::showDescription() {
  const ConvVariant& v = findConvVariant(currentVariant().toStdString());
  int unavailable = 0;
  QString reason;
  for (const ConvVariant& other : convVariants())
    if (const std::string why = other.unavailableReason(); !why.empty()) {
      ++unavailable;
      reason = QString::fromStdString(why);
    }
  QString text = tr("%1<br><i>Course step: %2 · runs on %3</i>")
                     .arg(QString::fromStdString(v.description).toHtmlEscaped(),
                          QString::fromStdString(v.courseStep).toHtmlEscaped(),
                          QString::fromStdString(v.requirements.describe()).toHtmlEscaped());
  if (unavailable > 0) {
    text += tr("<br><span style='color:gray'>%n variant(s) unavailable here</span>", "", unavailable);
    description_->setToolTip(tr("Unavailable here: %1").arg(reason));
  }
  description_->setText(text);
}

void VariantSelector::setCompact(bool compact) {
  description_->setVisible(!compact);
}

}  // namespace convscope::ui
