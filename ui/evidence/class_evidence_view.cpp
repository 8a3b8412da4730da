#include "ui/evidence/class_evidence_view.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "app/core/engine/classifier.h"
#include "ui/common/export.h"
#include "ui/maps/colour_map.h"

namespace convscope::ui {

// A picture scaled to fit its widget, its aspect kept, centred.
class EvidencePicture : public QWidget {
 public:
  explicit EvidencePicture(QWidget* parent) : QWidget(parent) {
    setMinimumSize(160, 160);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  }
  void setPicture(const QImage& picture) {
    picture_ = picture;
    update();
  }
  const QImage& picture() const { return picture_; }
  QSize sizeHint() const override { return {360, 360}; }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    if (picture_.isNull()) return;
    const QSize size = picture_.size().scaled(this->size(), Qt::KeepAspectRatio);
    const QRect target(QPoint((width() - size.width()) / 2, (height() - size.height()) / 2), size);
    painter.setRenderHint(QPainter::SmoothPixmapTransform, picture_.width() >= 64);
    painter.drawImage(target, picture_);
  }

 private:
  QImage picture_;
};

namespace {

// The side the pictures are composed at: small inputs enlarged in whole pixels (28 x 28 by 16).
constexpr int kComposedSide = 448;

// `base` (the input) with `values` (height x width, any size) over it in the diverging map: red
// where the value is positive (evidence for the class), blue where negative. Each value's colour is
// as opaque as the value is large, so that where the map is near zero the picture shows through
// unveiled; NaN (positions not computed) leaves the picture clear.
QImage overlaid(const QImage& base, const std::vector<float>& values, int height, int width) {
  const int scale = std::max(1, kComposedSide / std::max(base.width(), base.height()));
  const QSize size = base.size() * scale;
  QImage composed =
      base.scaled(size, Qt::IgnoreAspectRatio, base.width() >= 64 ? Qt::SmoothTransformation : Qt::FastTransformation)
          .convertToFormat(QImage::Format_ARGB32_Premultiplied);
  std::vector<float> shown(values);
  for (float& v : shown)
    if (std::isnan(v)) v = 0.0f;
  const ValueRange range = displayRange(shown.data(), shown.size(), ColourMap::Diverging);
  const QImage colours = mapImage(shown.data(), height, width, range, ColourMap::Diverging);
  QImage heat(width, height, QImage::Format_ARGB32);
  for (int y = 0; y < height; ++y) {
    auto* row = reinterpret_cast<QRgb*>(heat.scanLine(y));
    for (int x = 0; x < width; ++x) {
      const float v = shown[static_cast<size_t>(y) * width + x];
      const double strength = std::min(1.0, double{std::abs(v)} / std::max(std::abs(range.low), std::abs(range.high)));
      const QRgb colour = colours.pixel(x, y);
      row[x] = qRgba(qRed(colour), qGreen(colour), qBlue(colour), static_cast<int>(std::lround(200.0 * strength)));
    }
  }
  QPainter painter(&composed);
  painter.setRenderHint(QPainter::SmoothPixmapTransform);
  painter.drawImage(QRect(QPoint(0, 0), size), heat);
  return composed;
}

QString percent(float probability) {
  return QString::number(100.0 * probability, 'f', 1) + "%";
}

}  // namespace

ClassEvidenceView::ClassEvidenceView(JobRunner* jobs, QWidget* parent) : QWidget(parent), jobs_(jobs) {
  classes_ = new QComboBox(this);
  classes_->setToolTip(tr("The class whose evidence is shown: one of the picture's most probable classes"));
  patch_ = new QSpinBox(this);
  patch_->setToolTip(tr("The grey patch's side, in the model's input pixels"));
  patch_->setSuffix(tr(" px"));
  stride_ = new QSpinBox(this);
  stride_->setToolTip(tr("Pixels between two positions of the patch"));
  stride_->setSuffix(tr(" px"));
  run_ = new QPushButton(tr("Run occlusion"), this);
  cancel_ = new QPushButton(tr("Cancel"), this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Class:"), this));
  controls->addWidget(classes_, 1);
  controls->addSpacing(12);
  controls->addWidget(new QLabel(tr("Patch:"), this));
  controls->addWidget(patch_);
  controls->addWidget(new QLabel(tr("every"), this));
  controls->addWidget(stride_);
  controls->addWidget(run_);
  controls->addWidget(cancel_);
  controls->addWidget(progress_);

  panels_ = new QWidget(this);
  auto* grid = new QGridLayout(panels_);
  auto* activationTitle = new QLabel(tr("<b>Class activation map</b>"), panels_);
  auto* occlusionTitle = new QLabel(tr("<b>Occlusion</b>"), panels_);
  activationView_ = new EvidencePicture(panels_);
  occlusionView_ = new EvidencePicture(panels_);
  activationCaption_ = new QLabel(panels_);
  occlusionCaption_ = new QLabel(panels_);
  for (QLabel* caption : {activationCaption_, occlusionCaption_}) {
    caption->setWordWrap(true);
    caption->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
  }
  grid->addWidget(activationTitle, 0, 0);
  grid->addWidget(occlusionTitle, 0, 1);
  grid->addWidget(activationView_, 1, 0);
  grid->addWidget(occlusionView_, 1, 1);
  grid->addWidget(activationCaption_, 2, 0);
  grid->addWidget(occlusionCaption_, 2, 1);
  grid->setRowStretch(1, 1);
  auto* legend = new QLabel(tr("Red: evidence for the class · blue: against it · white: neither"), this);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(panels_, 1);
  layout->addWidget(legend);

  connect(classes_, &QComboBox::activated, this, [this] {
    showActivationMap();
    occlusion_.reset();
    showOcclusionMap();
    runOcclusionIfQuick();
  });
  connect(run_, &QPushButton::clicked, this, &ClassEvidenceView::runOcclusion);
  connect(cancel_, &QPushButton::clicked, this, &ClassEvidenceView::cancelOcclusion);
  connect(patch_, &QSpinBox::valueChanged, this, [this](int patch) {
    if (stride_->value() > patch) stride_->setValue(std::max(1, patch / 2));
    if (!occlusionRunning()) showOcclusionMap();
  });
  connect(stride_, &QSpinBox::valueChanged, this, [this] {
    if (!occlusionRunning()) showOcclusionMap();
  });
  setRunning(false);
  setOutcome(nullptr);
}

ClassEvidenceView::~ClassEvidenceView() {
  if (jobs_ && job_) jobs_->cancel(job_);
}

void ClassEvidenceView::setClassNames(const QStringList& names) {
  classNames_ = names;
  const int chosen = chosenClass();
  fillClassChoices();
  chooseClass(chosen);
  showActivationMap();
  showOcclusionMap();
}

void ClassEvidenceView::setOutcome(std::shared_ptr<const InferenceOutcome> outcome) {
  cancelOcclusion();
  ++runs_;  // the old picture's run, if any, is no answer for the new one
  job_ = 0;
  setRunning(false);
  const bool sameModel = outcome && outcome_ && outcome->model == outcome_->model;
  outcome_ = std::move(outcome);
  occlusion_.reset();
  activation_.reset();
  if (!outcome_ || !outcome_->model || outcome_->layers.empty()) {
    head_.reset();
    fillClassChoices();
    activationView_->setPicture({});
    occlusionView_->setPicture({});
    activationCaption_->setText(tr("Open, draw or pick a picture: its evidence for a class is shown here."));
    occlusionCaption_->clear();
    run_->setEnabled(false);
    return;
  }
  const Model& model = *outcome_->model;
  if (!sameModel) {
    std::string whyNot;
    head_ = findActivationMapHead(model, &whyNot);
    noHeadReason_ = QString::fromStdString(whyNot);
    const int side = std::min(model.inputHeight(), model.inputWidth());
    const QSignalBlocker blockPatch(patch_), blockStride(stride_);
    patch_->setRange(1, side);
    stride_->setRange(1, side);
    patch_->setValue(defaultPatch(model.inputHeight(), model.inputWidth()));
    stride_->setValue(std::max(1, patch_->value() / 2));
  }
  fillClassChoices();
  run_->setEnabled(true);
  showActivationMap();
  showOcclusionMap();
  runOcclusionIfQuick();
}

void ClassEvidenceView::runOcclusionIfQuick() {
  // Only while the tab is shown: hidden, it would take turns with a sweep for nothing.
  if (isVisible() && outcome_ && outcome_->model && !occlusion_ && !occlusionRunning() &&
      outcome_->model->inputHeight() * outcome_->model->inputWidth() <= kAutomaticOcclusionPixels)
    runOcclusion();
}

void ClassEvidenceView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  runOcclusionIfQuick();
}

void ClassEvidenceView::fillClassChoices() {
  const QSignalBlocker block(classes_);
  classes_->clear();
  if (!outcome_ || outcome_->probabilities.empty()) return;
  const std::vector<float>& p = outcome_->probabilities;
  std::vector<int> choices = topClasses(p, 5);
  const int truth = outcome_->input.label;
  if (truth >= 0 && truth < static_cast<int>(p.size()) &&
      std::find(choices.begin(), choices.end(), truth) == choices.end())
    choices.push_back(truth);
  for (int k : choices) {
    const QString name = k < classNames_.size() ? classNames_[k] : tr("class %1").arg(k);
    classes_->addItem(
        tr("%1 (%2)%3").arg(name, percent(p[static_cast<size_t>(k)]), k == truth ? tr(" · true class") : ""), k);
  }
}

int ClassEvidenceView::chosenClass() const {
  return classes_->count() ? classes_->currentData().toInt() : -1;
}

bool ClassEvidenceView::chooseClass(int classIndex) {
  const int row = classes_->findData(classIndex);
  if (row < 0) return false;
  if (row != classes_->currentIndex()) {
    classes_->setCurrentIndex(row);
    emit classes_->activated(row);
  }
  return true;
}

QStringList ClassEvidenceView::classChoices() const {
  QStringList items;
  for (int i = 0; i < classes_->count(); ++i) items += classes_->itemText(i);
  return items;
}

QImage ClassEvidenceView::baseImage() const {
  const LayerOutput& input = outcome_->layers.front();
  const Shape& shape = input.value.shape();
  return pictureImage(input.value.data(), static_cast<int>(shape[1]), static_cast<int>(shape[2]),
                      static_cast<int>(shape[3]), outcome_->inputIsBgr);
}

void ClassEvidenceView::showActivationMap() {
  activation_.reset();
  if (!outcome_ || !outcome_->model || outcome_->layers.empty()) return;
  const QImage base = baseImage();
  const int chosen = chosenClass();
  const QString name = classes_->count() ? classes_->currentText().section(" (", 0, 0) : QString();
  if (!head_) {
    activationView_->setPicture(
        base.scaled(base.size() * std::max(1, kComposedSide / std::max(base.width(), base.height()))));
    activationCaption_->setText(
        tr("No class activation map: %1. The occlusion map works for any model.").arg(noHeadReason_));
    return;
  }
  try {
    activation_ = classActivationMap(*outcome_->model, *head_, headFeatures(*head_, outcome_->layers), 0, chosen);
  } catch (const std::exception& error) {
    activationCaption_->setText(tr("No class activation map: %1").arg(QString::fromUtf8(error.what())));
    return;
  }
  activationView_->setPicture(overlaid(base, activation_->values, activation_->height, activation_->width));
  activationCaption_->setText(
      tr("The %1×%2 maps of '%3' weighed by %4's %5 classifier weights, smoothed to the picture. Exact: the map's "
         "mean plus the class's bias, %6, is the logit the model computed.")
          .arg(activation_->height)
          .arg(activation_->width)
          .arg(QString::fromStdString(head_->featureNode), name)
          .arg(head_->features)
          .arg(activation_->logit, 0, 'f', 4));
}

void ClassEvidenceView::showOcclusionMap() {
  if (!outcome_ || !outcome_->model || outcome_->layers.empty()) return;
  const QImage base = baseImage();
  const Model& model = *outcome_->model;
  if (!occlusion_) {
    occlusionView_->setPicture(
        base.scaled(base.size() * std::max(1, kComposedSide / std::max(base.width(), base.height()))));
    const int positions = static_cast<int>(patchStarts(model.inputHeight(), patch_->value(), stride_->value()).size() *
                                           patchStarts(model.inputWidth(), patch_->value(), stride_->value()).size());
    occlusionCaption_->setText(occlusionRunning() ? tr("Classifying %1 occluded pictures on %2…")
                                                        .arg(positions)
                                                        .arg(QString::fromStdString(outcome_->deviceName))
                                                  : tr("%1 pictures, each with a %2×%2 grey patch at another place, "
                                                       "to classify: press Run occlusion.")
                                                        .arg(positions)
                                                        .arg(patch_->value()));
    return;
  }
  const OcclusionMap& map = *occlusion_;
  occlusionView_->setPicture(overlaid(base, map.pixelDrop, map.height, map.width));
  size_t largest = 0;
  for (size_t i = 1; i < map.drop.size(); ++i)
    if (!std::isnan(map.drop[i]) && (std::isnan(map.drop[largest]) || map.drop[i] > map.drop[largest])) largest = i;
  const size_t columns = map.columnStarts.size();
  const QString name = classes_->count() ? classes_->currentText().section(" (", 0, 0) : QString();
  occlusionCaption_->setText(
      tr("A %1×%1 grey patch every %2 pixels: %3. Covering the red parts lowers %4's %5; the largest drop, %6 "
         "points, with the patch at row %7, column %8.")
          .arg(map.patch)
          .arg(map.stride)
          .arg(QString::fromStdString(describeOcclusionRun(map)), name, percent(map.baseline))
          .arg(100.0 * map.drop[largest], 0, 'f', 1)
          .arg(map.rowStarts[largest / columns])
          .arg(map.columnStarts[largest % columns]));
}

void ClassEvidenceView::setRunning(bool running) {
  run_->setVisible(!running);
  cancel_->setVisible(running);
  progress_->setVisible(running);
  patch_->setEnabled(!running);
  stride_->setEnabled(!running);
  if (running) progress_->setValue(0);
}

void ClassEvidenceView::runOcclusion() {
  if (!jobs_ || !outcome_ || !outcome_->model || outcome_->layers.empty() || chosenClass() < 0) return;
  cancelOcclusion();
  occlusion_.reset();
  OcclusionRequest request;
  request.classIndex = chosenClass();
  request.patch = patch_->value();
  request.stride = stride_->value();
  const std::shared_ptr<const InferenceOutcome> outcome = outcome_;
  // Each run has its number: the calls of a run that a newer one replaced change nothing.
  const quint64 run = ++runs_;
  QPointer<ClassEvidenceView> self(this);
  JobRunner::Job job;
  job.kind = JobKind::Occlusion;
  job.work = [outcome, request, self, run](JobContext& context) -> std::function<void()> {
    // The picture's own network and values: the engine of the outcome's model, variant and rule.
    Engine engine(outcome->model, outcome->variant);
    engine.setPreprocessing(outcome->preprocessing);
    auto map = std::make_shared<const OcclusionMap>(
        occlusionSensitivity(engine, outcome->layers.front().value, request, [&context](int done, int total) {
          context.progress(100 * done / total, QObject::tr("%1 of %2 pictures").arg(done).arg(total));
          return !context.cancelled();
        }));
    return [self, run, map] {
      if (self) self->occlusionEnded(run, map, {});
    };
  };
  job.failed = [self, run](const QString& message) {
    if (self) self->occlusionEnded(run, nullptr, message);
  };
  job.dropped = [self, run] {
    if (self) self->occlusionEnded(run, nullptr, {});
  };
  job.progressed = [self, run](int percentDone, const QString& message) {
    if (!self || self->runs_ != run) return;
    self->progress_->setValue(percentDone);
    self->progress_->setFormat(message);
  };
  setRunning(true);
  job_ = jobs_->submit(this, std::move(job));
  showOcclusionMap();
}

void ClassEvidenceView::occlusionEnded(quint64 run, std::shared_ptr<const OcclusionMap> map, const QString& error) {
  if (run != runs_) return;  // a newer run (or picture) replaced it
  job_ = 0;
  setRunning(false);
  if (map) occlusion_ = *map;
  showOcclusionMap();
  if (!error.isEmpty()) {
    occlusionCaption_->setText(tr("No occlusion map: %1").arg(error));
    emit errorOccurred(error);
  }
  emit occlusionFinished();
}

void ClassEvidenceView::cancelOcclusion() {
  if (jobs_ && job_) jobs_->cancel(job_);
}

QString ClassEvidenceView::activationCaption() const {
  return activationCaption_->text();
}
QString ClassEvidenceView::occlusionCaption() const {
  return occlusionCaption_->text();
}
QImage ClassEvidenceView::activationPicture() const {
  return activation_ ? activationView_->picture() : QImage();
}
QImage ClassEvidenceView::occlusionPicture() const {
  return occlusion_ ? occlusionView_->picture() : QImage();
}

QString ClassEvidenceView::exportTo(const QString& path) {
  return exportWidget(*panels_, path);
}

}  // namespace convscope::ui
