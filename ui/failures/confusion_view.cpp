#include "ui/failures/confusion_view.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ui/common/export.h"
#include "ui/failures/confusion_matrix_widget.h"
#include "ui/input/dataset_model.h"

namespace convscope::ui {

ConfusionView::ConfusionView(JobRunner* jobs, QWidget* parent)
    : QWidget(parent),
      job_(new TestSetEvaluationJob(jobs, this)),
      status_(new QLabel(this)),
      evaluate_(new QPushButton(tr("Classify the test set"), this)),
      progress_(new QProgressBar(this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      matrixWidget_(new ConfusionMatrixWidget(this)),
      listTitle_(new QLabel(this)),
      list_(new QListWidget(this)),
      probabilities_(new QLabel(this)) {
  status_->setWordWrap(true);
  evaluate_->setToolTip(tr("Classify all test images with the current model and kernel variant"));
  progress_->setRange(0, 100);
  progress_->setMaximumWidth(220);
  auto* exportButton = new QPushButton(tr("Export…"), this);
  auto* top = new QHBoxLayout;
  top->addWidget(status_, 1);
  top->addWidget(evaluate_);
  top->addWidget(progress_);
  top->addWidget(cancel_);
  top->addWidget(exportButton);

  list_->setViewMode(QListView::ListMode);
  list_->setIconSize(QSize(56, 56));
  list_->setUniformItemSizes(true);
  listTitle_->setWordWrap(true);
  probabilities_->setWordWrap(true);
  auto* showAll = new QPushButton(tr("All mistakes"), this);
  showAll->setToolTip(tr("List every misclassified image, the most confident mistakes first"));
  auto* right = new QWidget(this);
  auto* rightLayout = new QVBoxLayout(right);
  rightLayout->setContentsMargins(0, 0, 0, 0);
  auto* listHeader = new QHBoxLayout;
  listHeader->addWidget(listTitle_, 1);
  listHeader->addWidget(showAll);
  rightLayout->addLayout(listHeader);
  rightLayout->addWidget(list_, 1);
  rightLayout->addWidget(probabilities_);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(matrixWidget_);
  split->addWidget(right);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({600, 400});

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(split, 1);

  connect(evaluate_, &QPushButton::clicked, this, &ConfusionView::evaluate);
  connect(cancel_, &QPushButton::clicked, this, &ConfusionView::cancel);
  connect(showAll, &QPushButton::clicked, this, &ConfusionView::showMisclassified);
  connect(exportButton, &QPushButton::clicked, this, [this] {
    const QString path = askExportPath(this, "confusion-matrix");
    if (!path.isEmpty())
      if (const QString error = exportTo(path); !error.isEmpty()) emit errorOccurred(error);
  });
  connect(matrixWidget_, &ConfusionMatrixWidget::cellClicked, this, &ConfusionView::showCell);
  connect(list_, &QListWidget::currentRowChanged, this, [this](int row) {
    if (row < 0 || row >= static_cast<int>(listed_.size()) || !evaluation_) return probabilities_->clear();
    const ImageClassification& image = evaluation_->run.images[static_cast<size_t>(listed_[static_cast<size_t>(row)])];
    QStringList lines;
    std::vector<int> order(image.probabilities.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return image.probabilities[static_cast<size_t>(a)] > image.probabilities[static_cast<size_t>(b)];
    });
    // The likeliest ten: all of a Fashion-MNIST model's, the top of an ImageNet model's 1,000.
    if (order.size() > 10) order.resize(10);
    for (int c : order)
      lines << QString("%1 %2 %").arg(className(c)).arg(100.0 * image.probabilities[static_cast<size_t>(c)], 0, 'f', 1);
    probabilities_->setText(
        tr("Test image #%1, a %2: %3").arg(image.index).arg(className(image.label), lines.join(", ")));
  });
  connect(list_, &QListWidget::itemActivated, this,
          [this](QListWidgetItem* item) { emit testImageChosen(item->data(Qt::UserRole).toInt()); });
  connect(list_, &QListWidget::itemClicked, this,
          [this](QListWidgetItem* item) { emit testImageChosen(item->data(Qt::UserRole).toInt()); });
  connect(job_, &TestSetEvaluationJob::progressed, this, [this](int percent, const QString& message) {
    if (percent >= 0) progress_->setValue(percent);
    status_->setText(message);
  });
  connect(job_, &TestSetEvaluationJob::finished, this, &ConfusionView::useEvaluation);
  connect(job_, &TestSetEvaluationJob::partial, this, &ConfusionView::useEvaluation);
  connect(job_, &TestSetEvaluationJob::failed, this, [this](const QString& message) {
    setBusy(false);
    status_->setText(tr("The test set could not be classified: %1").arg(message));
    emit errorOccurred(tr("Confusion matrix: %1").arg(message));
  });
  connect(job_, &TestSetEvaluationJob::cancelled, this, [this] {
    setBusy(false);
    // A matrix of part of the set answers another question: it goes with the cancel.
    matrix_.reset();
    evaluation_.reset();
    matrixWidget_->clear();
    list_->clear();
    listed_.clear();
    listTitle_->clear();
    status_->setText(tr("Cancelled. Click \"%1\" to start again.").arg(evaluate_->text()));
  });
  setBusy(false);
  invalidate();
}

void ConfusionView::setModel(std::shared_ptr<const Model> model) {
  model_ = std::move(model);
  invalidate();
}

void ConfusionView::setVariant(const QString& variant) {
  variant_ = variant;
  invalidate();
}

void ConfusionView::setImageSet(std::shared_ptr<const ImageSet> images) {
  images_ = std::move(images);
  invalidate();
}

void ConfusionView::setPreprocessing(const Preprocessing& preprocessing) {
  preprocessing_ = preprocessing;
  invalidate();
}

std::string ConfusionView::preprocessingText() const {
  return preprocessing_ ? preprocessingToJson(*preprocessing_).dump() : std::string();
}

void ConfusionView::invalidate() {
  // A matrix of another model, variant or preprocessing would answer the wrong question: it goes,
  // and is computed again at once if the tab is on screen.
  if (evaluation_ && evaluation_->model == model_ && evaluation_->variant == variant_.toStdString() &&
      evaluation_->images == images_ && evaluatedPreprocessing_ == preprocessingText())
    return;
  evaluation_.reset();
  matrix_.reset();
  matrixWidget_->clear();
  listed_.clear();
  list_->clear();
  listTitle_->clear();
  probabilities_->clear();
  // Stopped now when the tab is hidden; when it is shown, evaluateIfStale() below supersedes it.
  if (running() && !isVisible()) cancel();
  if (!model_)
    status_->setText(tr("No model is loaded."));
  else if (!images_)
    status_->setText(tr("The confusion matrix needs the test set, and none is loaded."));
  else if (!fitsModel())
    status_->setText(
        tr("The test set's photos are being read again as %1 sees them.").arg(QString::fromStdString(model_->name)));
  else
    status_->setText(tr("%1 with %2: not classified yet.").arg(QString::fromStdString(model_->name), variant_));
  if (isVisible()) evaluateIfStale();
}

void ConfusionView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  evaluateIfStale();
}

void ConfusionView::evaluateIfStale() {
  // Not again for what is being classified already; a job for an older model or variant is
  // superseded by the new one (TestSetEvaluationJob::start cancels it).
  const bool runningForThis = running() && runningModel_ == model_ && runningVariant_ == variant_ &&
                              evaluatedPreprocessing_ == preprocessingText();
  if (!evaluation_ && !runningForThis && model_ && images_ && images_->count() > 0 && !variant_.isEmpty() &&
      fitsModel())
    evaluate();
}

bool ConfusionView::fitsModel() const {
  // Photos in class subfolders are kept as one model sees them and read again for the next
  // (MainWindow::openTestSet): until they arrive, they are in the last model's channels.
  return !model_ || !images_ || images_->channels() == model_->inputChannels();
}

void ConfusionView::evaluate() {
  if (!model_ || !images_ || images_->count() == 0) return;
  setBusy(true);
  progress_->setValue(0);
  const QString with = QString::fromStdString(classifyingVariant(variant_.toStdString()));
  status_->setText(with == variant_ ? tr("Classifying the test set with %1…").arg(variant_)
                                    : tr("Classifying the test set with %1, the fastest variant here of the same FP32 "
                                         "arithmetic as %2…")
                                          .arg(with, variant_));
  runningModel_ = model_;
  runningVariant_ = variant_;
  evaluatedPreprocessing_ = preprocessingText();
  job_->start(model_, variant_.toStdString(), images_, preprocessing_);
}

void ConfusionView::cancel() {
  job_->cancel();
}

void ConfusionView::setBusy(bool busy) {
  progress_->setVisible(busy);
  cancel_->setVisible(busy);
  evaluate_->setEnabled(!busy);
}

void ConfusionView::useEvaluation(std::shared_ptr<const TestSetEvaluation> evaluation) {
  if (evaluation->complete) setBusy(false);
  // An evaluation of a model or variant no longer selected is not shown.
  if (evaluation->model != model_ || evaluation->variant != variant_.toStdString() || evaluation->images != images_)
    return evaluateIfStale();
  const int classes = static_cast<int>(
      std::max<size_t>(evaluation->images->classNames().size(),
                       evaluation->run.images.empty() ? 1 : evaluation->run.images.front().probabilities.size()));
  try {
    matrix_ = std::make_shared<const ConfusionMatrix>(evaluation->run, classes);
  } catch (const std::exception& e) {
    setBusy(false);
    status_->setText(QString::fromStdString(e.what()));
    emit errorOccurred(QString::fromStdString(e.what()));
    return;
  }
  evaluation_ = std::move(evaluation);
  QStringList names;
  for (int c = 0; c < classes; ++c) names << className(c);
  matrixWidget_->setMatrix(matrix_, names);
  const QString with = QString::fromStdString(evaluation_->classifiedWith);
  const QString classifier =
      with == variant_ ? variant_
                       : tr("%1 (classified with %2, the fastest of the same arithmetic)").arg(variant_, with);
  if (!evaluation_->complete) {
    status_->setText(tr("%1 with %2 on %3: %4 of %5 test images so far, %6 right…")
                         .arg(QString::fromStdString(evaluation_->model->name), classifier,
                              QString::fromStdString(evaluation_->deviceName))
                         .arg(matrix_->total())
                         .arg(evaluation_->images->count())
                         .arg(matrix_->correct()));
    showMisclassified();
    return;
  }
  status_->setText(tr("%1 with %2 on %3: %4 of %5 test images right (%6 %), %7 wrong; %8 s")
                       .arg(QString::fromStdString(evaluation_->model->name), classifier,
                            QString::fromStdString(evaluation_->deviceName))
                       .arg(matrix_->correct())
                       .arg(matrix_->total())
                       .arg(100.0 * matrix_->accuracy(), 0, 'f', 2)
                       .arg(matrix_->total() - matrix_->correct())
                       .arg(evaluation_->run.seconds, 0, 'f', 1));
  showMisclassified();
}

QString ConfusionView::className(int c) const {
  if (images_ && c >= 0 && c < static_cast<int>(images_->classNames().size()))
    return QString::fromStdString(images_->classNames()[static_cast<size_t>(c)]);
  return QString::number(c);
}

void ConfusionView::showCell(int trueClass, int predicted) {
  if (!matrix_) return;
  matrixWidget_->setSelectedCell(trueClass, predicted);
  const std::vector<int>& cell = matrix_->cell(trueClass, predicted);
  fillList(cell,
           trueClass == predicted
               ? tr("%1 %2 image(s) classified right").arg(cell.size()).arg(className(trueClass))
               : tr("%1 %2 image(s) taken for %3").arg(cell.size()).arg(className(trueClass), className(predicted)));
}

void ConfusionView::showMisclassified() {
  if (!evaluation_) return;
  matrixWidget_->setSelectedCell(-1, -1);
  std::vector<int> wrong;
  for (size_t i = 0; i < evaluation_->run.images.size(); ++i) {
    const ImageClassification& image = evaluation_->run.images[i];
    if (image.label != ImageSet::kNoLabel && image.label != image.predicted) wrong.push_back(static_cast<int>(i));
  }
  fillList(wrong, tr("All %1 mistakes, the most confident first").arg(wrong.size()));
}

void ConfusionView::fillList(const std::vector<int>& runPositions, const QString& title) {
  std::vector<int> order = runPositions;
  const auto& images = evaluation_->run.images;
  const auto confidence = [&](int i) {
    const ImageClassification& image = images[static_cast<size_t>(i)];
    return image.probabilities[static_cast<size_t>(image.predicted)];
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return confidence(a) > confidence(b); });
  list_->clear();
  listed_.clear();
  listTitle_->setText(title);
  // The list shows at most the first 2,000 (a thumbnail each); the title gives the full count.
  const size_t shown = std::min<size_t>(order.size(), 2000);
  for (size_t k = 0; k < shown; ++k) {
    const ImageClassification& image = images[static_cast<size_t>(order[k])];
    const float truth = image.label >= 0 && image.label < static_cast<int>(image.probabilities.size())
                            ? image.probabilities[static_cast<size_t>(image.label)]
                            : 0.0f;
    auto* item = new QListWidgetItem(
        // Scaled here: an icon never enlarges its pixmap, and 28 x 28 pixels are too small to judge.
        QIcon(QPixmap::fromImage(DatasetModel::toQImage(evaluation_->images->image(image.index))
                                     .scaled(list_->iconSize(), Qt::KeepAspectRatio, Qt::FastTransformation))),
        // Two short lines, to fit a narrow column: the truth, then what the model said and how sure.
        tr("#%1 %2\n→ %3 %4 %")
            .arg(image.index)
            .arg(className(image.label))
            .arg(className(image.predicted))
            .arg(100.0 * confidence(order[k]), 0, 'f', 1),
        list_);
    item->setData(Qt::UserRole, image.index);
    item->setToolTip(tr("Test image #%1, a %2: %3 %4 %, %2 %5 %. Click to open it in the Feature maps & prediction tab")
                         .arg(image.index)
                         .arg(className(image.label))
                         .arg(className(image.predicted))
                         .arg(100.0 * confidence(order[k]), 0, 'f', 1)
                         .arg(100.0 * truth, 0, 'f', 1));
    listed_.push_back(image.index);
  }
}

QString ConfusionView::listTitle() const {
  return listTitle_->text();
}

QString ConfusionView::probabilitiesText() const {
  return probabilities_->text();
}

QString ConfusionView::statusText() const {
  return status_->text();
}

QString ConfusionView::exportTo(const QString& path) {
  return exportWidget(*this, path);
}

}  // namespace convscope::ui
