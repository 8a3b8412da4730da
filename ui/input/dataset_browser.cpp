#include "ui/input/dataset_browser.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ui/input/dataset_model.h"

namespace convscope::ui {

DatasetBrowser::DatasetBrowser(QWidget* parent)
    : QWidget(parent),
      model_(new DatasetModel(this)),
      view_(new QListView(this)),
      filter_(new QComboBox(this)),
      goTo_(new QSpinBox(this)),
      count_(new QLabel(this)),
      outsideNote_(new QLabel(this)) {
  view_->setModel(model_);
  view_->setViewMode(QListView::IconMode);
  view_->setFlow(QListView::LeftToRight);
  view_->setWrapping(true);
  view_->setResizeMode(QListView::Adjust);
  view_->setMovement(QListView::Static);
  view_->setUniformItemSizes(true);             // 10,000 items lay out in constant time
  view_->setLayoutMode(QListView::SinglePass);  // with uniform sizes, instant; scrollTo() works at once
  view_->setSelectionMode(QAbstractItemView::SingleSelection);

  filter_->setToolTip(tr("Show one class only"));
  goTo_->setPrefix("#");
  goTo_->setToolTip(tr("Go to test image number"));
  goTo_->setKeyboardTracking(false);
  outsideNote_->setWordWrap(true);
  outsideNote_->hide();

  auto* top = new QHBoxLayout;
  top->addWidget(filter_, 1);
  top->addWidget(goTo_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(outsideNote_);
  layout->addWidget(view_, 1);
  layout->addWidget(count_);

  connect(filter_, &QComboBox::currentIndexChanged, this,
          [this](int i) { setClassFilter(filter_->itemData(i).toInt()); });
  connect(goTo_, &QSpinBox::valueChanged, this, [this](int index) {
    if (index != current_) selectImage(index);
  });
  // Enter jumps (valueChanged, above) and gives the keys back to the grid, so the arrows and
  // Page Up/Down step on from the picture just chosen. Leaving the box by a click does not move
  // the focus again: the user put it where it should be.
  if (auto* edit = goTo_->findChild<QLineEdit*>())
    connect(edit, &QLineEdit::returnPressed, this, [this] {
      if (goTo_->value() != current_) selectImage(goTo_->value());
      view_->setFocus(Qt::ShortcutFocusReason);
    });
  connect(view_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& index) { rowChanged(index.row()); });
  count_->setWordWrap(true);  // room for the reason when there is no test set
  setImageSet(nullptr);
  updateGrid();
}

void DatasetBrowser::updateGrid() {
  // Items as wide as the longest class name at the current font (presentation mode makes it
  // larger): the view gives a label the width of its icon, so the thumbnails are widened too.
  const QFontMetrics metrics(font());  // the view inherits it; its own may not have changed yet
  int width = DatasetModel::kThumbnailSize;
  if (const auto& images = model_->imageSet())
    for (const std::string& name : images->classNames())
      width = std::max(width, metrics.horizontalAdvance(QString::fromStdString(name)) + 6);
  model_->setThumbnailWidth(width);
  view_->setIconSize(QSize(width, DatasetModel::kThumbnailSize));
  view_->setGridSize(QSize(width + 12, DatasetModel::kThumbnailSize + metrics.height() + 10));
}

void DatasetBrowser::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) updateGrid();
}

void DatasetBrowser::setImageSet(std::shared_ptr<const ImageSet> images) {
  {
    const QSignalBlocker blocker(filter_);
    filter_->clear();
    filter_->addItem(tr("All classes"), -1);
    if (images)
      for (size_t c = 0; c < images->classNames().size(); ++c)
        filter_->addItem(QString::fromStdString(images->classNames()[c]), static_cast<int>(c));
    filter_->setEnabled(images && images->hasLabels());
  }
  {
    const QSignalBlocker blocker(goTo_);
    goTo_->setRange(0, images ? std::max(0, images->count() - 1) : 0);
    goTo_->setEnabled(images && images->count() > 0);
  }
  current_ = -1;
  model_->setImageSet(std::move(images));
  updateCount();
  updateGrid();
}

void DatasetBrowser::setUnavailableReason(const QString& reason) {
  unavailableReason_ = reason;
  updateCount();
}

QString DatasetBrowser::statusText() const {
  return count_->text();
}

int DatasetBrowser::classFilter() const {
  return model_->classFilter();
}

void DatasetBrowser::setClassFilter(int label) {
  if (label == model_->classFilter()) return;
  const int keep = current_;
  model_->setClassFilter(label);
  {
    const QSignalBlocker blocker(filter_);
    filter_->setCurrentIndex(std::max(0, filter_->findData(label)));
  }
  updateCount();
  // Stay on the current image if the class has it, else go to the class's first image.
  if (keep >= 0 && model_->rowOfImage(keep) >= 0)
    selectImage(keep);
  else if (model_->rowCount() > 0)
    selectImage(model_->imageIndexAt(0));
}

bool DatasetBrowser::selectImage(int index) {
  const auto& images = model_->imageSet();
  if (!images || index < 0 || index >= images->count()) return false;
  if (model_->rowOfImage(index) < 0) setClassFilter(-1);  // the filter hides it: show all again
  const QModelIndex modelIndex = model_->index(model_->rowOfImage(index));
  view_->setCurrentIndex(modelIndex);  // announces through rowChanged
  view_->scrollTo(modelIndex);
  if (current_ != index) rowChanged(modelIndex.row());
  return true;
}

void DatasetBrowser::selectNext() {
  step(1);
}
void DatasetBrowser::selectPrevious() {
  step(-1);
}

void DatasetBrowser::step(int delta) {
  if (model_->rowCount() == 0) return;
  const int row = current_ >= 0 ? model_->rowOfImage(current_) : -1;
  const int next = std::clamp(row < 0 ? 0 : row + delta, 0, model_->rowCount() - 1);
  selectImage(model_->imageIndexAt(next));
}

void DatasetBrowser::showOutsidePicture(const QString& name, bool video) {
  current_ = -1;
  {
    const QSignalBlocker blocker(view_->selectionModel());
    view_->selectionModel()->clear();  // the selection and the current item: nothing highlighted
  }
  view_->viewport()->update();
  outsideNote_->setText(video ? tr("Shown: %1 (a video's frames, not test images)").arg(name)
                              : tr("Shown: %1 (an image file, not a test image)").arg(name));
  outsideNote_->show();
}

QString DatasetBrowser::outsidePictureNote() const {
  return outsideNote_->isHidden() ? QString() : outsideNote_->text();
}

void DatasetBrowser::rowChanged(int row) {
  if (row < 0 || row >= model_->rowCount()) return;
  const int index = model_->imageIndexAt(row);
  if (index == current_) return;
  current_ = index;
  outsideNote_->hide();
  outsideNote_->clear();
  {
    const QSignalBlocker blocker(goTo_);
    goTo_->setValue(index);
  }
  emit imageChosen(index);
}

void DatasetBrowser::updateCount() {
  const auto& images = model_->imageSet();
  if (!images) {
    count_->setText(unavailableReason_.isEmpty() ? tr("No test set loaded")
                                                 : tr("No test set loaded: %1").arg(unavailableReason_));
    count_->setToolTip(unavailableReason_);
    return;
  }
  count_->setText(tr("%1 of %2 test images").arg(model_->rowCount()).arg(images->count()));
  count_->setToolTip(QString::fromStdString(images->source()));
}

}  // namespace convscope::ui
