#include "ui/timing/timing_panel.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/charts/benchmark_series.h"
#include "ui/charts/timing_bar_chart.h"
#include "ui/charts/timing_line_chart.h"
#include "ui/common/export.h"
#include "ui/inference/benchmark_worker.h"
#include "ui/timing/sweep_controls.h"
#include "ui/timing/timing_table.h"

namespace convscope::ui {

TimingPanel::TimingPanel(QWidget* parent)
    : QWidget(parent),
      worker_(new BenchmarkWorker(this)),
      controls_(new SweepControls(this)),
      layerChoice_(new QComboBox(this)),
      batchChoice_(new QComboBox(this)),
      origin_(new QLabel(this)),
      lineChart_(new TimingLineChart(this)),
      barChart_(new TimingBarChart(this)),
      table_(new TimingTable(this)) {
  auto* open = new QPushButton(tr("Open JSON…"), this);
  auto* save = new QPushButton(tr("Save JSON…"), this);
  auto* csv = new QPushButton(tr("Export CSV…"), this);
  auto* chart = new QToolButton(this);
  chart->setText(tr("Export chart…"));
  chart->setPopupMode(QToolButton::InstantPopup);
  chart->setToolButtonStyle(Qt::ToolButtonTextOnly);
  chart->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
  auto* chartMenu = new QMenu(chart);
  chartMenu->addAction(tr("Op time vs batch size…"), this, [this] { exportAsked(false); });
  chartMenu->addAction(tr("Bars at one batch size…"), this, [this] { exportAsked(true); });
  chart->setMenu(chartMenu);
  open->setToolTip(tr("Open a benchmark JSON written by 'convscope-cli bench --json' or saved here"));
  connect(open, &QPushButton::clicked, this, &TimingPanel::openAsked);
  connect(save, &QPushButton::clicked, this, &TimingPanel::saveAsked);
  connect(csv, &QPushButton::clicked, this, &TimingPanel::csvAsked);

  auto* sweepBox = new QGroupBox(tr("Sweep"), this);
  auto* sweepLayout = new QVBoxLayout(sweepBox);
  sweepLayout->addWidget(controls_);
  auto* filesBox = new QGroupBox(tr("Results"), this);
  auto* files = new QGridLayout(filesBox);
  files->addWidget(open, 0, 0);
  files->addWidget(save, 0, 1);
  files->addWidget(csv, 1, 0);
  files->addWidget(chart, 1, 1);
  auto* side = new QWidget(this);
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(0, 0, 0, 0);
  sideLayout->addWidget(sweepBox, 1);
  sideLayout->addWidget(filesBox);
  side->setMaximumWidth(290);

  layerChoice_->setToolTip(tr("Plot one conv layer's op time, or all conv layers summed"));
  batchChoice_->setToolTip(tr("The batch size of the bar chart"));
  origin_->setWordWrap(true);
  origin_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // never widens the window
  auto* choices = new QHBoxLayout;
  choices->addWidget(new QLabel(tr("Op time of"), this));
  choices->addWidget(layerChoice_);
  choices->addSpacing(16);
  choices->addWidget(new QLabel(tr("Bars at batch"), this));
  choices->addWidget(batchChoice_);
  choices->addSpacing(16);
  choices->addWidget(origin_, 1);

  // Op time against batch size on top; under it, the bars at one batch size or the table.
  auto* lower = new QTabWidget(this);
  lower->addTab(barChart_, tr("Bars at one batch size"));
  lower->addTab(table_, tr("Table with accuracy"));
  auto* charts = new QSplitter(Qt::Vertical, this);
  charts->addWidget(lineChart_);
  charts->addWidget(lower);
  charts->setStretchFactor(0, 1);
  charts->setStretchFactor(1, 1);
  auto* main = new QWidget(this);
  auto* mainLayout = new QVBoxLayout(main);
  mainLayout->setContentsMargins(0, 0, 0, 0);
  mainLayout->addLayout(choices);
  mainLayout->addWidget(charts, 1);

  auto* layout = new QHBoxLayout(this);
  layout->addWidget(side);
  layout->addWidget(main, 1);

  connect(layerChoice_, &QComboBox::currentIndexChanged, this,
          [this](int i) { lineChart_->setLayer(layerChoice_->itemData(i).toInt()); });
  connect(batchChoice_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i >= 0) barChart_->setBatch(batchChoice_->itemData(i).toInt());
  });
  connect(controls_, &SweepControls::runClicked, this, &TimingPanel::startSweep);
  connect(controls_, &SweepControls::cancelClicked, this, &TimingPanel::cancelSweep);
  connect(worker_, &BenchmarkWorker::progressed, controls_, &SweepControls::setProgress);
  connect(worker_, &BenchmarkWorker::finished, this, &TimingPanel::sweepFinished);
  connect(worker_, &BenchmarkWorker::failed, this, [this](const QString& message) {
    controls_->setRunning(false);
    controls_->setProgress(0, tr("Failed"));
    emit errorOccurred(tr("Benchmark: %1").arg(message));
  });
  setReport(nullptr, {});
}

void TimingPanel::setReport(std::shared_ptr<const BenchmarkReport> report, const QString& origin) {
  report_ = std::move(report);
  lineChart_->setReport(report_);
  barChart_->setReport(report_);
  table_->setReport(report_.get());
  fillChoices();
  if (!report_)
    origin_->setText(tr("No results yet: run a sweep, or open a benchmark JSON."));
  else
    origin_->setText(tr("%1 · %2 · %3 runs, %4 repetitions each · %5")
                         .arg(origin, QString::fromStdString(report_->device))
                         .arg(report_->runs.size())
                         .arg(report_->repeats)
                         .arg(QString::fromStdString(report_->date)));
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
    setReport(std::move(report), QFileInfo(path).fileName());
    emit statusMessage(tr("Opened %1").arg(path));
    return {};
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
}

QString TimingPanel::saveJson(const QString& path) const {
  if (!report_) return tr("There are no results to save yet");
  try {
    writeBenchmarkJson(*report_, path.toStdString());
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

bool TimingPanel::sweepRunning() const {
  return worker_->running();
}

bool TimingPanel::startSweep() {
  if (worker_->running()) return false;
  BenchmarkOptions options;
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
  worker_->start(options, images_);
  return true;
}

void TimingPanel::cancelSweep() {
  worker_->cancel();
  controls_->setProgress(-1, tr("Cancelling after the inference in flight…"));
}

void TimingPanel::sweepFinished(std::shared_ptr<const BenchmarkReport> report, bool cancelled) {
  controls_->setRunning(false);
  if (report && !report->runs.empty())
    setReport(std::move(report), cancelled ? tr("Sweep (cancelled, partial)") : tr("Sweep"));
  QString done = cancelled ? tr("Cancelled; the runs that finished are shown") : tr("Done");
  if (const QStringList others = worker_->busyWith(); !others.isEmpty())  // see DeviceUseCoordinator
    done += tr(" (%1 took turns on the device between repetitions)").arg(others.join(tr(" and ")));
  controls_->setProgress(cancelled ? 0 : 100, done);
  emit statusMessage(cancelled ? tr("Sweep cancelled") : tr("Sweep finished"));
}

void TimingPanel::openAsked() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open a benchmark"), {}, tr("Benchmark JSON (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  if (const QString error = loadJson(path); !error.isEmpty()) emit errorOccurred(error);
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
