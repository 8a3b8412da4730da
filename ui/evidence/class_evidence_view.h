// The "Why" tab (why this class): where the picture's evidence for a class lies, drawn over the picture
// as the model sees it. Left, the class activation map (exact, for networks that end in global
// average pooling and one linear layer; else why there is none); right, the occlusion map: the
// picture with a grey patch at every position, all of them classified as one job (batches as large
// as memory allows: on a GPU usually one), the drop of the class's probability as a heat map, with
// the batch sizes and the time. The class is chosen among the picture's top 5 (the true one too,
// when known). Occlusion runs by itself for small inputs (the course's 28 x 28) while the tab is
// shown, on request for large ones, where the CPU takes seconds; it reports progress and can be
// cancelled.
#pragma once

#include <QImage>
#include <QPointer>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>

#include "app/core/engine/class_evidence.h"
#include "ui/inference/inference_outcome.h"
#include "ui/jobs/job_runner.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace convscope::ui {

class EvidencePicture;

class ClassEvidenceView : public QWidget {
  Q_OBJECT

 public:
  // Inputs of at most this many pixels get their occlusion map at once (28 x 28 is 784; 224 x 224
  // is 50,176 and takes about 20 s on a 2-core CPU).
  static constexpr int kAutomaticOcclusionPixels = 64 * 64;

  explicit ClassEvidenceView(JobRunner* jobs, QWidget* parent = nullptr);
  ~ClassEvidenceView() override;  // cancels its job

  void setOutcome(std::shared_ptr<const InferenceOutcome> outcome);
  void setClassNames(const QStringList& names);

  // The class explained: one of the picture's top classes (the first by default).
  int chosenClass() const;
  bool chooseClass(int classIndex);  // false when it is not among the choices
  QStringList classChoices() const;

  void runOcclusion();
  void cancelOcclusion();
  bool occlusionRunning() const { return job_ != 0; }
  // For small inputs, while the tab is shown: at once, on a new picture or class.
  void runOcclusionIfQuick();

  // What the two panels say under their pictures (for tests and screen readers).
  QString activationCaption() const;
  QString occlusionCaption() const;
  // The pictures drawn: the input with its overlay (null when there is none).
  QImage activationPicture() const;
  QImage occlusionPicture() const;
  const std::optional<OcclusionMap>& occlusionMap() const { return occlusion_; }
  const std::optional<ActivationMap>& activationMap() const { return activation_; }

  QString exportTo(const QString& path);  // both panels, PNG or PDF; an error message or ""

 signals:
  void errorOccurred(const QString& message);
  void occlusionFinished();  // a map arrived, or a run failed or was cancelled

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void fillClassChoices();
  void showActivationMap();
  void showOcclusionMap();
  void setRunning(bool running);
  void occlusionEnded(quint64 run, std::shared_ptr<const OcclusionMap> map, const QString& error);
  QImage baseImage() const;

  QPointer<JobRunner> jobs_;  // the window's; it may go before this view does
  std::shared_ptr<const InferenceOutcome> outcome_;
  QStringList classNames_;
  std::optional<ActivationMapHead> head_;
  QString noHeadReason_;
  std::optional<ActivationMap> activation_;
  std::optional<OcclusionMap> occlusion_;
  JobRunner::JobId job_ = 0;
  quint64 runs_ = 0;  // occlusion runs started; a run's results count only while it is the last

  QComboBox* classes_;
  QSpinBox* patch_;
  QSpinBox* stride_;
  QPushButton* run_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  EvidencePicture* activationView_;
  EvidencePicture* occlusionView_;
  QLabel* activationCaption_;
  QLabel* occlusionCaption_;
  QWidget* panels_;
};

}  // namespace convscope::ui
