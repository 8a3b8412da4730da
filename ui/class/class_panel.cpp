#include "ui/class/class_panel.h"

#include <QColor>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "ui/charts/benchmark_series.h"
#include "ui/charts/class_distribution_chart.h"
#include "ui/class/class_grading_run.h"
#include "ui/common/error_banner.h"
#include "ui/common/export.h"

namespace convscope::ui {

namespace {

using nlohmann::json;

// A cell that shows a number as text and sorts by its value; an empty cell sorts after every number.
class NumberItem : public QTableWidgetItem {
 public:
  NumberItem(const json& value, const QString& text) : QTableWidgetItem(text) {
    if (value.is_number()) number_ = value.get<double>();
    setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  bool operator<(const QTableWidgetItem& other) const override {
    const auto* that = dynamic_cast<const NumberItem*>(&other);
    if (!that) return QTableWidgetItem::operator<(other);
    if (!number_ || !that->number_) return number_.has_value() && !that->number_.has_value();
    return *number_ < *that->number_;
  }

 private:
  std::optional<double> number_;
};

QString numberText(const json& value, int digits) {
  return value.is_number() ? QString::number(value.get<double>(), 'g', digits) : QString();
}

QString millisecondsText(const json& value) {
  return value.is_number() ? QString::number(value.get<double>() * 1e3, 'g', 4) : QString();
}

QString noReferenceReason(const LeaderboardGroup& group) {
  if (group.gpu.empty())
    return QObject::tr(
        "no reference lines: graded without a GPU, so neither the class nor the course's variants "
        "were timed");
  return QObject::tr("no reference lines: the course's variants were not timed on this GPU in this results folder");
}

// A status's colour in the table: mid tones, readable on the light background and on
// presentation mode's black one (its style sheet, not the palette, makes that one dark): correct
// green, flagged amber, not run gray, every failure red.
QColor statusColour(const QString& status) {
  if (status == kGradePassed) return QColor(40, 165, 40);
  if (status == kGradeFlagged) return QColor(215, 130, 0);
  if (status == kGradeNoGpu || status == kGradeNoCompiler) return QColor(128, 128, 128);
  return QColor(225, 45, 35);
}

// One GPU's page: its summary line, the distribution over the ranking table.
class GroupPage : public QWidget {
 public:
  GroupPage() : summary(new QLabel(this)), chart(new ClassDistributionChart(this)), table(new QTableWidget(this)) {
    summary->setWordWrap(true);
    QFont bold = summary->font();
    bold.setBold(true);
    summary->setFont(bold);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(chart);
    split->addWidget(table);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(summary);
    layout->addWidget(split, 1);
  }
  QLabel* summary;
  ClassDistributionChart* chart;
  QTableWidget* table;
};

}  // namespace

ClassPanel::ClassPanel(QWidget* parent)
    : QWidget(parent),
      banner_(new ErrorBanner(this)),
      folderLabel_(new QLabel(tr("No results folder open"), this)),
      emptyNote_(new QLabel(this)),
      exportCsv_(new QPushButton(tr("Export table (CSV)…"), this)),
      exportChart_(new QPushButton(tr("Export chart…"), this)),
      groups_(new QTabWidget(this)),
      grade_(new QPushButton(tr("Grade a folder…"), this)),
      cancelGrading_(new QPushButton(tr("Cancel grading"), this)),
      gradingProgress_(new QProgressBar(this)),
      gradingStatus_(new QLabel(this)),
      grading_(new ClassGradingRun(this)),
      gradingSettings_(ClassGradingRun::defaultSettings()),
      watcher_(new QFileSystemWatcher(this)),
      debounce_(new QTimer(this)) {
  auto* open = new QPushButton(tr("Open results folder…"), this);
  open->setToolTip(tr("A folder written by convscope-cli grade --out (docs/class-mode.md)"));
  connect(open, &QPushButton::clicked, this, &ClassPanel::openFolderDialog);
  connect(exportCsv_, &QPushButton::clicked, this, &ClassPanel::exportCsvAsked);
  connect(exportChart_, &QPushButton::clicked, this, &ClassPanel::exportChartAsked);
  exportCsv_->setEnabled(false);
  exportChart_->setEnabled(false);
  folderLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  folderLabel_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

  grade_->setToolTip(
      tr("Grade a folder of students' kernels here, as convscope-cli grade does: each is compiled, checked, "
         "run on the test set and timed; the results go to the folder beside it named FOLDER-results"));
  connect(grade_, &QPushButton::clicked, this, &ClassPanel::gradeFolderDialog);
  connect(cancelGrading_, &QPushButton::clicked, this, &ClassPanel::cancelGrading);
  cancelGrading_->setVisible(false);
  gradingProgress_->setVisible(false);
  gradingProgress_->setFormat(tr("%v of %m submissions"));
  gradingProgress_->setMinimumWidth(gradingProgress_->fontMetrics().horizontalAdvance(tr("1000 of 1000 submissions")) +
                                    40);
  gradingStatus_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  gradingStatus_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  connect(grading_, &ClassGradingRun::progressed, this, [this](int done, int submissions) {
    gradingProgress_->setMaximum(std::max(1, submissions));
    gradingProgress_->setValue(done);
  });
  connect(grading_, &ClassGradingRun::said, this, [this](const QString& line) { gradingStatus_->setText(line); });
  connect(grading_, &ClassGradingRun::finished, this, [this](const QString& error, bool stopped) {
    grade_->setEnabled(true);
    cancelGrading_->setVisible(false);
    gradingProgress_->setVisible(false);
    reload();
    if (!error.isEmpty()) {
      gradingStatus_->setText(tr("Grading failed: %1").arg(error));
      banner_->showError(tr("Grading failed: %1").arg(error));
    } else {
      gradingStatus_->setText(stopped ? tr("Grading stopped: the finished results are kept and ranked")
                                      : tr("Graded: %1").arg(QDir::toNativeSeparators(folder_)));
    }
    emit gradingFinished();
  });

  // The grading's row: shown from a grading's start, its last line kept after its end.
  auto* gradingRow = new QWidget(this);
  auto* gradingBar = new QHBoxLayout(gradingRow);
  gradingBar->setContentsMargins(0, 0, 0, 0);
  gradingBar->addWidget(cancelGrading_);
  gradingBar->addWidget(gradingProgress_);
  gradingBar->addWidget(gradingStatus_, 1);
  gradingRow->setVisible(false);
  gradingRow_ = gradingRow;

  auto* bar = new QHBoxLayout;
  bar->addWidget(open);
  bar->addWidget(grade_);
  bar->addWidget(folderLabel_, 1);
  bar->addWidget(exportCsv_);
  bar->addWidget(exportChart_);

  emptyNote_->setWordWrap(true);
  emptyNote_->setText(
      tr("Grade a folder of students' kernels here (Grade a folder…), or open the results folder of "
         "convscope-cli grade (File ▸ Open class results folder…), to see the class's ranking. It refreshes "
         "while grading runs."));
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(gradingRow);
  layout->addWidget(banner_);
  layout->addWidget(emptyNote_);
  layout->addWidget(groups_, 1);
  groups_->setVisible(false);

  // Grading writes one result after another: gather a burst of changes into one re-read.
  debounce_->setSingleShot(true);
  debounce_->setInterval(300);
  connect(debounce_, &QTimer::timeout, this, &ClassPanel::reload);
  connect(watcher_, &QFileSystemWatcher::directoryChanged, debounce_, qOverload<>(&QTimer::start));
  connect(watcher_, &QFileSystemWatcher::fileChanged, debounce_, qOverload<>(&QTimer::start));
}

QString ClassPanel::openFolder(const QString& folder) {
  const QFileInfo info(folder);
  QString problem;
  if (!info.exists())
    problem = tr("%1: no such folder").arg(QDir::toNativeSeparators(folder));
  else if (!info.isDir())
    problem = tr("%1: not a folder (open the folder that convscope-cli grade --out wrote)")
                  .arg(QDir::toNativeSeparators(folder));
  else if (!QFileInfo(folder + "/submissions").isDir() && !QFileInfo(folder + "/leaderboard.json").exists())
    problem = tr("%1: not a class results folder (it has neither submissions/ nor leaderboard.json; "
                 "convscope-cli grade --out writes them)")
                  .arg(QDir::toNativeSeparators(folder));
  if (!problem.isEmpty()) {
    banner_->showError(problem);
    return problem;
  }
  if (!watcher_->directories().isEmpty()) watcher_->removePaths(watcher_->directories());
  if (!watcher_->files().isEmpty()) watcher_->removePaths(watcher_->files());
  folder_ = info.absoluteFilePath();
  folderLabel_->setToolTip(QDir::toNativeSeparators(folder_));
  showFolderName();
  reload();
  return {};
}

void ClassPanel::openFolderDialog() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Open a class's results folder"), folder_);
  if (!folder.isEmpty()) openFolder(folder);
}

QString ClassPanel::gradeFolder(const QString& submissions, const QString& results) {
  const QFileInfo dir(submissions);
  QString problem;
  if (!dir.isDir())
    problem = tr("%1: not a folder of submissions (each a FILE.cu or a folder holding one)")
                  .arg(QDir::toNativeSeparators(submissions));
  else if (grading_->running())
    problem = tr("a grading is already running: cancel it first");
  const QString into = results.isEmpty() ? dir.absoluteFilePath() + "-results" : QFileInfo(results).absoluteFilePath();
  if (problem.isEmpty() && !QDir().mkpath(into + "/submissions"))
    problem = tr("%1: cannot create the results folder there").arg(QDir::toNativeSeparators(into));
  if (problem.isEmpty()) problem = openFolder(into);
  if (!problem.isEmpty()) {
    banner_->showError(problem);
    return problem;
  }
  ClassGrading request;
  request.dir = dir.absoluteFilePath().toStdString();
  request.results = into.toStdString();
  request.settings = gradingSettings_;
  try {
    request.anonymize = publishAnonymized(request.results, std::nullopt);
  } catch (const std::exception& e) {
    banner_->showError(QString::fromStdString(e.what()));
    return QString::fromStdString(e.what());
  }
  QString whyNot;
  if (!grading_->start(request, &whyNot)) {
    banner_->showError(whyNot);
    return whyNot;
  }
  grade_->setEnabled(false);
  gradingRow_->setVisible(true);
  cancelGrading_->setVisible(true);
  gradingProgress_->setRange(0, 0);  // busy until the kept results are counted
  gradingProgress_->setVisible(true);
  gradingStatus_->setText(tr("Grading %1…").arg(QDir::toNativeSeparators(dir.absoluteFilePath())));
  return {};
}

void ClassPanel::gradeFolderDialog() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Grade a folder of students' kernels"));
  if (!folder.isEmpty()) gradeFolder(folder);
}

void ClassPanel::cancelGrading() {
  grading_->cancel();
  if (grading_->running()) gradingStatus_->setText(tr("Stopping the grading…"));
}

bool ClassPanel::gradingRunning() const {
  return grading_->running();
}

QString ClassPanel::gradingStatus() const {
  return gradingStatus_->text();
}

void ClassPanel::watchFolder() {
  // submissions/ appears with the first result: watched from the first read that finds it.
  for (const QString& path : {folder_, folder_ + "/submissions"})
    if (QFileInfo(path).isDir() && !watcher_->directories().contains(path)) watcher_->addPath(path);
}

void ClassPanel::reload() {
  if (folder_.isEmpty()) return;
  watchFolder();
  QStringList problems;
  try {
    const std::filesystem::path folder = folder_.toStdString();
    // A published board (leaderboard.json, no submissions/) is shown as it was published; a
    // results folder being graded is ranked from its submissions as they arrive.
    published_ =
        !std::filesystem::is_directory(folder / "submissions") && std::filesystem::exists(folder / "leaderboard.json");
    board_ = published_ ? readPublishedLeaderboard(folder / "leaderboard.json") : buildLeaderboard(folder, false);
  } catch (const std::exception& e) {
    board_ = {};
    problems << QString::fromStdString(e.what());
  }
  for (const json& unreadable : board_.unreadable)
    problems << tr("%1 not read: %2")
                    .arg(QString::fromStdString(unreadable.value("file", "")),
                         QString::fromStdString(unreadable.value("reason", "")));
  if (problems.isEmpty())
    banner_->dismiss();
  else
    banner_->showError(problems.join("\n"));
  rebuildGroups();
  emit reloaded();
}

void ClassPanel::rebuildGroups() {
  // The page the user looks at stays in front across a refresh (by its GPU).
  const QString shownGpu = groups_->count() > 0 ? groups_->tabText(groups_->currentIndex()) : QString();
  while (groups_->count() > 0) {
    QWidget* page = groups_->widget(0);
    groups_->removeTab(0);
    page->deleteLater();
  }
  for (const LeaderboardGroup& group : board_.groups) {
    auto* page = new GroupPage;
    // The re-timing's verdict under the summary: whether the top's order held.
    page->summary->setText(
        QString::fromStdString(group.summary) +
        (group.retimeSummary.empty() ? QString() : "\n" + QString::fromStdString(group.retimeSummary)) +
        (published_ ? "\n" + tr("The published leaderboard (leaderboard.json): the folder holds no submissions/.")
                    : QString()));
    page->chart->setGroup(group.rows, group.reference, noReferenceReason(group));
    fillTable(page->table, group);
    QTableWidget* table = page->table;
    const int index = static_cast<int>(groups_->count());
    connect(table, &QTableWidget::activated, this,
            [this, index](const QModelIndex& cell) { activateRow(index, cell.row()); });
    const QString title = group.gpu.empty() ? tr("No GPU") : QString::fromStdString(group.gpu);
    groups_->addTab(page, title);
    if (title == shownGpu) groups_->setCurrentIndex(index);
  }
  const bool any = !board_.groups.empty();
  groups_->setVisible(any);
  emptyNote_->setVisible(!any);
  if (!any && !folder_.isEmpty())
    emptyNote_->setText(tr("No graded submission in %1 yet: it appears here as soon as grading writes its result.")
                            .arg(QDir::toNativeSeparators(folder_)));
  exportCsv_->setEnabled(any);
  exportChart_->setEnabled(any);
}

void ClassPanel::fillTable(QTableWidget* table, const LeaderboardGroup& group) {
  table->setColumnCount(ColumnCount);
  QStringList titles = {tr("Rank"), tr("Id"), tr("Status"), tr("Message"), tr("Accuracy")};
  // Short titles (the batch and the unit), the meaning in their tooltips: the table fits a lab screen.
  for (int batch : kGradeBatches) titles << tr("@%1 (ms)").arg(QLocale().toString(batch));
  titles << tr("× GPU baseline") << tr("× cuDNN") << tr("Registers") << tr("Occupancy");
  table->setHorizontalHeaderLabels(titles);
  for (size_t b = 0; b < kGradeBatches.size(); ++b)
    table->horizontalHeaderItem(OpTime100 + static_cast<int>(b))
        ->setToolTip(tr("The conv layers' op-time sum at batch %1, in milliseconds").arg(kGradeBatches[b]));
  table->horizontalHeaderItem(SpeedupOverBaseline)
      ->setToolTip(tr("Speed-up over the course's GPU baseline at batch %1").arg(kGradeBatches.back()));
  table->horizontalHeaderItem(SpeedupOverCudnn)
      ->setToolTip(tr("Speed-up over cuDNN at batch %1").arg(kGradeBatches.back()));
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->verticalHeader()->setVisible(false);
  table->setWordWrap(false);
  table->setRowCount(static_cast<int>(group.rows.size()));
  for (int r = 0; r < static_cast<int>(group.rows.size()); ++r) {
    const json& row = group.rows[static_cast<size_t>(r)];
    const auto text = [&](const char* key) { return QString::fromStdString(row.value(key, std::string())); };
    // Only a correct submission has a rank; the others keep the board's order (sorting by the
    // column still gives it) but show none: a kernel that never ran is not "1st".
    const QString status = text("status");
    const bool ranked = countsAsPassed(row.value("status", json()));
    auto* rank = new NumberItem(row["rank"], ranked ? QString::number(row["rank"].get<int>()) : QString("—"));
    if (!ranked) rank->setToolTip(tr("not ranked by time: %1").arg(status));
    table->setItem(r, Rank, rank);
    auto* id = new QTableWidgetItem(text("id"));
    id->setData(Qt::UserRole, text("id"));
    table->setItem(r, Id, id);
    auto* statusItem = new QTableWidgetItem(status);
    statusItem->setForeground(statusColour(status));
    table->setItem(r, Status, statusItem);
    auto* message = new QTableWidgetItem(text("message"));
    message->setToolTip(text("message"));
    table->setItem(r, Message, message);
    table->setItem(r, Accuracy, new NumberItem(row["accuracy"], numberText(row["accuracy"], 5)));
    const json& times = row["opTimeSeconds"];
    for (size_t b = 0; b < kGradeBatches.size(); ++b) {
      const json time = times.is_object() ? times.value(std::to_string(kGradeBatches[b]), json()) : json();
      auto* item = new NumberItem(time, millisecondsText(time));
      if (kGradeBatches[b] == kGradeBatches.back() && row.value("retimedSeconds", json()).is_number())
        item->setToolTip(tr("Timed again once the class was graded: %1 ms (the ranking uses the first timing)")
                             .arg(millisecondsText(row["retimedSeconds"])));
      table->setItem(r, OpTime100 + static_cast<int>(b), item);
    }
    table->setItem(r, SpeedupOverBaseline,
                   new NumberItem(row["speedupOverGpuBaseline"], numberText(row["speedupOverGpuBaseline"], 3)));
    table->setItem(r, SpeedupOverCudnn,
                   new NumberItem(row["speedupOverCudnn"], numberText(row["speedupOverCudnn"], 3)));
    table->setItem(r, Registers, new NumberItem(row["registers"], numberText(row["registers"], 6)));
    table->setItem(r, Occupancy, new NumberItem(row["occupancy"], numberText(row["occupancy"], 3)));
  }
  // The leaderboard's order first; a click on a column title sorts by it.
  table->setSortingEnabled(true);
  table->sortByColumn(Rank, Qt::AscendingOrder);
  fitColumns(table);
}

void ClassPanel::fitColumns(QTableWidget* table) {
  // After the sort indicator is there (it takes room in its title), at the table's current font.
  table->resizeColumnsToContents();
  // The message on two lines of a column of 48 letters: cut to one line ("passed: 11 random
  // shap...") it told a class nothing. Longer ones end in "…" on the second line; the row's
  // tooltip has the whole message. (Whole messages made a row of seven lines: the ranking fell
  // out of sight.)
  table->setWordWrap(true);
  table->setTextElideMode(Qt::ElideRight);
  table->setColumnWidth(Message, std::min(table->columnWidth(Message), 48 * table->fontMetrics().averageCharWidth()));
  table->verticalHeader()->setDefaultSectionSize(2 * table->fontMetrics().lineSpacing() + 8);
}

void ClassPanel::showFolderName() {
  // A long path is shortened in its middle to the room there is (the whole of it in the tooltip):
  // the folder's own name, at its end, stays in sight.
  if (folder_.isEmpty()) return;
  const int room = std::max(80, folderLabel_->width());
  folderLabel_->setText(
      folderLabel_->fontMetrics().elidedText(QDir::toNativeSeparators(folder_), Qt::ElideMiddle, room));
}

void ClassPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  QTimer::singleShot(0, this, [this] { showFolderName(); });  // once the label has its new width
}

void ClassPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) QTimer::singleShot(0, this, [this] { showFolderName(); });
  // Presentation mode's large letters: the columns widen with them (once the tables have the new font).
  if (event->type() == QEvent::FontChange || event->type() == QEvent::ApplicationFontChange)
    QTimer::singleShot(0, this, [this] {
      for (int g = 0; g < groupCount(); ++g) fitColumns(table(g));
    });
}

int ClassPanel::groupCount() const {
  return groups_->count();
}

namespace {
const GroupPage* pageOf(QTabWidget* groups, int group) {
  return group >= 0 && group < groups->count() ? dynamic_cast<const GroupPage*>(groups->widget(group)) : nullptr;
}
}  // namespace

QTableWidget* ClassPanel::table(int group) const {
  const GroupPage* page = pageOf(groups_, group);
  return page ? page->table : nullptr;
}

ClassDistributionChart* ClassPanel::chart(int group) const {
  const GroupPage* page = pageOf(groups_, group);
  return page ? page->chart : nullptr;
}

QString ClassPanel::summaryText(int group) const {
  const GroupPage* page = pageOf(groups_, group);
  return page ? page->summary->text() : QString();
}

QString ClassPanel::bannerText() const {
  return banner_->message();
}

std::shared_ptr<BenchmarkReport> ClassPanel::submissionTimes(const LeaderboardGroup& group, const json& row) {
  auto report = std::make_shared<BenchmarkReport>();
  report->device = group.gpu.empty() ? "no GPU" : group.gpu;
  const std::string id = row.value("id", std::string());
  const json& times = row.value("opTimeSeconds", json::object());
  for (int batch : kGradeBatches) {
    const std::string key = std::to_string(batch);
    if (times.is_object() && times.contains(key) && times[key].is_number() && times[key].get<double>() > 0.0)
      report->runs.push_back(summedRun(id, batch, times[key].get<double>()));
  }
  return report;
}

std::shared_ptr<BenchmarkReport> ClassPanel::referenceTimes(const LeaderboardGroup& group) {
  if (!group.reference.is_object() || !group.reference.contains("variants")) return nullptr;
  auto report = std::make_shared<BenchmarkReport>();
  report->device = group.gpu;
  report->date = group.reference.value("timedAt", std::string());
  for (const json& variant : group.reference["variants"]) {
    const std::string id = variant.value("id", std::string());
    const json& times = variant.value("opTimeSeconds", json::object());
    for (int batch : kGradeBatches) {
      const std::string key = std::to_string(batch);
      if (!id.empty() && times.is_object() && times.contains(key) && times[key].is_number() &&
          times[key].get<double>() > 0.0)
        report->runs.push_back(summedRun(id, batch, times[key].get<double>()));
    }
  }
  return report->runs.empty() ? nullptr : report;
}

void ClassPanel::activateRow(int group, int row) {
  QTableWidget* shown = table(group);
  if (!shown || row < 0 || row >= shown->rowCount() || group >= static_cast<int>(board_.groups.size())) return;
  const QString id = shown->item(row, Id)->data(Qt::UserRole).toString();
  const LeaderboardGroup& g = board_.groups[static_cast<size_t>(group)];
  const auto found = std::find_if(g.rows.begin(), g.rows.end(),
                                  [&](const json& r) { return r.value("id", std::string()) == id.toStdString(); });
  if (found == g.rows.end()) return;
  const SubmissionSource source = submissionSource(std::filesystem::path(folder_.toStdString()), id.toStdString());
  if (source.file.empty()) {
    emit errorOccurred(tr("Cannot open %1's kernel: %2").arg(id, QString::fromStdString(source.problem)));
    return;
  }
  emit submissionChosen(QString::fromStdString(source.file.string()), id, submissionTimes(g, *found),
                        referenceTimes(g));
}

QString ClassPanel::exportCsv(const QString& path) const {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
    return tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
  const std::string csv = leaderboardCsv(board_);
  if (file.write(csv.data(), static_cast<qint64>(csv.size())) != static_cast<qint64>(csv.size()))
    return tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
  return {};
}

QString ClassPanel::exportChart(const QString& path, int width, int height) {
  ClassDistributionChart* shown = chart(groups_->currentIndex());
  if (!shown) return tr("Nothing to export: no results folder with graded submissions is open");
  return exportPlot(*shown, path, width, height);
}

void ClassPanel::exportCsvAsked() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export the ranking"), folder_ + "/ranking.csv", tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  if (const QString error = exportCsv(path); !error.isEmpty()) emit errorOccurred(error);
}

void ClassPanel::exportChartAsked() {
  const QString path = askExportPath(this, "class-distribution");
  if (path.isEmpty()) return;
  if (const QString error = exportChart(path); !error.isEmpty()) emit errorOccurred(error);
}

}  // namespace convscope::ui
