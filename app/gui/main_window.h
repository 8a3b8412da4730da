// The ConvScope window. It holds the left column (model picker, variant selector, input panel)
// and a tab for each row of the tab list (app/gui/tab_registry.h): it makes the views, fills the
// View menu, chooses tabs by name (--tab) and tells the views of every change they listen to.
// What each part does lives in its own widget; here are only the connections, the menus and
// shortcuts, drag-and-drop, settings and error reporting (once, in the banner: never a dialog
// that stops a demo). Long work (inference, sweeps, profiles, loading the model and the test
// set) runs as jobs of the window's one JobRunner: the GUI thread queues them and takes their
// results, and never waits for them.
#pragma once

#include <QMainWindow>
#include <QMessageBox>

#include <functional>
#include <memory>
#include <optional>

#include "app/core/data/image_set.h"
#include "app/core/model/model.h"
#include "app/core/model/model_card.h"
#include "app/gui/tab_registry.h"
#include "ui/inference/inference_outcome.h"

class QLabel;
class QProgressBar;
class QSplitter;
class QTabBar;
class QTabWidget;

namespace convscope::ui {
class ErrorBanner;
class InferenceController;
class InputPanel;
class JobRunner;
class ModelLoadJob;
class TestSetLoadJob;
class PictureFileLoader;
class VideoPlayer;
class ModelPicker;
class PreprocessingDialog;
class RecentFiles;
class VariantSelector;
}  // namespace convscope::ui

namespace convscope::gui {

class MainWindow : public QMainWindow, private WindowLinks {
  Q_OBJECT

 public:
  struct Options {
    // These two set, the rest as by default (what screenshots and tests ask for).
    static Options with(bool useSettings, bool fullScreenPresentation) {
      Options options;
      options.useSettings = useSettings;
      options.fullScreenPresentation = fullScreenPresentation;
      return options;
    }
    bool useSettings = true;  // restore and save QSettings (off for screenshots)
    // Presentation mode also fills the screen. Off for screenshots, whose --size stands for the
    // projector's screen, and for tests that check a layout at a given size.
    bool fullScreenPresentation = true;
    // The tabs, in order. Tests add a view of their own to check that every consumer reads the list.
    std::vector<TabRow> tabs = standardTabs();
    // Where a sweep keeps its runs until they are saved (the Timing tab's recovery file); empty:
    // the application's data folder where settings are used, else nowhere.
    QString recoveryFile;
    // The questions the window asks (unsaved results at quit, a sweep to recover at start) and
    // where to save: a dialog by default; tests answer them.
    std::function<QMessageBox::StandardButton(const QString& text, QMessageBox::StandardButtons buttons)> ask;
    std::function<QString(const QString& suggested)> chooseSavePath;
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
  // Makes `folder` the test set of the browser, the accuracy and Where it fails (File > Open test
  // set…, --data): Fashion-MNIST's IDX files, or photos in class subfolders (PyTorch's ImageFolder
  // layout), labelled by the model card's class names where it has them. Photos are kept as the
  // model sees them, so they are read again when the model or its preprocessing changes. Loads
  // off the GUI thread; if it fails, the banner says why and the test set before stays.
  void openTestSet(const QString& folder);
  QString testSetFolder() const { return testSetFolder_; }
  bool loading() const { return modelLoading() || testSetLoading(); }

  // Each returns false when it fails; the error is then shown (lastError()) and the previous
  // picture or variant stays in place.
  // Image files are decoded off the GUI thread: true means the decoding started; the picture
  // (or the error) arrives later, and a later request supersedes it.
  bool openImage(const QString& path);
  bool pictureLoading() const;
  // A video file or a camera: its frames classified one after another, each taken when the
  // outcome of the one before has arrived (ui::VideoPlayer), the rate in the status bar. Opening
  // starts at once and returns true (false: the file is missing, shown at once); errors arrive
  // later in the banner. Any other picture chosen, or File > Stop video (Esc), stops it.
  bool openVideo(const QString& path);
  void openCamera(int index = 0);
  void stopVideo();
  ui::VideoPlayer* videoPlayer() const { return video_; }
  QAction* stopVideoAction() const { return stopVideoAction_; }
  bool openBenchmark(const QString& path);
  // .onnx: model, .json: benchmark, .cu: a kernel, a folder: a class's results, .mp4, .avi and
  // other videos' suffixes (isVideoFile): a video, anything else: image
  static bool isVideoFile(const QString& path);
  bool openFile(const QString& path);
  // A results folder of convscope-cli grade, in the Class tab.
  bool openResultsFolder(const QString& path);
  // While the test set loads, the image is selected once it has arrived.
  bool selectTestImage(int index) override;
  bool selectVariant(const QString& id);
  // Makes the tab of one of its names current (case does not matter); false for no tab's name.
  bool selectTab(const QString& name) override;
  // The names --tab accepts: every name of every row of the standard tabs, in order.
  static QStringList tabNames();
  // This window's rows and the view each made (the tab at the same index).
  const std::vector<TabRow>& tabRows() const { return options_.tabs; }
  QLabel* timeLabel() const { return timeLabel_; }
  QLabel* deviceLabel() const { return deviceLabel_; }
  QWidget* tabView(int row) const { return tabViews_.at(row); }
  QTabWidget* tabWidget() const { return tabs_; }
  // The bar the user clicks: the whole window's width, above the left column and the views, so
  // that it never moves when the column shows or hides (the tab widget's own bar is hidden).
  QTabBar* mainTabBar() const { return tabBar_; }
  QWidget* leftColumn() const { return left_; }
  void setPresentation(bool on);
  bool presentation() const;

  // How pictures become the model's input (preprocessing.h): the model card's rule (or the
  // default for its channels) when a model is loaded; File > Picture preprocessing… changes it
  // for this model, and the picture is classified again.
  void setPreprocessing(const Preprocessing& rule);
  const Preprocessing& preprocessing() const;
  // The dialog of File > Picture preprocessing…, not yet shown (tests fill it in and accept it).
  ui::PreprocessingDialog* makePreprocessingDialog();

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
  // The view of the tab that has `name` among its names, as `View` (null: no such tab, or not a
  // View): the window lists no view; tests and the command line find them through the rows too.
  template <class View>
  View* view(const QString& name) const {
    return qobject_cast<View*>(viewNamed(name));
  }
  QString deviceText() const;

 signals:
  void firstPredictionShown();
  // A model load has ended: `loaded` false when it failed (lastError() says why).
  void modelLoadFinished(bool loaded);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void changeEvent(QEvent* event) override;
  void fitToScreen();
  void spaceStatusLabels();

 private:
  // WindowLinks: what the rows' links ask of the window.
  QWidget* viewNamed(const QString& name) const override;
  MainWindow* window() const override { return const_cast<MainWindow*>(this); }
  WindowState state() const override;
  void showView(QWidget* view) override;
  void showStatus(const QString& text, int milliseconds) override;
  void addRecentFile(const QString& path) override;
  void setBenchmark(std::shared_ptr<const BenchmarkReport> report, const QString& name,
                    std::shared_ptr<const BenchmarkReport> beside, const QString& besideName) override;
  QString recoveryFile() const override { return recoveryFile_; }
  QMessageBox::StandardButton ask(const QString& text, QMessageBox::StandardButtons buttons) override {
    return options_.ask(text, buttons);
  }
  QString chooseSavePath(const QString& suggested) override { return options_.chooseSavePath(suggested); }
  // The first row that opens `suffix` ("/" for a folder), or -1.
  int rowOpening(const QString& suffix) const;
  bool openWithRow(int row, const QString& path);

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
  void showError(const QString& message) override;
  void showProblem(Problem problem, const QString& message);
  void dismissProblem(Problem problem);
  void showInferenceFailure(const QString& message);
  void showOutcome(std::shared_ptr<const ui::InferenceOutcome> outcome);
  // Tells every view that listens to `change`, in the order of the rows.
  void notify(Change change);
  TabContext tabContext();
  void stepImage(int delta);
  void updateTitle();
  void showLeftColumnFor(QWidget* tab);
  void showShortcuts();
  void openImageDialog();
  void openVideoDialog();
  void openTestSetDialog();
  void editPreprocessing();
  // Reads testSetFolder_ for the model in use (an ImageFolder waits for one).
  void loadTestSet();

  Options options_;
  std::shared_ptr<const Model> model_;
  std::optional<ModelCard> card_;
  QString modelPath_;
  std::shared_ptr<const ImageSet> testSet_;
  // The folder asked for (being read, or read), and the one testSet_ came from.
  QString testSetFolder_, shownTestSetFolder_;
  QString defaultTestSetFolder_;       // defaultDataFolder() when the window opened
  bool testSetWaitsForModel_ = false;  // an ImageFolder asked for before any model was in
  QString lastError_;
  std::shared_ptr<const ui::InferenceOutcome> outcome_;  // the latest, for the views that listen to outcomes
  // What the Timing tab shows (setBenchmark), with where it came from, and what it shows beside it.
  std::shared_ptr<const BenchmarkReport> benchmark_, benchmarkBeside_;
  QString benchmarkName_, benchmarkBesideName_;
  // Why there is no outcome after one was shown (WindowState::outcomeCleared, outcomeFailure).
  QString outcomeCleared_, outcomeFailure_;
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
  ui::VideoPlayer* video_;
  ui::RecentFiles* recent_;
  ui::ErrorBanner* banner_;
  ui::ModelPicker* modelPicker_;
  ui::VariantSelector* variants_;
  ui::InputPanel* input_;
  QTabWidget* tabs_;
  QTabBar* tabBar_ = nullptr;
  std::vector<QWidget*> tabViews_;  // made from the rows, in their order
  QString recoveryFile_;            // Options::recoveryFile, or the data folder's
  QSplitter* columns_;
  QWidget* left_ = nullptr;
  QLabel* deviceLabel_;
  QLabel* timeLabel_;
  QProgressBar* busy_;  // decoding a picture file, loading the model or the test set
  Problem bannerProblem_ = Problem::Other;
  QAction* presentationAction_;
  QAction* stopVideoAction_ = nullptr;
  bool presenting_ = false;  // the menu's check mark flips before its slot runs: not a record of the mode
  Qt::WindowStates stateBeforePresentation_ = Qt::WindowNoState;
};

}  // namespace convscope::gui
