// The "Where it fails" tab: the confusion matrix of the current model and variant over the whole
// test set, each class's accuracy, and the images behind any cell. Without a chosen cell the list
// holds every misclassified image, the most confident mistakes first; each item gives the true
// and predicted class and their probabilities, and choosing one opens it in the Explore tab. The
// test set is classified as a job of the JobRunner (progress, cancel), by the same classify() the
// CLI runs; it starts when the tab is shown, and again when the model or the variant changes.
#pragma once

#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/core/data/image_set.h"
#include "app/core/data/preprocessing.h"
#include "app/core/engine/confusion.h"
#include "app/core/model/model.h"
#include "ui/jobs/test_set_evaluation_job.h"

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;

namespace convscope::ui {

class ConfusionMatrixWidget;
class JobRunner;

class ConfusionView : public QWidget {
  Q_OBJECT

 public:
  explicit ConfusionView(JobRunner* jobs, QWidget* parent = nullptr);

  void setModel(std::shared_ptr<const Model> model);
  void setVariant(const QString& variant);
  void setImageSet(std::shared_ptr<const ImageSet> images);
  // How the test set's pictures reach the model: the window's rule (its card's, or the user's).
  void setPreprocessing(const Preprocessing& preprocessing);

  // Classifies the test set with the current model and variant (a job); a running one is replaced.
  void evaluate();
  void cancel();
  bool running() const { return job_->running(); }
  // The evaluation shown (nullptr before the first, or after the model or the variant changed).
  std::shared_ptr<const TestSetEvaluation> evaluation() const { return evaluation_; }
  std::shared_ptr<const ConfusionMatrix> matrix() const { return matrix_; }

  // Lists the images of one cell, or every misclassified image.
  void showCell(int trueClass, int predicted);
  void showMisclassified();
  // Test-set indices of the images listed, in list order.
  std::vector<int> listedImages() const { return listed_; }
  QString listTitle() const;
  // The ten largest probabilities of the image chosen in the list (all of a ten-class model's), largest first.
  QString probabilitiesText() const;
  QString statusText() const;

  ConfusionMatrixWidget* matrixWidget() const { return matrixWidget_; }
  QListWidget* imageList() const { return list_; }
  QProgressBar* progressBar() const { return progress_; }
  QPushButton* cancelButton() const { return cancel_; }
  QString exportTo(const QString& path);

 signals:
  void testImageChosen(int index);
  void errorOccurred(const QString& message);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  std::string preprocessingText() const;  // JSON text, empty for the engine's default
  bool fitsModel() const;                 // the test set's pictures are in the model's channels
  void invalidate();
  void evaluateIfStale();
  void useEvaluation(std::shared_ptr<const TestSetEvaluation> evaluation);
  void fillList(const std::vector<int>& runPositions, const QString& title);
  QString className(int c) const;
  void setBusy(bool busy);

  TestSetEvaluationJob* job_;
  std::shared_ptr<const Model> model_;
  QString variant_;
  std::optional<Preprocessing> preprocessing_;
  std::string evaluatedPreprocessing_;  // the rule of evaluation_ (preprocessingText)
  std::shared_ptr<const ImageSet> images_;
  std::shared_ptr<const TestSetEvaluation> evaluation_;
  std::shared_ptr<const ConfusionMatrix> matrix_;
  std::vector<int> listed_;
  std::shared_ptr<const Model> runningModel_;  // what the job in progress classifies with
  QString runningVariant_;

  QLabel* status_;
  QPushButton* evaluate_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  ConfusionMatrixWidget* matrixWidget_;
  QLabel* listTitle_;
  QListWidget* list_;
  QLabel* probabilities_;
};

}  // namespace convscope::ui
