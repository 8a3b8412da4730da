// The ConvScope window. It owns the widgets of ui/ and wires them together: the model picker,
// variant selector and input panel on the left; feature maps with the prediction, timing,
// profile and model tabs on the right. What each part does lives in its own widget; here are
// only the connections, the menus and shortcuts, drag-and-drop, settings and error reporting
// (once, in the banner: never a dialog that stops a demo). Long work (inference, sweeps,
// profiles, loading the model and the test set) runs as jobs of the window's one JobRunner: the
// GUI thread queues them and takes their results, and never waits for them.
#pragma once

#include <QMainWindow>

#include <memory>
#include <optional>

#include "app/core/data/image_set.h"
#include "app/core/model/model.h"
#include "app/core/model/model_card.h"
#include "ui/inference/inference_outcome.h"

class QLabel;
class QProgressBar;
class QSplitter;
class QTabWidget;

namespace convscope::ui {
class ConfusionView;
class ConvArithmeticView;
class ErrorBanner;
class GpuMappingPanel;
class RooflinePanel;
class FeatureMapView;
class InferenceController;
class InputPanel;
class JobRunner;
class KernelWeightsView;
class ModelLoadJob;
class TestSetLoadJob;
class PictureFileLoader;
class ModelPicker;
class ModelSummaryView;
class PredictionPanel;
class ProfilePanel;
class RecentFiles;
class TimingPanel;
class UserKernelPanel;
class VariantSelector;
}  // namespace convscope::ui

namespace convscope::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  struct Options {
    bool useSettings = true;  // restore and save QSettings (off for screenshots)
    // Presentation mode also fills the screen. Off for screenshots, whose --size stands for the
    // projector's screen, and for tests that check a layout at a given size.
    bool fullScreenPresentation = true;
  };

  explicit MainWindow(Options options);
  ~MainWindow() override;

  // Models are loaded off the GUI thread: loadModel returns at once, and modelLoadFinished comes
  // later; a later request supersedes it. A model that fails to load is reported (lastError())
  // and the previous one stays in place.
  void loadModel(const QString& path);
  bool modelLoading() const;
  // The test set too is read off the GUI thread, from the moment the window opens.
  bool testSetLoading() const;
  bool loading() const { return modelLoading() || testSetLoading(); }

  // Each returns false when it fails; the error is then shown (lastError()) and the previous
  // picture or variant stays in place.
  // Image files are decoded off the GUI thread: true means the decoding started; the picture
  // (or the error) arrives later, and a later request supersedes it.
  bool openImage(const QString& path);
  bool pictureLoading() const;
  bool openBenchmark(const QString& path);
  bool openFile(const QString& path);  // .onnx: model, .json: benchmark, anything else: image
  // While the test set loads, the image is selected once it has arrived.
  bool selectTestImage(int index);
  bool selectVariant(const QString& id);
  bool selectTab(const QString& name);
  static QStringList tabNames();  // explore, draw, timing, profile, model, kernel, arithmetic, weights,
                                  // confusion, gpu-mapping, roofline, staircase
  void setPresentation(bool on);
  bool presentation() const;

  QString lastError() const { return lastError_; }
  std::shared_ptr<const Model> model() const { return model_; }
  std::shared_ptr<const ImageSet> testSet() const { return testSet_; }
  QStringList classNames() const;

  ui::JobRunner* jobs() const { return jobs_; }
  ui::InferenceController* inference() const { return inference_; }
  ui::ErrorBanner* errorBanner() const { return banner_; }
  ui::ModelPicker* modelPicker() const { return modelPicker_; }
  ui::VariantSelector* variantSelector() const { return variants_; }
  ui::InputPanel* inputPanel() const { return input_; }
  ui::FeatureMapView* featureMaps() const { return maps_; }
  ui::PredictionPanel* prediction() const { return prediction_; }
  ui::TimingPanel* timing() const { return timing_; }
  ui::ProfilePanel* profile() const { return profile_; }
  ui::UserKernelPanel* userKernel() const { return userKernel_; }
  ui::ModelSummaryView* modelSummary() const { return summary_; }
  ui::ConvArithmeticView* arithmetic() const { return arithmetic_; }
  ui::KernelWeightsView* kernelWeights() const { return weights_; }
  ui::ConfusionView* confusion() const { return confusion_; }
  ui::GpuMappingPanel* gpuMapping() const { return gpuMapping_; }
  ui::RooflinePanel* roofline() const { return roofline_; }
  QString deviceText() const;

 signals:
  void firstPredictionShown();
  // A model load has ended: `loaded` false when it failed (lastError() says why).
  void modelLoadFinished(bool loaded);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildLayout();
  void buildMenus();
  void connectWidgets();
  void useModel(std::shared_ptr<const Model> model, std::optional<ModelCard> card, const QString& path);
  void modelFailed(const QString& path, const QString& message);
  void useTestSet(std::shared_ptr<const ImageSet> images);
  void testSetFailed(const QString& folder, const QString& message);
  void updateBusy();
  void restoreSettings();
  void saveSettings() const;
  // What the banner reports, so that a success dismisses only a problem of its own kind.
  enum class Problem { Other, TestSet, Model, Picture, Inference };
  void showError(const QString& message);
  void showProblem(Problem problem, const QString& message);
  void dismissProblem(Problem problem);
  void showInferenceFailure(const QString& message);
  void showOutcome(std::shared_ptr<const ui::InferenceOutcome> outcome);
  void stepImage(int delta);
  void updateTitle();
  void showLeftColumnFor(QWidget* tab);
  void showShortcuts();
  void openImageDialog();
  void openBenchmarkDialog();

  Options options_;
  std::shared_ptr<const Model> model_;
  std::optional<ModelCard> card_;
  QString modelPath_;
  std::shared_ptr<const ImageSet> testSet_;
  QString lastError_;
  bool firstShown_ = false;
  // Asked for while the test set loads, applied when it arrives.
  std::optional<int> pendingTestImage_;
  int pendingClassFilter_ = -1;
  QString fallBackFromModel_;  // the model of the settings: if it fails, the shipped default is loaded

  ui::JobRunner* jobs_;  // first: destroyed first, so no job outlives the widgets it reports to
  ui::ModelLoadJob* modelLoader_;
  ui::TestSetLoadJob* testSetLoader_;
  ui::InferenceController* inference_;
  ui::PictureFileLoader* pictureFiles_;
  ui::RecentFiles* recent_;
  ui::ErrorBanner* banner_;
  ui::ModelPicker* modelPicker_;
  ui::VariantSelector* variants_;
  ui::InputPanel* input_;
  ui::FeatureMapView* maps_;
  ui::PredictionPanel* prediction_;
  ui::TimingPanel* timing_;
  ui::ProfilePanel* profile_;
  ui::UserKernelPanel* userKernel_;
  ui::ModelSummaryView* summary_;
  ui::ConvArithmeticView* arithmetic_;
  ui::KernelWeightsView* weights_;
  ui::ConfusionView* confusion_;
  QTabWidget* tabs_;
  QSplitter* columns_;
  QWidget* left_ = nullptr;
  QSplitter* explore_;
  QLabel* deviceLabel_;
  QLabel* timeLabel_;
  QProgressBar* busy_;  // decoding a picture file, loading the model or the test set
  Problem bannerProblem_ = Problem::Other;
  QAction* presentationAction_;
  bool presenting_ = false;  // the menu's check mark flips before its slot runs: not a record of the mode
  Qt::WindowStates stateBeforePresentation_ = Qt::WindowNoState;
  ui::GpuMappingPanel* gpuMapping_ = nullptr;  // made in buildLayout
  ui::RooflinePanel* roofline_ = nullptr;
};

}  // namespace convscope::gui
