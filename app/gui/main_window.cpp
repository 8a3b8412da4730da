#include "app/gui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QGroupBox>
#include <QGuiApplication>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QProxyStyle>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/util/data_dir.h"
#include "app/gui/explore_view.h"
#include "ui/charts/prediction_panel.h"
#include "ui/class/class_panel.h"
#include "ui/common/error_banner.h"
#include "ui/common/export.h"
#include "ui/common/presentation_mode.h"
#include "ui/common/recent_files.h"
#include "ui/common/shortcut_priority.h"
#include "ui/explain/conv_arithmetic_view.h"
#include "ui/explain/kernel_weights_view.h"
#include "ui/failures/confusion_view.h"
#include "ui/gpumap/gpu_mapping_panel.h"
#include "ui/inference/inference_controller.h"
#include "ui/input/dataset_browser.h"
#include "ui/input/drawing_panel.h"
#include "ui/input/input_panel.h"
#include "ui/input/picture_file.h"
#include "ui/input/picture_file_loader.h"
#include "ui/jobs/job_runner.h"
#include "ui/jobs/model_load_job.h"
#include "ui/jobs/test_set_load_job.h"
#include "ui/kernel/user_kernel_panel.h"
#include "ui/maps/feature_map_view.h"
#include "ui/model/model_picker.h"
#include "ui/model/model_summary_view.h"
#include "ui/model/variant_selector.h"
#include "ui/profile/profile_panel.h"
#include "ui/roofline/roofline_panel.h"
#include "ui/timing/sweep_controls.h"
#include "ui/timing/timing_panel.h"

namespace convscope::gui {
namespace {

QGroupBox* group(const QString& title, QWidget* content, QWidget* parent) {
  auto* box = new QGroupBox(title, parent);
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(content);
  return box;
}

QString defaultModelPath() {
  return QString::fromUtf8(shippedModelsDir()) + "/course-high.onnx";
}

}  // namespace

namespace {

// The views' tab widget, whose own bar is hidden for the window's (mainTabBar): QTabWidget counts
// its bar in its least height even hidden, which made the window taller than a 1280x720 screen.
class PagesUnderTheWindowsBar : public QTabWidget {
 public:
  using QTabWidget::QTabWidget;
  QSize minimumSizeHint() const override {
    QSize least = QTabWidget::minimumSizeHint();
    if (!tabBar()->isVisibleTo(this)) least.rheight() -= tabBar()->minimumSizeHint().height();
    return least;
  }
};

}  // namespace

MainWindow::MainWindow(Options options)
    : options_(options),
      jobs_(new ui::JobRunner(this)),
      modelLoader_(new ui::ModelLoadJob(this)),
      testSetLoader_(new ui::TestSetLoadJob(jobs_, this)),
      inference_(new ui::InferenceController(jobs_, this)),
      pictureFiles_(new ui::PictureFileLoader(this)),
      recent_(new ui::RecentFiles(options.useSettings ? "recentFiles" : QString(), this)),
      banner_(new ui::ErrorBanner(this)),
      modelPicker_(new ui::ModelPicker(this)),
      variants_(new ui::VariantSelector(this)),
      input_(new ui::InputPanel(this)),
      tabs_(new PagesUnderTheWindowsBar(this)),
      columns_(new QSplitter(Qt::Horizontal, this)),
      deviceLabel_(new QLabel(this)),
      timeLabel_(new QLabel(this)),
      busy_(new QProgressBar(this)) {
  setWindowTitle("ConvScope");
  setAcceptDrops(true);
  buildLayout();
  buildMenus();
  connectWidgets();

  deviceLabel_->setText(deviceText());
  busy_->setRange(0, 0);  // busy, no percentage: neither OpenCV nor the loaders report one
  busy_->setMaximumWidth(120);
  busy_->setToolTip(tr("Decoding a picture file, or loading the model or the test set"));
  statusBar()->addPermanentWidget(busy_);
  timeLabel_->setToolTip(
      tr("Resizing the picture and one inference that keeps every layer's output; the warm runs "
         "timed after it for the op times are not counted"));
  statusBar()->addPermanentWidget(timeLabel_);
  // The time and the device read as two facts, from the back of a room too: a rule between them.
  auto* rule = new QFrame(this);
  rule->setObjectName("statusRule");
  rule->setFrameShape(QFrame::VLine);
  rule->setFrameShadow(QFrame::Sunken);
  statusBar()->addPermanentWidget(rule);
  statusBar()->addPermanentWidget(deviceLabel_);
  spaceStatusLabels();

  // The window opens at once: the test set and the model arrive from the job runner.
  const QString dataFolder = QString::fromStdString(defaultDataFolder().string());
  input_->browser()->setUnavailableReason(tr("loading %1…").arg(QDir::toNativeSeparators(dataFolder)));
  prediction_->setClassNames(classNames());
  testSetLoader_->load(dataFolder);
  inference_->setVariant(variants_->currentVariant().toStdString());
  notify(Change::Variant);
  restoreSettings();
  if (!modelLoading()) loadModel(defaultModelPath());
  updateBusy();

  // Nothing lost: a sweep's runs reach a recovery file as they finish, and the next start offers
  // them back (after the window is up, so the question has a window to sit on).
  QString recovery = options_.recoveryFile;
  if (recovery.isEmpty() && options_.useSettings)
    recovery = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + "/recovery/sweep.json";
  if (!options_.ask)
    options_.ask = [this](const QString& text, QMessageBox::StandardButtons buttons) {
      return QMessageBox::question(this, tr("ConvScope"), text, buttons);
    };
  if (!options_.chooseSavePath)
    options_.chooseSavePath = [this](const QString& suggested) {
      return QFileDialog::getSaveFileName(this, tr("Save the benchmark"), suggested, tr("Benchmark JSON (*.json)"));
    };
  if (!recovery.isEmpty()) {
    timing_->setRecoveryFile(recovery);
    QTimer::singleShot(0, this, &MainWindow::offerRecoveredSweep);
  }
}

void MainWindow::offerRecoveredSweep() {
  const auto report = ui::TimingPanel::readRecoveryFile(timing_->recoveryFile());
  if (!report || timing_->sweepRunning()) return;
  const QMessageBox::StandardButton answer =
      options_.ask(tr("ConvScope closed with a sweep that was not saved: %n run(s) on %1 (%2). Show them again?", "",
                      static_cast<int>(report->runs.size()))
                       .arg(QString::fromStdString(report->device), QString::fromStdString(report->date)),
                   QMessageBox::Yes | QMessageBox::Discard);
  if (answer == QMessageBox::Yes) {
    timing_->showRecovered(report);
    selectTab("timing");
  } else if (answer == QMessageBox::Discard) {
    timing_->discardUnsavedResults();
  }
}

bool MainWindow::keepOrDiscardUnsavedResults() {
  if (!timing_->hasUnsavedResults()) return true;
  const QMessageBox::StandardButton answer =
      options_.ask(tr("The sweep's %n run(s) are not saved. Save them before quitting?", "",
                      timing_->report() ? static_cast<int>(timing_->report()->runs.size()) : 0),
                   QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Discard) {
    timing_->discardUnsavedResults();
    return true;
  }
  if (answer != QMessageBox::Save) return false;  // Cancel, or the question closed
  const QString path = options_.chooseSavePath("bench.json");
  if (path.isEmpty()) return false;  // no file chosen: stay
  if (const QString error = timing_->saveJson(path); !error.isEmpty()) {
    showError(error);
    return false;
  }
  return true;
}

MainWindow::~MainWindow() = default;

void MainWindow::buildLayout() {
  auto* left = new QWidget(this);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->addWidget(group(tr("Model"), modelPicker_, left));
  leftLayout->addWidget(group(tr("Kernel variant"), variants_, left));
  leftLayout->addWidget(group(tr("Picture"), input_, left), 1);
  left->setMinimumWidth(300);
  left_ = left;

  const TabContext context = tabContext();
  tabBar_ = new QTabBar(this);
  tabBar_->setExpanding(false);
  tabBar_->setDrawBase(true);
  for (const TabRow& row : options_.tabs) {
    QWidget* view = row.make(context);
    tabViews_.push_back(view);
    tabs_->addTab(view, tr(row.title));
    tabBar_->addTab(tr(row.title));
    if (row.connectErrors) row.connectErrors(view, this, [this](const QString& message) { showError(message); });
  }
  explore_ = requiredView<ExploreView>("explore");
  maps_ = explore_->maps();
  prediction_ = explore_->prediction();
  timing_ = requiredView<ui::TimingPanel>("timing");
  profile_ = requiredView<ui::ProfilePanel>("profile");
  summary_ = requiredView<ui::ModelSummaryView>("model");
  userKernel_ = requiredView<ui::UserKernelPanel>("kernel");
  arithmetic_ = requiredView<ui::ConvArithmeticView>("arithmetic");
  weights_ = requiredView<ui::KernelWeightsView>("weights");
  confusion_ = requiredView<ui::ConfusionView>("confusion");
  gpuMapping_ = requiredView<ui::GpuMappingPanel>("gpu-mapping");
  roofline_ = requiredView<ui::RooflinePanel>("roofline");
  class_ = requiredView<ui::ClassPanel>("class");

  columns_->addWidget(left);
  columns_->addWidget(tabs_);
  columns_->setStretchFactor(0, 0);
  columns_->setStretchFactor(1, 1);
  columns_->setSizes({360, 1080});
  explore_->setSizes({640, 440});

  // One bar for the whole window (see mainTabBar): the tab widget's own stays hidden, and the two
  // follow each other.
  tabs_->tabBar()->hide();
  connect(tabBar_, &QTabBar::currentChanged, tabs_, &QTabWidget::setCurrentIndex);
  connect(tabs_, &QTabWidget::currentChanged, tabBar_, &QTabBar::setCurrentIndex);

  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(6, 6, 6, 0);
  layout->setSpacing(0);
  layout->addWidget(banner_);
  layout->addWidget(tabBar_);
  layout->addWidget(columns_, 1);
  setCentralWidget(central);
  resize(1440, 900);
  fitToScreen();
}

void MainWindow::spaceStatusLabels() {
  // Half a letter of the labels' own font on each side of the rule: in presentation mode too.
  for (QLabel* label : {timeLabel_, deviceLabel_}) {
    const int margin = (label->fontMetrics().averageCharWidth() + 1) / 2 + 2;
    label->setContentsMargins(margin, 0, margin, 0);
  }
}

void MainWindow::changeEvent(QEvent* event) {
  QMainWindow::changeEvent(event);
  if (event->type() == QEvent::FontChange) spaceStatusLabels();
}

void MainWindow::fitToScreen() {
  // Never larger than the screen it opens on (a 1024x700 lab screen would hide the tabs and the
  // status bar), and on it.
  const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
  if (!screen) return;
  const QRect room = screen->availableGeometry();
  const QSize fitted = size().boundedTo(room.size()).expandedTo(minimumSizeHint().boundedTo(room.size()));
  if (fitted != size()) resize(fitted);
  if (!room.intersects(frameGeometry())) move(room.topLeft());
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Open &model…"), QKeySequence::Open, modelPicker_, &ui::ModelPicker::openFileDialog);
  file->addAction(tr("Open &image…"), QKeySequence(tr("Ctrl+I")), this, &MainWindow::openImageDialog);
  file->addAction(tr("Open &benchmark JSON…"), QKeySequence(tr("Ctrl+B")), this, &MainWindow::openBenchmarkDialog);
  file->addAction(tr("Open your &kernel…"), this, [this] {
    selectTab("kernel");
    userKernel_->openFileDialog();
  });
  file->addAction(tr("Open class &results folder…"), this, [this] {
    selectTab("class");
    class_->openFolderDialog();
  });
  QMenu* recent = file->addMenu(tr("&Recent files"));
  connect(recent, &QMenu::aboutToShow, this, [this, recent] { recent_->fillMenu(recent); });
  file->addSeparator();
  file->addAction(tr("Export &feature maps…"), QKeySequence(tr("Ctrl+E")), this, [this] {
    const QString path = ui::askExportPath(this, "feature-maps");
    if (!path.isEmpty())
      if (const QString error = maps_->exportTo(path); !error.isEmpty()) showError(error);
  });
  file->addAction(tr("Export &prediction chart…"), this, [this] {
    const QString path = ui::askExportPath(this, "prediction");
    if (!path.isEmpty())
      if (const QString error = prediction_->exportChart(path); !error.isEmpty()) showError(error);
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  presentationAction_ = view->addAction(tr("&Presentation mode"), QKeySequence(Qt::Key_F5), this,
                                        [this](bool on) { setPresentation(on); });
  presentationAction_->setCheckable(true);
  view->addSeparator();
  QAction* next = view->addAction(tr("&Next image"), this, [this] { stepImage(1); });
  next->setShortcuts({QKeySequence(tr("Ctrl+Right")), QKeySequence(Qt::Key_PageDown)});
  QAction* previous = view->addAction(tr("P&revious image"), this, [this] { stepImage(-1); });
  previous->setShortcuts({QKeySequence(tr("Ctrl+Left")), QKeySequence(Qt::Key_PageUp)});
  QAction* nextVariant =
      view->addAction(tr("Next &variant"), QKeySequence(tr("Ctrl+Down")), variants_, &ui::VariantSelector::selectNext);
  QAction* previousVariant = view->addAction(tr("Previous v&ariant"), QKeySequence(tr("Ctrl+Up")), variants_,
                                             &ui::VariantSelector::selectPrevious);
  // The teacher steps through pictures and variants from wherever the focus is: after typing in
  // the # box, in the enlarged-map window. Text fields give these keys up (ShortcutPriority).
  QList<QKeySequence> navigation;
  for (QAction* action : {next, previous, nextVariant, previousVariant}) {
    action->setShortcutContext(Qt::ApplicationShortcut);
    navigation += action->shortcuts();
  }
  new ui::ShortcutPriority(navigation, this);
  view->addAction(tr("&Draw"), QKeySequence(tr("Ctrl+D")), this, [this] { selectTab("draw"); });
  view->addAction(tr("&Test set"), QKeySequence(tr("Ctrl+T")), this,
                  [this] { input_->showSource(ui::InputPanel::Source::TestSet); });
  view->addSeparator();
  // Ctrl+1 to Ctrl+9 for the first nine tabs (a key sequence has one digit); every tab is in the menu.
  for (int i = 0; i < static_cast<int>(options_.tabs.size()); ++i)
    view->addAction(tr(options_.tabs[i].title), i < 9 ? QKeySequence(tr("Ctrl+%1").arg(i + 1)) : QKeySequence(),
                    this,  // "&&" stays a literal &
                    [this, i] { tabs_->setCurrentIndex(i); });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Keyboard shortcuts"), QKeySequence::HelpContents, this, &MainWindow::showShortcuts);
  help->addAction(tr("&About ConvScope"), this, [this] {
    QMessageBox::about(this, tr("About ConvScope"),
                       tr("<b>ConvScope</b> %1<br>What every layer of a small CNN makes of a picture, and what each "
                          "step of a CUDA convolution does to its op time.")
                           .arg(QApplication::applicationVersion()));
  });
}

void MainWindow::connectWidgets() {
  connect(modelPicker_, &ui::ModelPicker::modelRequested, this, &MainWindow::loadModel);
  connect(modelLoader_, &ui::ModelLoadJob::loaded, this, &MainWindow::useModel);
  connect(modelLoader_, &ui::ModelLoadJob::failed, this, &MainWindow::modelFailed);
  connect(testSetLoader_, &ui::TestSetLoadJob::loaded, this, &MainWindow::useTestSet);
  connect(testSetLoader_, &ui::TestSetLoadJob::failed, this, &MainWindow::testSetFailed);
  const auto showLoadProgress = [this](int, const QString& message) { statusBar()->showMessage(message); };
  connect(modelLoader_, &ui::ModelLoadJob::progressed, this, showLoadProgress);
  connect(testSetLoader_, &ui::TestSetLoadJob::progressed, this, showLoadProgress);
  connect(recent_, &ui::RecentFiles::fileChosen, this, &MainWindow::openFile);
  // A student's kernel: selectable once it passed its check; its timings join the Timing tab's.
  connect(userKernel_, &ui::UserKernelPanel::variantReady, variants_, &ui::VariantSelector::setUserVariant);
  connect(userKernel_, &ui::UserKernelPanel::timed, this, [this](std::shared_ptr<const BenchmarkReport> kernel) {
    if (!kernel || kernel->runs.empty()) return;
    auto merged = std::make_shared<BenchmarkReport>(timing_->report() ? *timing_->report() : *kernel);
    if (timing_->report()) mergeRuns(*merged, *kernel, RunMerge::kReplaceTheVariants);  // its earlier runs give way
    // And a point on the Roofline, beside the course's variants of the same report (through
    // shownResultsChanged: it replaces the report the Roofline had, not a second machine).
    timing_->setReport(merged, tr("with your kernel"));
  });
  // The Roofline draws what the Timing tab shows, however it came (opened, swept, chosen).
  connect(timing_, &ui::TimingPanel::shownResultsChanged, this,
          [this](std::shared_ptr<const BenchmarkReport> report, const QString& name) {
            benchmark_ = std::move(report);
            benchmarkName_ = name;
            notify(Change::Benchmark);
          });
  // Once checked (its row is in the variant table), it can be drawn in the GPU mapping view.
  connect(userKernel_, &ui::UserKernelPanel::variantReady, this,
          [this](const QString& id, const QString&, const QString& unavailableReason) {
            if (unavailableReason.isEmpty()) gpuMapping_->addUserVariant(id.toStdString());
          });
  connect(class_, &ui::ClassPanel::submissionChosen, this, &MainWindow::showSubmission);
  connect(variants_, &ui::VariantSelector::variantChanged, this, [this](const QString& id) {
    inference_->setVariant(id.toStdString());
    notify(Change::Variant);
    deviceLabel_->setText(deviceText());
    statusBar()->showMessage(tr("Kernel variant: %1").arg(id), 4000);
  });
  // A test image or a drawing chosen while a picture file decodes replaces it: the decode's result
  // must not come in later and replace the newer choice. And it is a new picture, so a banner
  // about a picture file that failed to decode no longer applies.
  connect(input_, &ui::InputPanel::inputChosen, this, [this](const ui::InputImage& picture) {
    pictureFiles_->cancel();
    pendingTestImage_.reset();
    dismissProblem(Problem::Picture);
    inference_->classify(picture);
    updateTitle();
  });
  connect(input_, &ui::InputPanel::inputCleared, this, [this](const QString& message) {
    pictureFiles_->cancel();
    inference_->clearInput();
    maps_->setOutcome(nullptr);
    prediction_->clear(message);
  });
  connect(inference_, &ui::InferenceController::outcomeReady, this, &MainWindow::showOutcome);
  connect(inference_, &ui::InferenceController::failed, this, &MainWindow::showInferenceFailure);
  connect(pictureFiles_, &ui::PictureFileLoader::loadingChanged, this, [this](bool loading) {
    updateBusy();
    if (loading) statusBar()->showMessage(tr("Decoding %1…").arg(QFileInfo(pictureFiles_->pendingPath()).fileName()));
  });
  connect(pictureFiles_, &ui::PictureFileLoader::loaded, this,
          [this](const ui::InputImage& picture, const QString& path) {
            recent_->add(path);
            dismissProblem(Problem::Picture);
            statusBar()->showMessage(tr("Opened %1").arg(QFileInfo(path).fileName()), 4000);
            input_->browser()->showOutsidePicture(QFileInfo(path).fileName());  // no test image stays highlighted
            inference_->classify(picture);
            updateTitle();
          });
  connect(pictureFiles_, &ui::PictureFileLoader::failed, this, [this](const QString&, const QString& message) {
    statusBar()->clearMessage();  // "Decoding…" is over; the banner alone says why
    showProblem(Problem::Picture, message);
  });
  connect(maps_, &ui::FeatureMapView::errorOccurred, this, &MainWindow::showError);
  connect(prediction_, &ui::PredictionPanel::errorOccurred, this, &MainWindow::showError);
  // A pixel clicked on an enlarged conv map: its arithmetic, in this window.
  connect(maps_, &ui::FeatureMapView::convPixelChosen, this, [this](const QString& node, int channel, int y, int x) {
    if (!arithmetic_->showPixel(node, channel, y, x)) return;
    tabs_->setCurrentWidget(arithmetic_);
    raise();
    activateWindow();
  });
  // A test image chosen among the mistakes opens where its maps and probabilities are.
  connect(confusion_, &ui::ConfusionView::testImageChosen, this, [this](int index) {
    if (selectTestImage(index)) tabs_->setCurrentWidget(explore_);
  });
  connect(tabs_, &QTabWidget::currentChanged, this, [this](int i) { showLeftColumnFor(tabs_->widget(i)); });
  connect(timing_, &ui::TimingPanel::statusMessage, this,
          [this](const QString& text) { statusBar()->showMessage(text, 6000); });
}

void MainWindow::useTestSet(std::shared_ptr<const ImageSet> images) {
  testSet_ = std::move(images);
  input_->setImageSet(testSet_);
  inference_->setDataSet(testSet_);  // a user's picture is told how far from it it lies
  notify(Change::TestSet);
  statusBar()->showMessage(tr("Test set loaded: %n image(s)", "", testSet_->count()), 4000);
  updateBusy();
  // The image asked for meanwhile (settings, --index), else the first one unless the user has
  // chosen another picture already. (Taken first: the class filter may choose an image.)
  const std::optional<int> asked = std::exchange(pendingTestImage_, std::nullopt);
  input_->browser()->setClassFilter(pendingClassFilter_);
  if (testSet_->count() == 0) return;
  if (asked)
    selectTestImage(std::clamp(*asked, 0, testSet_->count() - 1));
  else if (!inference_->hasInput() && !pictureFiles_->loading())
    selectTestImage(0);
}

void MainWindow::testSetFailed(const QString&, const QString& message) {
  statusBar()->clearMessage();  // "Loading…" is over; the banner says why
  updateBusy();
  pendingTestImage_.reset();
  showProblem(Problem::TestSet, tr("No test set: %1. Drawing and image files still work; install the Debian package "
                                   "dataset-fashion-mnist or point CONVSCOPE_DATA at a folder of IDX files.")
                                    .arg(message));
  input_->browser()->setUnavailableReason(message);  // stays after the banner goes
}

bool MainWindow::modelLoading() const {
  return modelLoader_->loading();
}

bool MainWindow::testSetLoading() const {
  return testSetLoader_->loading();
}

void MainWindow::updateBusy() {
  busy_->setVisible(pictureFiles_->loading() || loading());
}

QStringList MainWindow::classNames() const {
  QStringList names;
  for (const std::string& name : testSet_ ? testSet_->classNames() : fashionMnistClassNames())
    names << QString::fromStdString(name);
  return names;
}

QString MainWindow::deviceText() const {
  // The device the current variant runs on, or "CPU only" where there is no GPU at all.
  const GpuInfo& gpu = gpuInfo();
  if (!gpu.usable) return tr("CPU only");
  const QString name = QString::fromStdString(gpu.name);
  if (findConvVariant(variants_->currentVariant().toStdString()).runsOnGpu()) return tr("GPU: %1").arg(name);
  return tr("CPU (GPU %1 idle)").arg(name);
}

void MainWindow::loadModel(const QString& path) {
  // Every way of choosing a model (picker, shipped list, recent files, drag-and-drop, dialog,
  // settings) ends here. The job reads and checks the whole graph off the GUI thread; nothing
  // changes here until it has passed (useModel) or failed (modelFailed).
  modelLoader_->load(path);
  updateBusy();
}

void MainWindow::useModel(std::shared_ptr<const Model> model, std::optional<ModelCard> card, const QString& path) {
  model_ = std::move(model);
  card_ = std::move(card);
  modelPath_ = QFileInfo(path).absoluteFilePath();
  modelPicker_->setCurrentModel(modelPath_, *model_, card_);
  notify(Change::Model);
  inference_->setModel(model_);
  if (!ui::ModelPicker::shippedModels().contains(modelPath_)) recent_->add(modelPath_);
  dismissProblem(Problem::Model);
  statusBar()->showMessage(tr("Model %1 loaded").arg(QString::fromStdString(model_->name)), 4000);
  updateTitle();
  updateBusy();
  emit modelLoadFinished(true);
}

void MainWindow::modelFailed(const QString& path, const QString& message) {
  statusBar()->clearMessage();  // "Loading…" is over; the banner says why
  updateBusy();
  showProblem(Problem::Model, tr("Could not load the model %1; %2 stays in use.\n%3")
                                  .arg(QDir::toNativeSeparators(path),
                                       model_ ? QString::fromStdString(model_->name) : tr("no model"), message));
  if (model_) modelPicker_->setCurrentModel(modelPath_, *model_, card_);  // the picker shows what is in use
  if (path == fallBackFromModel_) {  // the model of the settings is gone or broken: the shipped one
    fallBackFromModel_.clear();
    loadModel(defaultModelPath());
  } else if (!model_) {
    statusBar()->showMessage(tr("No model loaded: open one (Ctrl+O)"));
  }
  emit modelLoadFinished(false);
}

bool MainWindow::openImage(const QString& path) {
  if (!QFileInfo(path).isFile()) {
    showProblem(Problem::Picture, tr("%1: file not found").arg(QDir::toNativeSeparators(path)));
    return false;
  }
  pictureFiles_->load(path);  // decoded on a worker; the result (or the error) arrives later
  return true;
}

bool MainWindow::pictureLoading() const {
  return pictureFiles_->loading();
}

bool MainWindow::openBenchmark(const QString& path) {
  if (const QString error = timing_->loadJson(path); !error.isEmpty()) {
    showError(error);
    return false;
  }
  recent_->add(path);  // the Roofline has it already (shownResultsChanged)
  tabs_->setCurrentWidget(timing_);
  return true;
}

bool MainWindow::openResultsFolder(const QString& path) {
  selectTab("class");
  if (const QString error = class_->openFolder(path); !error.isEmpty()) {
    showError(error);
    return false;
  }
  return true;
}

void MainWindow::showSubmission(const QString& file, const QString& id, std::shared_ptr<const BenchmarkReport> times,
                                std::shared_ptr<const BenchmarkReport> reference) {
  userKernel_->openKernel(file);
  selectTab("kernel");
  if (!times || times->runs.empty()) {
    statusBar()->showMessage(tr("%1 has no op times (not timed): nothing to add to the Timing tab").arg(id), 8000);
    return;
  }
  // Beside what the Timing tab shows, else beside the course's variants timed with the class.
  auto merged = std::make_shared<BenchmarkReport>(timing_->report() ? *timing_->report()
                                                  : reference       ? *reference
                                                                    : *times);
  mergeRuns(*merged, *times, RunMerge::kReplaceTheVariants);
  timing_->setReport(merged, tr("with %1's submission").arg(id));
}

bool MainWindow::openFile(const QString& path) {
  if (QFileInfo(path).isDir()) return openResultsFolder(path);
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "onnx") {
    loadModel(path);
    return true;
  }
  if (suffix == "json") return openBenchmark(path);
  if (suffix == "cu") {  // a student's kernel (docs/your-kernel.md)
    userKernel_->openKernel(path);
    selectTab("kernel");
    return true;
  }
  return openImage(path);
}

bool MainWindow::selectTestImage(int index) {
  if (!testSet_ && testSetLoading()) {
    pendingTestImage_ = index;
    return true;
  }
  if (!testSet_ || index < 0 || index >= testSet_->count()) {
    showError(testSet_ ? tr("There is no test image #%1 (the test set has %2)").arg(index).arg(testSet_->count())
                       : tr("No test set is loaded"));
    return false;
  }
  input_->showSource(ui::InputPanel::Source::TestSet);
  if (input_->browser()->currentImage() == index) {  // already selected: classify it again
    pictureFiles_->cancel();
    dismissProblem(Problem::Picture);
    ui::InputImage picture;
    input_->testImage(index, &picture);
    inference_->classify(picture);
  } else {
    input_->browser()->selectImage(index);
  }
  return true;
}

bool MainWindow::selectVariant(const QString& id) {
  if (variants_->setCurrentVariant(id)) return true;
  try {
    const ConvVariant& v = findConvVariant(id.toStdString());
    showError(tr("Kernel variant '%1' cannot run here: %2").arg(id, QString::fromStdString(v.unavailableReason())));
  } catch (const std::exception& e) {
    showError(QString::fromStdString(e.what()));
  }
  return false;
}

QStringList MainWindow::tabNames() {
  static const QStringList names = tabNamesOf(standardTabs());
  return names;
}

bool MainWindow::selectTab(const QString& name) {
  const QString wanted = name.toLower();
  for (size_t i = 0; i < options_.tabs.size(); ++i) {
    const TabRow& row = options_.tabs[i];
    if (!row.names.contains(wanted)) continue;
    tabs_->setCurrentWidget(tabViews_[i]);
    if (row.selected) row.selected(tabViews_[i], wanted, tabContext());
    return true;
  }
  return false;
}

TabContext MainWindow::tabContext() {
  return TabContext{this, jobs_};
}

template <class View>
View* MainWindow::requiredView(const char* name) const {
  for (size_t i = 0; i < options_.tabs.size(); ++i)
    if (options_.tabs[i].names.front() == QLatin1String(name))
      if (auto* view = qobject_cast<View*>(tabViews_[i])) return view;
  // A programming error, not a user's: the window's own menus and files need this tab.
  qFatal("MainWindow: the tab list has no tab '%s' of the view the window uses", name);
}

WindowState MainWindow::state() const {
  return WindowState{model_,
                     card_,
                     modelPath_,
                     variants_->currentVariant(),
                     testSet_,
                     classNames(),
                     outcome_,
                     benchmark_,
                     benchmarkName_,
                     timing_->comparison(),
                     timing_->comparisonName()};
}

void MainWindow::notify(Change change) {
  const WindowState now = state();
  for (size_t i = 0; i < options_.tabs.size(); ++i) {
    const auto& listener = options_.tabs[i].listeners[static_cast<int>(change)];
    if (!listener) continue;
    // A view that cannot take the change (a model whose shapes it cannot map) says why in the
    // banner; the others are still told.
    try {
      listener(tabViews_[i], now);
    } catch (const std::exception& e) {
      showError(QString::fromStdString(e.what()));
    }
  }
}

namespace {

// Presentation mode's tab bar: the tabs' side margins a quarter of the style's, so that every tab
// (thirteen, with Class) stays in one bar beside the left column in large letters at 1440x900;
// the tabs' frames still keep the titles apart.
class CompactTabsStyle : public QProxyStyle {
 public:
  using QProxyStyle::QProxyStyle;
  int pixelMetric(PixelMetric metric, const QStyleOption* option, const QWidget* widget) const override {
    const int value = QProxyStyle::pixelMetric(metric, option, widget);
    return metric == PM_TabBarTabHSpace ? value / 4 : value;
  }
};

}  // namespace

void MainWindow::setPresentation(bool on) {
  if (on == presenting_) return;
  presenting_ = on;
  if (options_.fullScreenPresentation) {
    // The projector shows the whole screen: full screen on, and back to the window as it was.
    if (on) {
      stateBeforePresentation_ = windowState() & ~Qt::WindowFullScreen;
      setWindowState(windowState() | Qt::WindowFullScreen);
    } else {
      setWindowState(stateBeforePresentation_);
    }
  }
  ui::setPresentationMode(on);
  presentationAction_->setChecked(on);
  if (on) {
    auto* compact = new CompactTabsStyle(QApplication::style()->name());
    compact->setParent(tabBar_);  // the bar owns it
    tabBar_->setStyle(compact);
  } else {
    QStyle* compact = tabBar_->style();
    tabBar_->setStyle(nullptr);  // the application's style again
    if (compact != QApplication::style() && compact->parent() == tabBar_) delete compact;
  }
  for (size_t i = 0; i < options_.tabs.size(); ++i) {
    const TabRow& row = options_.tabs[i];
    const int index = static_cast<int>(i);
    const QString text = tr(on && row.shortTitle ? row.shortTitle : row.title);
    const QString tip = on && row.shortTitle ? QString(tr(row.title)).replace("&&", "&") : QString();
    tabs_->setTabText(index, text);
    tabs_->setTabToolTip(index, tip);
    tabBar_->setTabText(index, text);
    tabBar_->setTabToolTip(index, tip);
  }
  left_->setMinimumWidth(on ? 400 : 300);  // room for the larger text
  modelPicker_->setCompact(on);            // and for the pictures
  variants_->setCompact(on);
  showLeftColumnFor(tabs_->currentWidget());
}

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  if (left_) showLeftColumnFor(tabs_->currentWidget());
}

void MainWindow::showLeftColumnFor(QWidget* tab) {
  // Model, variant and picture feed some views; on a projector, and on a screen narrower than
  // 1280 pixels (a classroom's 1024x700), the others' charts and the kernel editor need the whole
  // width, so the column makes way there (each row says which it is). The tab bar spans the
  // window above the column, so it never moves when the column comes and goes.
  const auto view = std::find(tabViews_.begin(), tabViews_.end(), tab);
  const bool needed =
      view == tabViews_.end() || options_.tabs[view - tabViews_.begin()].leftColumn == LeftColumn::Needed;
  const bool crowded = presentation() || width() < 1280;
  left_->setVisible(!crowded || needed);
}

bool MainWindow::presentation() const {
  return presenting_;
}

void MainWindow::stepImage(int delta) {
  input_->showSource(ui::InputPanel::Source::TestSet);
  if (delta > 0)
    input_->browser()->selectNext();
  else
    input_->browser()->selectPrevious();
}

void MainWindow::showOutcome(std::shared_ptr<const ui::InferenceOutcome> outcome) {
  dismissProblem(Problem::Inference);
  outcome_ = std::move(outcome);
  notify(Change::Outcome);
  timeLabel_->setText(tr("%1 ms per picture").arg(outcome_->pictureSeconds * 1e3, 0, 'f', 1));
  if (!firstShown_) {
    firstShown_ = true;
    emit firstPredictionShown();
  }
}

void MainWindow::showInferenceFailure(const QString& message) {
  // The old picture's prediction and maps are no answer for the new request: clear them and say
  // why in their place.
  showProblem(Problem::Inference, message);
  const QString reason = message.section('\n', 0, 0);
  maps_->clear(tr("No feature maps: %1").arg(reason));
  prediction_->clear(tr("No prediction"), reason);
  timeLabel_->clear();
}

void MainWindow::showProblem(Problem problem, const QString& message) {
  bannerProblem_ = problem;
  showError(message);
  bannerProblem_ = problem;
}

void MainWindow::dismissProblem(Problem problem) {
  // A success clears the banner only when it reports the same kind of problem: loading a model
  // must not hide why the test set is missing.
  if (bannerProblem_ == problem) banner_->dismiss();
}

void MainWindow::showError(const QString& message) {
  // Once, in the banner across the top of the window, where the class looks anyway: a dialog
  // would stop the demo, and the same text in the status bar again only repeats it.
  bannerProblem_ = Problem::Other;
  lastError_ = message;
  banner_->showError(message);
}

void MainWindow::updateTitle() {
  QString title = "ConvScope";
  if (model_) title += " — " + QString::fromStdString(model_->name);
  setWindowTitle(title);
}

void MainWindow::showShortcuts() {
  QMessageBox::information(
      this, tr("Keyboard shortcuts"),
      tr("<table>"
         "<tr><td>Ctrl+Right, Page Down&nbsp;&nbsp;</td><td>next test image</td></tr>"
         "<tr><td>Ctrl+Left, Page Up</td><td>previous test image</td></tr>"
         "<tr><td>a number, Enter in the # box</td><td>that test image</td></tr>"
         "<tr><td>Ctrl+Down / Ctrl+Up</td><td>next / previous kernel variant</td></tr>"
         "<tr><td>Ctrl+D / Ctrl+T</td><td>draw / browse the test set</td></tr>"
         "<tr><td>Ctrl+Z, Delete</td><td>undo a stroke, clear the drawing</td></tr>"
         "<tr><td>Ctrl+1 … Ctrl+9</td><td>the first nine tabs (all are in the View menu)</td></tr>"
         "<tr><td>F5</td><td>presentation mode, full screen (F5 again: back)</td></tr>"
         "<tr><td>Ctrl+O / Ctrl+I / Ctrl+B</td><td>open a model / an image / a benchmark JSON</td></tr>"
         "<tr><td>Ctrl+E</td><td>export the feature maps</td></tr>"
         "</table>"));
}

void MainWindow::openImageDialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open an image"), {}, tr("Images (*.png *.jpg *.jpeg *.bmp *.pgm *.tif *.tiff);;All files (*)"));
  if (!path.isEmpty()) openImage(path);
}

void MainWindow::openBenchmarkDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open a benchmark"), {}, tr("Benchmark JSON (*.json)"));
  if (!path.isEmpty()) openBenchmark(path);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  for (const QUrl& url : event->mimeData()->urls())
    if (url.isLocalFile()) openFile(url.toLocalFile());
  event->acceptProposedAction();
}

void MainWindow::restoreSettings() {
  if (!options_.useSettings) return;
  const QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  fitToScreen();  // saved on a larger screen
  if (settings.contains("window/columns")) columns_->restoreState(settings.value("window/columns").toByteArray());
  if (settings.contains("window/explore")) explore_->restoreState(settings.value("window/explore").toByteArray());
  variants_->setCurrentVariant(settings.value("variant").toString());  // ignored when unknown or unavailable here
  input_->drawing()->setBrushSize(settings.value("draw/brush", input_->drawing()->brushSize()).toInt());
  maps_->setColourMap(static_cast<ui::ColourMap>(settings.value("maps/colourMap", 0).toInt()));
  timing_->controls()->setBatches(settings.value("timing/batches", timing_->controls()->batchesText()).toString());
  if (settings.contains("timing/variants"))
    timing_->controls()->setCheckedVariants(settings.value("timing/variants").toStringList());
  const QString model = settings.value("model", defaultModelPath()).toString();
  if (model != defaultModelPath()) fallBackFromModel_ = model;
  loadModel(model);
  // Both wait for the test set.
  pendingClassFilter_ = settings.value("input/classFilter", -1).toInt();
  selectTestImage(std::max(0, settings.value("input/testIndex", 0).toInt()));
  tabs_->setCurrentIndex(settings.value("window/tab", 0).toInt());
  // Presentation mode is never restored: a window that opens with huge letters on a laptop the
  // day after a class is a surprise (--presentation or F5 ask for it).
}

void MainWindow::saveSettings() const {
  if (!options_.useSettings) return;
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/columns", columns_->saveState());
  settings.setValue("window/explore", explore_->saveState());
  settings.setValue("window/tab", tabs_->currentIndex());
  settings.setValue("variant", variants_->currentVariant());
  if (!modelPath_.isEmpty()) settings.setValue("model", modelPath_);  // empty: closed before a model arrived
  if (testSet_) {
    settings.setValue("input/testIndex", input_->browser()->currentImage());
    settings.setValue("input/classFilter", input_->browser()->classFilter());
  }
  settings.setValue("draw/brush", input_->drawing()->brushSize());
  settings.setValue("maps/colourMap", static_cast<int>(maps_->colourMap()));
  settings.setValue("timing/batches", timing_->controls()->batchesText());
  settings.setValue("timing/variants", timing_->controls()->checkedVariants());
  settings.remove("presentation");  // older versions restored it
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!userKernel_->confirmClose()) return event->ignore();    // unsaved kernel edits: the student cancelled
  if (!keepOrDiscardUnsavedResults()) return event->ignore();  // unsaved sweep results: kept open
  saveSettings();
  // Neither may keep the window waiting: each stops after its inference in flight, or at once
  // when it is only waiting for its turn on the device.
  if (timing_->sweepRunning()) timing_->cancelSweep();
  if (profile_->profileRunning()) profile_->cancelProfile();
  event->accept();
}

}  // namespace convscope::gui
