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
#include "app/core/engine/picture_input.h"
#include "app/core/util/data_dir.h"
#include "ui/common/error_banner.h"
#include "ui/common/export.h"
#include "ui/common/presentation_mode.h"
#include "ui/common/recent_files.h"
#include "ui/common/shortcut_priority.h"
#include "ui/inference/inference_controller.h"
#include "ui/input/dataset_browser.h"
#include "ui/input/drawing_panel.h"
#include "ui/input/input_panel.h"
#include "ui/input/picture_file.h"
#include "ui/input/picture_file_loader.h"
#include "ui/input/video_player.h"
#include "ui/jobs/job_runner.h"
#include "ui/jobs/model_load_job.h"
#include "ui/jobs/test_set_load_job.h"
#include "ui/model/model_picker.h"
#include "ui/model/preprocessing_dialog.h"
#include "ui/model/variant_selector.h"

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
      video_(new ui::VideoPlayer(this)),
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
  // Nothing lost: a sweep's runs reach a recovery file as they finish, and the next start offers
  // them back (the Timing tab's row).
  recoveryFile_ = options_.recoveryFile;
  if (recoveryFile_.isEmpty() && options_.useSettings)
    recoveryFile_ = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + "/recovery/sweep.json";
  if (!options_.ask)
    options_.ask = [this](const QString& text, QMessageBox::StandardButtons buttons) {
      return QMessageBox::question(this, tr("ConvScope"), text, buttons);
    };
  if (!options_.chooseSavePath)
    options_.chooseSavePath = [this](const QString& suggested) {
      return QFileDialog::getSaveFileName(this, tr("Save the benchmark"), suggested, tr("Benchmark JSON (*.json)"));
    };
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
  // The test set opened last time if it is still there, else the default data folder.
  defaultTestSetFolder_ = QString::fromStdString(defaultDataFolder().string());
  testSetFolder_ = defaultTestSetFolder_;
  if (options_.useSettings)
    if (const QString folder = QSettings().value("testSet/folder").toString();
        !folder.isEmpty() && QDir(folder).exists())
      testSetFolder_ = folder;
  loadTestSet();
  inference_->setVariant(variants_->currentVariant().toStdString());
  notify(Change::Variant);
  restoreSettings();
  if (!modelLoading()) loadModel(defaultModelPath());
  updateBusy();
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

  columns_->addWidget(left);
  columns_->addWidget(tabs_);
  columns_->setStretchFactor(0, 0);
  columns_->setStretchFactor(1, 1);
  columns_->setSizes({360, 1080});

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
  file->addAction(tr("Open &video…"), this, &MainWindow::openVideoDialog);
  file->addAction(tr("Open &camera"), this, [this] { openCamera(0); });
  file->addAction(tr("Open &test set…"), this, &MainWindow::openTestSetDialog);
  // Esc only while a video plays: a disabled action leaves the key to the widgets that want it.
  stopVideoAction_ = file->addAction(tr("&Stop video"), QKeySequence(Qt::Key_Escape), this, &MainWindow::stopVideo);
  stopVideoAction_->setEnabled(false);
  file->addAction(tr("Picture &preprocessing…"), this, &MainWindow::editPreprocessing);
  // The tabs' own entries, in the tabs' order: opening what each shows, exporting what it drew.
  const auto addRowActions = [this, file](FileAction::Kind kind) {
    for (size_t i = 0; i < options_.tabs.size(); ++i)
      for (const FileAction& action : options_.tabs[i].fileActions)
        if (action.kind == kind)
          file->addAction(tr(action.text), action.shortcut, this,
                          [this, i, run = action.run] { run(tabViews_[i], *this); });
  };
  addRowActions(FileAction::Kind::Open);
  QMenu* recent = file->addMenu(tr("&Recent files"));
  connect(recent, &QMenu::aboutToShow, this, [this, recent] { recent_->fillMenu(recent); });
  file->addSeparator();
  addRowActions(FileAction::Kind::Export);
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
    video_->stop();
    pendingTestImage_.reset();
    dismissProblem(Problem::Picture);
    inference_->classify(picture);
    updateTitle();
  });
  connect(input_, &ui::InputPanel::inputCleared, this, [this](const QString& message) {
    pictureFiles_->cancel();
    video_->stop();
    inference_->clearInput();
    outcome_ = nullptr;
    outcomeCleared_ = message;
    outcomeFailure_.clear();
    notify(Change::Outcome);
  });
  connect(inference_, &ui::InferenceController::outcomeReady, this, &MainWindow::showOutcome);
  connect(inference_, &ui::InferenceController::failed, this, &MainWindow::showInferenceFailure);
  // A video's frames are paced by the inference: the next is decoded once this one's outcome is here.
  connect(inference_, &ui::InferenceController::outcomeReady, video_,
          [this](std::shared_ptr<const ui::InferenceOutcome> outcome) {
            video_->frameClassified(outcome->input.description);
          });
  connect(inference_, &ui::InferenceController::failed, video_, &ui::VideoPlayer::stop);
  connect(video_, &ui::VideoPlayer::started, this, [this](const QString& name) {
    input_->browser()->showOutsidePicture(name, true);  // no test image stays highlighted
  });
  connect(video_, &ui::VideoPlayer::frameReady, this, [this](const ui::InputImage& frame) {
    dismissProblem(Problem::Picture);
    inference_->classify(frame);
  });
  connect(video_, &ui::VideoPlayer::statusChanged, this,
          [this](const QString& text) { statusBar()->showMessage(text); });
  connect(video_, &ui::VideoPlayer::finished, this, [this](const QString& text) { statusBar()->showMessage(text); });
  connect(video_, &ui::VideoPlayer::failed, this, [this](const QString& message) {
    statusBar()->clearMessage();  // "Opening…" is over; the banner alone says why
    showProblem(Problem::Picture, message);
  });
  connect(video_, &ui::VideoPlayer::playingChanged, stopVideoAction_, &QAction::setEnabled);
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
  connect(tabs_, &QTabWidget::currentChanged, this, [this](int i) { showLeftColumnFor(tabs_->widget(i)); });
  // The tabs' own connections, to the window and to each other, as their rows declare them.
  for (size_t i = 0; i < options_.tabs.size(); ++i)
    if (options_.tabs[i].links) options_.tabs[i].links(tabViews_[i], *this);
}

void MainWindow::openTestSet(const QString& folder) {
  testSetFolder_ = QFileInfo(folder).absoluteFilePath();
  loadTestSet();
}

void MainWindow::openTestSetDialog() {
  const QString folder = QFileDialog::getExistingDirectory(
      this, tr("Open a test set: a folder of IDX files, or of photos in class subfolders"), testSetFolder_);
  if (!folder.isEmpty()) openTestSet(folder);
}

void MainWindow::loadTestSet() {
  const bool photos = isImageFolder(testSetFolder_.toStdString());
  testSetWaitsForModel_ = photos && !model_;
  if (testSetWaitsForModel_) {  // useModel reads it
    input_->browser()->setUnavailableReason(
        tr("%1 waits for the model to load").arg(QDir::toNativeSeparators(testSetFolder_)));
    return;
  }
  if (!testSet_)
    input_->browser()->setUnavailableReason(tr("loading %1…").arg(QDir::toNativeSeparators(testSetFolder_)));
  if (photos)
    testSetLoader_->load(testSetFolder_, model_, preprocessing(),
                         card_ ? card_->classNames : std::vector<std::string>{});
  else
    testSetLoader_->load(testSetFolder_);
  updateBusy();
}

void MainWindow::useTestSet(std::shared_ptr<const ImageSet> images) {
  testSet_ = std::move(images);
  shownTestSetFolder_ = testSetFolder_;
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

void MainWindow::testSetFailed(const QString& folder, const QString& message) {
  statusBar()->clearMessage();  // "Loading…" is over; the banner says why
  updateBusy();
  const QString& defaultFolder = defaultTestSetFolder_;
  if (testSet_ && folder != shownTestSetFolder_) {  // another test set asked for: the one shown stays
    testSetFolder_ = shownTestSetFolder_;
    showProblem(Problem::TestSet,
                tr("Could not open the test set %1; the test set of %2 stays.\n%3")
                    .arg(QDir::toNativeSeparators(folder), QDir::toNativeSeparators(shownTestSetFolder_), message));
    return;
  }
  if (testSet_ && folder != defaultFolder) {
    // The photos shown could not be read for the model now in use (its classes do not name their
    // subfolders): their labels are another model's, so the default test set takes their place.
    showProblem(Problem::TestSet,
                tr("The test set %1 does not fit the model %2, so the test set is %3 again.\n%4")
                    .arg(QDir::toNativeSeparators(folder), model_ ? QString::fromStdString(model_->name) : tr("in use"),
                         QDir::toNativeSeparators(defaultFolder), message));
    testSetFolder_ = defaultFolder;
    loadTestSet();
    return;
  }
  pendingTestImage_.reset();
  if (folder != defaultFolder)
    showProblem(Problem::TestSet, tr("Could not open the test set %1: %2. Drawing and image files still work.")
                                      .arg(QDir::toNativeSeparators(folder), message));
  else
    showProblem(Problem::TestSet, tr("No test set: %1. Drawing and image files still work; install the Debian package "
                                     "dataset-fashion-mnist or point CONVSCOPE_DATA at a folder of IDX files.")
                                      .arg(message));
  input_->browser()->setUnavailableReason(message);  // stays after the banner goes
}

bool MainWindow::modelLoading() const {
  return modelLoader_->loading();
}

bool MainWindow::testSetLoading() const {
  return testSetLoader_->loading() || testSetWaitsForModel_;
}

void MainWindow::updateBusy() {
  busy_->setVisible(pictureFiles_->loading() || loading());
}

QStringList MainWindow::classNames() const {
  QStringList names;
  // The model card's names of the model's outputs (a pretrained model's), else the test set's.
  const bool cardNames = card_ && !card_->classNames.empty();
  for (const std::string& name : cardNames  ? card_->classNames
                                 : testSet_ ? testSet_->classNames()
                                            : fashionMnistClassNames())
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
  inference_->setModel(model_, preprocessingFor(*model_, card_));  // first: the views are told its rule too
  notify(Change::Model);
  if (isImageFolder(testSetFolder_.toStdString())) loadTestSet();  // its photos as this model sees them
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
    if (testSetWaitsForModel_) {  // photos are read as a model sees them: none will
      testSetWaitsForModel_ = false;
      testSetFailed(testSetFolder_, tr("its photos are read as a model sees them, and no model is loaded"));
    }
  }
  emit modelLoadFinished(false);
}

bool MainWindow::openImage(const QString& path) {
  video_->stop();
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
  return openWithRow(rowOpening("json"), path);
}

bool MainWindow::openResultsFolder(const QString& path) {
  return openWithRow(rowOpening("/"), path);
}

int MainWindow::rowOpening(const QString& suffix) const {
  for (size_t i = 0; i < options_.tabs.size(); ++i)
    if (options_.tabs[i].open && options_.tabs[i].opensSuffixes.contains(suffix)) return static_cast<int>(i);
  return -1;
}

bool MainWindow::openWithRow(int row, const QString& path) {
  if (row < 0) {
    showError(tr("%1: no tab of this window opens it").arg(QDir::toNativeSeparators(path)));
    return false;
  }
  const QString error = options_.tabs[static_cast<size_t>(row)].open(tabViews_[static_cast<size_t>(row)], path, *this);
  if (!error.isEmpty()) showError(error);
  return error.isEmpty();
}

bool MainWindow::openFile(const QString& path) {
  if (QFileInfo(path).isDir()) return openResultsFolder(path);
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "onnx") {
    loadModel(path);
    return true;
  }
  if (const int row = rowOpening(suffix); row >= 0) return openWithRow(row, path);  // .json, .cu
  if (isVideoFile(path)) return openVideo(path);
  return openImage(path);
}

bool MainWindow::isVideoFile(const QString& path) {
  static const QStringList suffixes = {"mp4", "m4v", "mov", "avi", "mkv", "webm", "mpg", "mpeg", "ogv", "wmv", "flv"};
  return suffixes.contains(QFileInfo(path).suffix().toLower());
}

bool MainWindow::openVideo(const QString& path) {
  video_->stop();
  if (!QFileInfo::exists(path)) {  // said at once; what else is wrong with it, once it is opened
    showProblem(Problem::Picture, tr("%1: file not found").arg(QDir::toNativeSeparators(path)));
    return false;
  }
  pictureFiles_->cancel();
  recent_->add(path);
  // Decoded in the model's channels (a colour model sees colour frames), inverted by its rule.
  video_->openFile(path, model_ ? model_->inputChannels() : 1, preprocessing().inversion);
  return true;
}

void MainWindow::openCamera(int index) {
  pictureFiles_->cancel();
  video_->openCamera(index, model_ ? model_->inputChannels() : 1, preprocessing().inversion);
}

void MainWindow::stopVideo() {
  video_->stop();
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
  video_->stop();
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

QWidget* MainWindow::viewNamed(const QString& name) const {
  const QString wanted = name.toLower();
  for (size_t i = 0; i < options_.tabs.size(); ++i)
    if (options_.tabs[i].names.contains(wanted)) return tabViews_[i];
  return nullptr;
}

void MainWindow::showView(QWidget* view) {
  tabs_->setCurrentWidget(view);
}

void MainWindow::showStatus(const QString& text, int milliseconds) {
  statusBar()->showMessage(text, milliseconds);
}

void MainWindow::addRecentFile(const QString& path) {
  recent_->add(path);
}

void MainWindow::setBenchmark(std::shared_ptr<const BenchmarkReport> report, const QString& name,
                              std::shared_ptr<const BenchmarkReport> beside, const QString& besideName) {
  benchmark_ = std::move(report);
  benchmarkName_ = name;
  benchmarkBeside_ = std::move(beside);
  benchmarkBesideName_ = besideName;
  notify(Change::Benchmark);
}

WindowState MainWindow::state() const {
  return WindowState{model_,
                     card_,
                     modelPath_,
                     variants_->currentVariant(),
                     testSet_,
                     classNames(),
                     outcome_,
                     outcomeCleared_,
                     outcomeFailure_,
                     benchmark_,
                     benchmarkName_,
                     benchmarkBeside_,
                     benchmarkBesideName_,
                     preprocessing()};
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
  outcomeCleared_.clear();
  outcomeFailure_.clear();
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
  outcome_ = nullptr;
  outcomeFailure_ = message.section('\n', 0, 0);
  outcomeCleared_.clear();
  notify(Change::Outcome);
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
         "<tr><td>Esc</td><td>stop the video or camera playing</td></tr>"
         "<tr><td>Ctrl+E</td><td>export the feature maps</td></tr>"
         "</table>"));
}

void MainWindow::setPreprocessing(const Preprocessing& rule) {
  if (!model_) return;
  inference_->setModel(model_, rule);
  if (isImageFolder(testSetFolder_.toStdString())) loadTestSet();  // its photos as the model now sees them
  statusBar()->showMessage(tr("Pictures now reach %1 as: %2")
                               .arg(QString::fromStdString(model_->name),
                                    QString::fromStdString(describePreprocessing(rule, model_->inputChannels()))),
                           6000);
}

const Preprocessing& MainWindow::preprocessing() const {
  return inference_->preprocessing();
}

ui::PreprocessingDialog* MainWindow::makePreprocessingDialog() {
  if (!model_) return nullptr;
  return new ui::PreprocessingDialog(preprocessing(), preprocessingFor(*model_, card_), model_->inputChannels(), this);
}

void MainWindow::editPreprocessing() {
  ui::PreprocessingDialog* dialog = makePreprocessingDialog();
  if (!dialog) {
    statusBar()->showMessage(tr("No model is loaded yet"), 4000);
    return;
  }
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, [this, dialog] { setPreprocessing(dialog->preprocessing()); });
  dialog->open();
}

void MainWindow::openImageDialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open an image"), {}, tr("Images (*.png *.jpg *.jpeg *.bmp *.pgm *.tif *.tiff);;All files (*)"));
  if (!path.isEmpty()) openImage(path);
}

void MainWindow::openVideoDialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open a video"), {},
      tr("Videos (*.mp4 *.m4v *.mov *.avi *.mkv *.webm *.mpg *.mpeg *.ogv);;All files (*)"));
  if (!path.isEmpty()) openVideo(path);
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
  variants_->setCurrentVariant(settings.value("variant").toString());  // ignored when unknown or unavailable here
  input_->drawing()->setBrushSize(settings.value("draw/brush", input_->drawing()->brushSize()).toInt());
  for (size_t i = 0; i < options_.tabs.size(); ++i)
    if (options_.tabs[i].restoreSettings) options_.tabs[i].restoreSettings(tabViews_[i], settings);
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
  settings.setValue("window/tab", tabs_->currentIndex());
  settings.setValue("variant", variants_->currentVariant());
  if (!modelPath_.isEmpty()) settings.setValue("model", modelPath_);  // empty: closed before a model arrived
  if (shownTestSetFolder_ == defaultTestSetFolder_ || shownTestSetFolder_.isEmpty())
    settings.remove("testSet/folder");
  else
    settings.setValue("testSet/folder", shownTestSetFolder_);
  if (testSet_) {
    settings.setValue("input/testIndex", input_->browser()->currentImage());
    settings.setValue("input/classFilter", input_->browser()->classFilter());
  }
  settings.setValue("draw/brush", input_->drawing()->brushSize());
  for (size_t i = 0; i < options_.tabs.size(); ++i)
    if (options_.tabs[i].saveSettings) options_.tabs[i].saveSettings(tabViews_[i], settings);
  settings.remove("presentation");  // older versions restored it
}

void MainWindow::closeEvent(QCloseEvent* event) {
  // Unsaved work (a kernel's edits, a sweep's results) the user keeps: the window stays open. The
  // user's own writing is asked about first.
  for (const UnsavedWork asked : {UnsavedWork::kUsersOwnWriting, UnsavedWork::kResults})
    for (size_t i = 0; i < options_.tabs.size(); ++i)
      if (options_.tabs[i].unsavedWork == asked && options_.tabs[i].mayClose &&
          !options_.tabs[i].mayClose(tabViews_[i], *this))
        return event->ignore();
  saveSettings();
  // No long work may keep the window waiting: each stops after its inference in flight, or at
  // once when it is only waiting for its turn on the device.
  for (size_t i = 0; i < options_.tabs.size(); ++i)
    if (options_.tabs[i].closing) options_.tabs[i].closing(tabViews_[i]);
  event->accept();
}

}  // namespace convscope::gui
