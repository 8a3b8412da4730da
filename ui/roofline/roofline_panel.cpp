#include "ui/roofline/roofline_panel.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QTabWidget>
#include <QVBoxLayout>

#include "ui/charts/benchmark_series.h"
#include "ui/charts/speedup_staircase.h"
#include "ui/common/export.h"

namespace convscope::ui {
namespace {

// What a newcomer needs to read the chart, said where they look for it.
const QString kPointHint = QObject::tr(
    "×N beside a point: its op time is N times its floor, the least time this machine allows for that work "
    "(the bytes it must move over the bandwidth, or its FLOPs over the peak, whichever is longer); ×1 would "
    "sit on the roof. Click or point at a point to see what it is.");

}  // namespace

namespace {

// The legend's name of a machine: its device; a CPU's host, since "CPU only" names none.
QString machineName(const BenchmarkReport& report) {
  if (report.device == "CPU only" || report.device.empty())
    return QObject::tr("CPU: %1").arg(QString::fromStdString(report.host.empty() ? "unknown" : report.host));
  return QString::fromStdString(report.device);
}

}  // namespace

RooflinePanel::RooflinePanel(QWidget* parent)
    : QWidget(parent),
      chart_(new RooflineChart(this)),
      staircase_(new SpeedupStaircase(this)),
      layerChoice_(new QComboBox(this)),
      machineChoice_(new QComboBox(this)),
      machines_(new QLabel(this)),
      selection_(new QLabel(this)),
      views_(new QTabWidget(this)) {
  auto* open = new QPushButton(tr("Open benchmark JSONs…"), this);
  open->setToolTip(tr("Add the benchmark files of one or more machines (convscope-cli bench --json)"));
  auto* clearButton = new QPushButton(tr("Clear"), this);
  auto* exportButton = new QPushButton(tr("Export…"), this);
  auto* exportMenu = new QMenu(exportButton);
  exportMenu->addAction(tr("Roofline…"), this, [this] { exportAsked(false); });
  exportMenu->addAction(tr("Speed-up staircase…"), this, [this] { exportAsked(true); });
  exportButton->setMenu(exportMenu);
  machineChoice_->setToolTip(tr("The machine whose course steps the staircase shows"));

  auto* top = new QHBoxLayout;
  top->addWidget(open);
  top->addWidget(clearButton);
  top->addWidget(new QLabel(tr("Layer"), this));
  top->addWidget(layerChoice_);
  top->addWidget(new QLabel(tr("Staircase of"), this));
  top->addWidget(machineChoice_, 1);
  top->addWidget(exportButton);

  machines_->setWordWrap(true);
  selection_->setWordWrap(true);
  selection_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  selection_->setText(kPointHint);

  // Two sub-tabs rather than one above the other: the roofline's legend (a machine's every
  // variant) needs the height on a 1024x700 screen and on a projector.
  views_->addTab(chart_, tr("Roofline"));
  views_->addTab(staircase_, tr("Speed-up staircase"));
  views_->setTabToolTip(0, tr("Every variant's layers under the device's roofs; several machines overlaid"));
  views_->setTabToolTip(1, tr("Each course step's speed-up over the baseline and over the step before"));

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(machines_);
  layout->addWidget(views_, 1);
  layout->addWidget(selection_);

  connect(open, &QPushButton::clicked, this, &RooflinePanel::openAsked);
  connect(clearButton, &QPushButton::clicked, this, &RooflinePanel::clear);
  connect(layerChoice_, &QComboBox::currentIndexChanged, this, [this] {
    chart_->setLayer(layerChoice_->currentData().toInt());
    updateStaircase();
  });
  connect(machineChoice_, &QComboBox::currentIndexChanged, this, &RooflinePanel::updateStaircase);
  connect(chart_, &RooflineChart::pointSelected, this, [this](int, const QString& text) { selection_->setText(text); });
  // What a clicked point is: a line of the roofline's, not of the staircase's.
  connect(views_, &QTabWidget::currentChanged, this, [this](int index) { selection_->setVisible(index == 0); });
  refresh();
}

QString RooflinePanel::addJson(const QString& path) {
  try {
    addReport(std::make_shared<BenchmarkReport>(readBenchmarkJson(path.toStdString())), QFileInfo(path).fileName());
    return {};
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
}

void RooflinePanel::addReport(std::shared_ptr<const BenchmarkReport> report, const QString& origin) {
  if (!report) return;
  for (Source& s : sources_)
    if (s.origin == origin) {
      s.report = std::move(report);
      refresh();
      return;
    }
  sources_.push_back({std::move(report), origin});
  refresh();
}

void RooflinePanel::setTimingResults(std::shared_ptr<const BenchmarkReport> shown, const QString& shownName,
                                     std::shared_ptr<const BenchmarkReport> beside, const QString& besideName) {
  std::erase_if(sources_, [](const Source& s) { return s.fromTimingTab; });
  // The Timing tab's results first: the layer choice and the staircase follow the first source.
  std::vector<Source> timing;
  if (shown) timing.push_back({std::move(shown), shownName, true});
  if (beside) timing.push_back({std::move(beside), besideName, true});
  sources_.insert(sources_.begin(), timing.begin(), timing.end());
  refresh();
}

void RooflinePanel::clear() {
  sources_.clear();
  refresh();
}

void RooflinePanel::refresh() {
  std::vector<RooflineMachine> machines;
  QStringList lines;
  for (const Source& s : sources_) {
    QString label = machineName(*s.report);
    int same = 0;
    for (const Source& other : sources_) same += machineName(*other.report) == label;
    if (same > 1) label += QStringLiteral(" (%1)").arg(s.origin);  // two files of one machine
    machines.push_back({s.report, label});
    const DeviceCeilings ceilings = ceilingsFor(*s.report);
    lines << tr("%1: %2, %3 runs; %4").arg(s.origin, label).arg(s.report->runs.size()).arg(ceilings.source);
  }
  machines_->setText(lines.isEmpty() ? tr("No benchmark open: open one or more JSON files, or a sweep's in the "
                                          "Timing tab.")
                                     : lines.join('\n'));
  {
    const QSignalBlocker blockLayer(layerChoice_);
    const QSignalBlocker blockMachine(machineChoice_);
    const int layer = layerChoice_->currentData().isValid() ? layerChoice_->currentData().toInt() : -1;
    layerChoice_->clear();
    layerChoice_->addItem(tr("every conv layer"), -1);
    if (!sources_.empty())
      for (size_t l = 0; l < convLayersIn(*sources_.front().report).size(); ++l)
        layerChoice_->addItem(convLayerLabel(*sources_.front().report, static_cast<int>(l)), static_cast<int>(l));
    layerChoice_->setCurrentIndex(std::max(0, layerChoice_->findData(layer)));
    const int machine = machineChoice_->currentIndex();
    machineChoice_->clear();
    for (const RooflineMachine& m : machines) machineChoice_->addItem(m.label);
    machineChoice_->setCurrentIndex(machine >= 0 && machine < machineChoice_->count() ? machine : 0);
  }
  chart_->setLayer(layerChoice_->currentData().toInt());
  chart_->setMachines(std::move(machines));
  selection_->setText(kPointHint);
  updateStaircase();
}

void RooflinePanel::updateStaircase() {
  const int machine = machineChoice_->currentIndex();
  if (machine < 0 || static_cast<size_t>(machine) >= sources_.size()) {
    staircase_->setReport(nullptr, {}, kAllConvLayers, 0);
    return;
  }
  const int layer = layerChoice_->currentData().toInt();
  staircase_->setReport(sources_[static_cast<size_t>(machine)].report, machineChoice_->currentText(),
                        layer < 0 ? kAllConvLayers : layer, 0);
}

void RooflinePanel::showStaircase(bool on) {
  views_->setCurrentWidget(on ? static_cast<QWidget*>(staircase_) : chart_);
}

QString RooflinePanel::exportRoofline(const QString& path, int width, int height) {
  return exportPlot(*chart_, path, width, height);
}

QString RooflinePanel::exportStaircase(const QString& path, int width, int height) {
  return exportPlot(*staircase_, path, width, height);
}

void RooflinePanel::openAsked() {
  const QStringList paths = QFileDialog::getOpenFileNames(this, tr("Open benchmarks of one or more machines"), {},
                                                          tr("Benchmark JSON (*.json);;All files (*)"));
  for (const QString& path : paths)
    if (const QString error = addJson(path); !error.isEmpty()) emit errorOccurred(error);
}

void RooflinePanel::exportAsked(bool staircase) {
  const QString path = askExportPath(this, staircase ? "speedup-staircase" : "roofline");
  if (path.isEmpty()) return;
  const QString error = staircase ? exportStaircase(path) : exportRoofline(path);
  if (!error.isEmpty()) emit errorOccurred(error);
}

}  // namespace convscope::ui
