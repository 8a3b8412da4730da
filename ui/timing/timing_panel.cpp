#include "ui/timing/timing_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "ui/charts/benchmark_series.h"
#include "ui/charts/end_to_end_breakdown_chart.h"
#include "ui/charts/timing_bar_chart.h"
#include "ui/charts/timing_line_chart.h"
#include "ui/common/export.h"
#include "ui/jobs/sweep_job.h"
#include "ui/timing/speedup_table.h"
#include "ui/timing/sweep_controls.h"
#include "ui/timing/timing_table.h"

namespace convscope::ui {

TimingPanel::TimingPanel(JobRunner* jobs, QWidget* parent)
    : QWidget(parent),
      sweep_(new SweepJob(jobs, this)),
      controls_(new SweepControls(this)),
      layerChoice_(new QComboBox(this)),
      batchChoice_(new QComboBox(this)),
      logBars_(new QCheckBox(tr("log scale"), this)),
      origin_(new QLabel(this)),
      lineChart_(new TimingLineChart(this)),
      barChart_(new TimingBarChart(this)),
      breakdownChart_(new EndToEndBreakdownChart(this)),
      table_(new TimingTable(this)),
      speedups_(new SpeedupTable(this)),
      lower_(new QTabWidget(this)) {
  auto* open = new QPushButton(tr("Open JSON…"), this);
  auto* openPeer = new QPushButton(tr("Open PyTorch peer…"), this);
  auto* save = new QPushButton(tr("Save JSON…"), this);
  auto* csv = new QPushButton(tr("Export CSV…"), this);
  auto* chart = new QPushButton(tr("Export chart…"), this);
  auto* chartMenu = new QMenu(chart);
  chartMenu->addAction(tr("Op time vs batch size…"), this, [this] { exportAsked(false); });
  chartMenu->addAction(tr("Bars at one batch size…"), this, [this] { exportAsked(true); });
  chartMenu->addAction(tr("Where the end-to-end time goes…"), this, [this] {
    const QString path = askExportPath(this, "end-to-end-breakdown");
    if (path.isEmpty()) return;
    if (const QString error = exportBreakdownChart(path); !error.isEmpty()) emit errorOccurred(error);
  });
  chart->setMenu(chartMenu);
  open->setToolTip(tr("Open a benchmark JSON written by 'convscope-cli bench --json' or saved here"));
  openPeer->setToolTip(
      tr("Open the PyTorch peer of the benchmark shown (pytorch.json of scripts/pytorch_reference.py): its "
         "end-to-end totals beside the variants in the Breakdown, its measured bandwidths for the floor. "
         "A pytorch.json beside the benchmark opens with it."));
  connect(open, &QPushButton::clicked, this, &TimingPanel::openAsked);
  connect(openPeer, &QPushButton::clicked, this, &TimingPanel::openPeerAsked);
  connect(save, &QPushButton::clicked, this, &TimingPanel::saveAsked);
  connect(csv, &QPushButton::clicked, this, &TimingPanel::csvAsked);

  // The side column is as wide as its widest button or label needs at the current font (no
  // fixed width: presentation mode's large text would be clipped), and scrolls where the
  // screen is too short for it rather than pushing over the charts.
  auto* sweepBox = new QGroupBox(tr("Sweep"), this);
  auto* sweepLayout = new QVBoxLayout(sweepBox);
  sweepLayout->addWidget(controls_);
  auto* filesBox = new QGroupBox(tr("Results"), this);
  auto* files = new QVBoxLayout(filesBox);
  for (QPushButton* button : {open, openPeer, save, csv, chart}) files->addWidget(button);
  auto* side = new QWidget;
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(0, 0, 0, 0);
  sideLayout->addWidget(sweepBox, 1);
  sideLayout->addWidget(filesBox);
  sideScroll_ = new QScrollArea(this);
  sideScroll_->setWidget(side);
  sideScroll_->setWidgetResizable(true);
  sideScroll_->setFrameShape(QFrame::NoFrame);
  sideScroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  sideScroll_->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Expanding);

  layerChoice_->setToolTip(tr("Plot one conv layer's op time, or all conv layers summed"));
  batchChoice_->setToolTip(tr("The batch size of the bars, the breakdown and the speed-ups"));
  logBars_->setToolTip(
      tr("Bars on a logarithmic time axis: GPU and CPU variants differ by orders of magnitude. "
         "Until you choose, it is on where the times span more than 100×."));
  origin_->setWordWrap(true);
  resultsChoice_ = new QComboBox(this);
  resultsChoice_->setToolTip(
      tr("Two sets of results are open (another machine's file and a sweep here): which one the Bars, "
         "Breakdown, Speed-ups, Table and Roofline show. The op-time chart draws both."));
  resultsChoice_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  resultsLabel_ = new QLabel(tr("Results"), this);
  auto* choices = new QHBoxLayout;
  choices->addWidget(resultsLabel_);
  choices->addWidget(resultsChoice_);
  choices->addSpacing(12);
  choices->addWidget(new QLabel(tr("Op time of"), this));
  choices->addWidget(layerChoice_);
  choices->addSpacing(12);
  choices->addWidget(new QLabel(tr("at batch"), this));
  choices->addWidget(batchChoice_);
  choices->addStretch(1);

  // One layout whatever is shown (a file, a sweep, a small screen, presentation mode), so nothing
  // moves under a teacher's pointer mid-lesson: four tabs, each chart given the whole height (two
  // charts one above the other squeezed either at 1024x700 or with 14 variants in a legend).
  lower_->addTab(lineChart_, tr("Op time"));
  lower_->addTab(barChart_, tr("Bars"));
  lower_->addTab(breakdownChart_, tr("Breakdown"));
  lower_->addTab(speedups_, tr("Speed-ups"));
  lower_->addTab(table_, tr("Table"));
  lower_->setTabToolTip(0, tr("Op time against batch size, one line per variant"));
  lower_->setTabToolTip(1, tr("The variants side by side at one batch size, per conv layer"));
  lower_->setTabToolTip(2, tr("Where the end-to-end time goes at one batch size (8-bit pictures in pinned memory "
                              "to probabilities in pinned memory): a stacked bar per variant, the PyTorch peer "
                              "beside them, the floor marked"));
  lower_->setTabToolTip(3, tr("How much faster each course step is, over the baseline and over the step before"));
  lower_->setTabToolTip(4, tr("Every run's numbers, with the accuracy"));
  lower_->setCornerWidget(logBars_, Qt::TopRightCorner);           // it changes the bars only
  layerChoice_->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // never cut to "all conv lay"
  batchChoice_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  auto* main = new QWidget(this);
  auto* mainLayout = new QVBoxLayout(main);
  mainLayout->setContentsMargins(0, 0, 0, 0);
  mainLayout->addLayout(choices);
  mainLayout->addWidget(origin_);
  mainLayout->addWidget(lower_, 1);

  auto* layout = new QHBoxLayout(this);
  layout->addWidget(sideScroll_);
  layout->addWidget(main, 1);
  fitSideColumn();

  connect(layerChoice_, &QComboBox::currentIndexChanged, this, [this](int i) {
    lineChart_->setLayer(layerChoice_->itemData(i).toInt());
    updateSpeedups();
  });
  connect(batchChoice_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i < 0) return;
    barChart_->setBatch(batchChoice_->itemData(i).toInt());
    breakdownChart_->setBatch(batchChoice_->itemData(i).toInt());
    updateSpeedups();
  });
  connect(resultsChoice_, &QComboBox::activated, this, [this](int i) {
    if (i == 1) showComparisonInstead();
  });
  connect(logBars_, &QCheckBox::toggled, barChart_, &TimingBarChart::setLogarithmic);
  // The box changes the bars only: shown on their tab, not ticked where it does nothing.
  logBars_->setVisible(false);
  connect(lower_, &QTabWidget::currentChanged, this,
          [this](int) { logBars_->setVisible(lower_->currentWidget() == barChart_); });
  // The chart's automatic choice shows in the box, without becoming the user's choice.
  connect(barChart_, &TimingBarChart::scaleChanged, this, [this](bool logarithmic) {
    const QSignalBlocker quiet(logBars_);
    logBars_->setChecked(logarithmic);
  });
  connect(controls_, &SweepControls::runClicked, this, &TimingPanel::startSweep);
  connect(controls_, &SweepControls::cancelClicked, this, &TimingPanel::cancelSweep);
  connect(sweep_, &SweepJob::progressed, controls_, &SweepControls::setProgress);
  connect(sweep_, &SweepJob::finished, this, &TimingPanel::sweepFinished);
  connect(sweep_, &SweepJob::failed, this, [this](const QString& message) {
    controls_->setRunning(false);
    controls_->setProgress(0, tr("Failed"));
    emit errorOccurred(tr("Benchmark: %1").arg(message));
  });
  setReport(nullptr, {});
}

void TimingPanel::fitSideColumn() {
  // Wide enough for every variant's name where the panel has the room (three tenths of it at
  // most: the charts come first), never narrower than its buttons and labels need; a vertical
  // scroll bar's room on top.
  QWidget* side = sideScroll_->widget();
  const int bar = style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, sideScroll_) + 2;
  const int least = side->minimumSizeHint().width() + bar;
  const int frame = side->minimumSizeHint().width() - controls_->minimumSizeHint().width();
  const int wanted = controls_->namesWidth() + frame + bar;
  sideScroll_->setFixedWidth(std::max(least, std::min(wanted, width() * 3 / 10)));
}

void TimingPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) {
    fitSideColumn();
  }
}

void TimingPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitSideColumn();
}

void TimingPanel::setReport(std::shared_ptr<const BenchmarkReport> report, const QString& origin) {
  showReport(std::move(report), origin, -1);
}

void TimingPanel::showReport(std::shared_ptr<const BenchmarkReport> report, const QString& origin,
                             int firstCancelledRun) {
  report_ = std::move(report);
  originName_ = origin;
  lineChart_->setReport(report_);
  barChart_->setReport(report_);
  // A peer of another device is no peer of these results.
  if (peer_ && report_ && peer_->device != report_->device) setPeer(nullptr, {});
  breakdownChart_->setReport(report_);
  breakdownChart_->setBatch(barChart_->batch());
  table_->setReport(report_.get(), firstCancelledRun);
  fillChoices();
  fillResultsChoice();
  updateSpeedups();
  updateOrigin();
  emit shownResultsChanged(report_, originName_);
}

void TimingPanel::fillResultsChoice() {
  const QSignalBlocker quiet(resultsChoice_);
  resultsChoice_->clear();
  const bool two = report_ && comparison_;
  resultsLabel_->setVisible(two);
  resultsChoice_->setVisible(two);
  if (!two) return;
  resultsChoice_->addItem(tr("%1 · %2").arg(originName_, QString::fromStdString(report_->device)));
  resultsChoice_->addItem(tr("%1 · %2").arg(comparisonName_, QString::fromStdString(comparison_->device)));
  resultsChoice_->setCurrentIndex(0);
}

void TimingPanel::moveShownBeside() {
  comparison_ = report_;
  comparisonName_ = originName_;
  comparisonPeer_ = peer_;
  comparisonPeerName_ = peerName_;
  comparisonUnsaved_ = unsaved_;
  unsaved_ = false;
}

void TimingPanel::clearComparison() {
  comparison_.reset();
  comparisonName_.clear();
  comparisonPeer_.reset();
  comparisonPeerName_.clear();
  comparisonUnsaved_ = false;
}

void TimingPanel::showComparisonInstead() {
  if (!comparison_ || !report_) return;
  std::swap(report_, comparison_);
  std::swap(originName_, comparisonName_);
  std::swap(peer_, comparisonPeer_);
  std::swap(peerName_, comparisonPeerName_);
  std::swap(unsaved_, comparisonUnsaved_);
  lineChart_->setComparison(comparison_, comparisonName_);
  breakdownChart_->setPeer(peer_);
  showReport(report_, originName_, -1);
  emit statusMessage(tr("Showing %1; %2 stays beside it in the op-time chart").arg(originName_, comparisonName_));
}

void TimingPanel::updateOrigin() {
  if (!report_) {
    origin_->setText(tr("No results yet: run a sweep, or open a benchmark JSON."));
    return;
  }
  QString text = tr("%1 · %2 · %3 runs, %4 repetitions each · %5")
                     .arg(originName_, QString::fromStdString(report_->device))
                     .arg(report_->runs.size())
                     .arg(report_->repeats)
                     .arg(QString::fromStdString(report_->date));
  if (comparison_)
    text += tr("; beside it (hollow markers) %1 · %2, in the op-time chart only: the other views show the "
               "first (choose with \"Results\")")
                .arg(comparisonName_, QString::fromStdString(comparison_->device));
  if (peer_) text += tr("; PyTorch peer %1").arg(peerName_);
  if (unsaved_) text += tr(" · not saved yet");
  if (comparisonUnsaved_) text += tr(" · the sweep beside it is not saved yet");
  origin_->setText(text);
}

void TimingPanel::setRecoveryFile(const QString& path) {
  recoveryFile_ = path;
  sweep_->setRecoveryFile(path);
}

std::shared_ptr<const BenchmarkReport> TimingPanel::readRecoveryFile(const QString& path) {
  if (path.isEmpty() || !QFileInfo::exists(path)) return nullptr;
  try {
    auto report = std::make_shared<BenchmarkReport>(readBenchmarkJson(path.toStdString()));
    return report->runs.empty() ? nullptr : report;
  } catch (const std::exception&) {
    return nullptr;  // half a file from a crash is no result to offer
  }
}

void TimingPanel::showRecovered(std::shared_ptr<const BenchmarkReport> report) {
  clearComparison();
  lineChart_->setComparison(nullptr, {});
  unsaved_ = true;
  showReport(std::move(report), tr("Recovered sweep"), -1);
  emit statusMessage(tr("The unsaved sweep is back: save it (Save JSON…) to keep it"));
}

void TimingPanel::discardUnsavedResults() {
  unsaved_ = false;
  comparisonUnsaved_ = false;
  if (!recoveryFile_.isEmpty()) QFile::remove(recoveryFile_);
  updateOrigin();
}

QString TimingPanel::originText() const {
  return origin_->text();
}

void TimingPanel::updateSpeedups() {
  speedups_->setReport(report_.get(), lineChart_->layer(), barChart_->batch());
}

void TimingPanel::fillChoices() {
  const QSignalBlocker layerBlocker(layerChoice_);
  const QSignalBlocker batchBlocker(batchChoice_);
  const int layer = lineChart_->layer();
  layerChoice_->clear();
  layerChoice_->addItem(tr("all conv layers (sum)"), kAllConvLayers);
  if (report_)
    for (size_t l = 0; l < convLayersIn(*report_).size(); ++l)
      layerChoice_->addItem(convLayerLabel(*report_, static_cast<int>(l)), static_cast<int>(l));
  layerChoice_->setCurrentIndex(std::max(0, layerChoice_->findData(layer)));
  batchChoice_->clear();
  if (report_)
    for (int batch : batchesIn(*report_)) batchChoice_->addItem(QString::number(batch), batch);
  batchChoice_->setCurrentIndex(std::max(0, batchChoice_->findData(barChart_->batch())));
}

QString TimingPanel::loadJson(const QString& path) {
  try {
    auto report = std::make_shared<BenchmarkReport>(readBenchmarkJson(path.toStdString()));
    const QString name = QFileInfo(path).fileName();
    // An unsaved sweep is not thrown away by opening a file: it stays in the chart beside it,
    // one choice away.
    if (unsaved_ && report_)
      moveShownBeside();
    else if (!comparisonUnsaved_)
      clearComparison();
    lineChart_->setComparison(comparison_, comparisonName_);
    setPeer(nullptr, {});
    setReport(std::move(report), name);
    if (!sweep_->running()) controls_->setProgress(0, tr("Showing %1 (opened file)").arg(name));
    // scripts/device.sh writes the PyTorch peer beside the benchmark: it comes with it.
    const QString beside = QFileInfo(path).dir().filePath("pytorch.json");
    if (QFileInfo(path).fileName() != "pytorch.json" && QFileInfo::exists(beside)) {
      if (const QString error = loadPeerJson(beside); !error.isEmpty()) {
        emit statusMessage(tr("Opened %1; the pytorch.json beside it is not used: %2").arg(path, error));
        return {};
      }
      emit statusMessage(tr("Opened %1 with the PyTorch peer beside it").arg(path));
      return {};
    }
    emit statusMessage(tr("Opened %1").arg(path));
    return {};
  } catch (const std::exception& e) {
    // A PyTorch peer file is no benchmark, but the user meant something by opening it.
    try {
      readPeerTimings(path.toStdString());
      return tr("%1 is a PyTorch peer file, not a benchmark: open the benchmark, then this with "
                "\"Open PyTorch peer…\"")
          .arg(path);
    } catch (const std::exception&) {
      return QString::fromStdString(e.what());
    }
  }
}

QString TimingPanel::loadPeerJson(const QString& path) {
  try {
    auto peer = std::make_shared<PeerTimings>(readPeerTimings(path.toStdString()));
    if (report_ && peer->device != report_->device)
      return tr("%1 was measured on '%2' and the benchmark shown on '%3': the peer must come from the same device")
          .arg(path, QString::fromStdString(peer->device), QString::fromStdString(report_->device));
    setPeer(std::move(peer), QFileInfo(path).fileName());
    return {};
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
}

void TimingPanel::setPeer(std::shared_ptr<const PeerTimings> peer, const QString& name) {
  peer_ = std::move(peer);
  peerName_ = name;
  breakdownChart_->setPeer(peer_);
  updateOrigin();
}

QString TimingPanel::saveJson(const QString& path) {
  if (!report_) return tr("There are no results to save yet");
  try {
    writeBenchmarkJson(*report_, path.toStdString());
    if (unsaved_) discardUnsavedResults();  // saved: the safety copy has served
    return {};
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
}

QString TimingPanel::exportCsv(const QString& path) const {
  if (!report_) return tr("There are no results to export yet");
  try {
    writeBenchmarkCsv(*report_, path.toStdString());
    return {};
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
}

QString TimingPanel::exportLineChart(const QString& path, int width, int height) {
  return exportPlot(*lineChart_, path, width, height);
}

QString TimingPanel::exportBarChart(const QString& path, int width, int height) {
  return exportPlot(*barChart_, path, width, height);
}

QString TimingPanel::exportBreakdownChart(const QString& path, int width, int height) {
  return exportPlot(*breakdownChart_, path, width, height);
}

bool TimingPanel::sweepRunning() const {
  return sweep_->running();
}

bool TimingPanel::startSweep() {
  if (sweep_->running()) return false;
  BenchmarkOptions options;
  options.endToEnd = false;  // the charts plot op times; a CPU sweep would take twice as long
  QString error;
  if (!controls_->options(&options, &error)) {
    emit errorOccurred(error);
    return false;
  }
  if (modelPath_.isEmpty()) {
    emit errorOccurred(tr("Load a model before running a sweep"));
    return false;
  }
  if (!images_ || images_->count() == 0) {
    emit errorOccurred(tr("The sweep times the first N test images, and no test set is loaded"));
    return false;
  }
  options.model = modelPath_.toStdString();
  controls_->setRunning(true);
  controls_->setProgress(0, tr("Starting…"));
  sweep_->start(options, images_);
  return true;
}

void TimingPanel::cancelSweep() {
  sweep_->cancel();
  controls_->setProgress(-1, tr("Cancelling after the inference in flight…"));
}

void TimingPanel::sweepFinished(std::shared_ptr<const BenchmarkReport> report, bool cancelled) {
  controls_->setRunning(false);
  const int runs = report ? static_cast<int>(report->runs.size()) : 0;
  // Whoever took turns on the device between this sweep's repetitions (see JobRunner).
  QString turns;
  if (const QStringList others = sweep_->busyWith(); !others.isEmpty())
    turns = tr(" (%1 took turns on the device between repetitions)").arg(others.join(tr(" and ")));
  const auto finish = [&](int percent, const QString& message) { controls_->setProgress(percent, message + turns); };
  if (!cancelled) {
    if (runs > 0) {
      int added = 0;
      auto merged = report_ ? mergedWithShown(*report, &added, true) : nullptr;
      if (merged) {
        // Results of the same model on this device: the new runs join them (newer wins).
        showReport(std::move(merged), tr("%1 + sweep").arg(originName_), -1);
      } else {
        // Another machine's (or model's) results are never replaced without a word: they stay
        // beside the sweep's lines, with their peer, and one choice brings them back.
        if (report_) moveShownBeside();
        lineChart_->setComparison(comparison_, comparisonName_);
        unsaved_ = true;
        setReport(std::move(report), tr("Sweep"));
      }
      unsaved_ = true;
      updateOrigin();
      if (!recoveryFile_.isEmpty()) {  // the whole of what is shown, not only the sweep's runs
        try {
          writeBenchmarkJson(*report_, (recoveryFile_ + ".partial").toStdString());
          QFile::remove(recoveryFile_);
          QFile::rename(recoveryFile_ + ".partial", recoveryFile_);
        } catch (const std::exception&) {
        }
      }
    }
    finish(100, tr("Done: %n run(s)", "", runs));
    emit statusMessage(tr("Sweep finished"));
    return;
  }
  emit statusMessage(tr("Sweep cancelled"));
  if (runs == 0) {
    finish(0, report_ ? tr("Cancelled before a run finished; the results shown before stay")
                      : tr("Cancelled before a run finished"));
    return;
  }
  if (!report_) {
    showReport(std::move(report), tr("Sweep (cancelled, partial)"), 0);
    finish(0, tr("Cancelled; the %n run(s) that finished are shown", "", runs));
    return;
  }
  // Results were shown before (a finished sweep, a file): they stay, and the runs the cancelled
  // sweep finished join them where they fit, marked in the table.
  int added = 0;
  if (auto merged = mergedWithShown(*report, &added)) {
    const int firstNew = static_cast<int>(merged->runs.size()) - added;
    const QString origin = tr("%1 + %n run(s) of a cancelled sweep (marked in the table)", "", added).arg(originName_);
    showReport(std::move(merged), origin, added > 0 ? firstNew : -1);
    originName_ = origin;
    finish(0, tr("Cancelled; the results shown before stay, with the %n new run(s) that finished", "", added));
  } else {
    finish(0, tr("Cancelled; its %n run(s) measured another model or device than the results "
                 "shown, which stay",
                 "", runs));
  }
}

std::shared_ptr<const BenchmarkReport> TimingPanel::mergedWithShown(const BenchmarkReport& cancelled, int* added,
                                                                    bool newerWins) const {
  *added = 0;
  if (!report_ || cancelled.model != report_->model || cancelled.device != report_->device ||
      convLayersIn(cancelled) != convLayersIn(*report_))
    return nullptr;
  auto merged = std::make_shared<BenchmarkReport>(*report_);
  // A finished sweep's measurement is the newer one; a complete earlier measurement wins over a
  // cancelled sweep's.
  *added = mergeRuns(*merged, cancelled, newerWins ? RunMerge::kNewerPerBatch : RunMerge::kShownPerBatch);
  return merged;
}

void TimingPanel::openAsked() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open a benchmark"), {}, tr("Benchmark JSON (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  if (const QString error = loadJson(path); !error.isEmpty()) emit errorOccurred(error);
}

void TimingPanel::openPeerAsked() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open the PyTorch peer"), {},
                                                    tr("PyTorch peer JSON (pytorch.json *.json);;All files (*)"));
  if (path.isEmpty()) return;
  if (const QString error = loadPeerJson(path); !error.isEmpty()) emit errorOccurred(error);
}

void TimingPanel::saveAsked() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save the benchmark"), "bench.json", tr("Benchmark JSON (*.json)"));
  if (path.isEmpty()) return;
  if (const QString error = saveJson(path); !error.isEmpty()) emit errorOccurred(error);
}

void TimingPanel::csvAsked() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export CSV"), "bench.csv", tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  if (const QString error = exportCsv(path); !error.isEmpty()) emit errorOccurred(error);
}

void TimingPanel::exportAsked(bool bars) {
  const QString path = askExportPath(this, bars ? "op-time-bars" : "op-time-vs-batch");
  if (path.isEmpty()) return;
  const QString error = bars ? exportBarChart(path) : exportLineChart(path);
  if (!error.isEmpty()) emit errorOccurred(error);
}

}  // namespace convscope::ui
