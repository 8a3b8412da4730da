#include "ui/kernel/kernel_history_view.h"

#include <QDir>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTextEdit>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "app/core/util/line_diff.h"
#include "ui/common/export.h"
#include "ui/kernel/kernel_history_chart.h"

namespace convscope::ui {
namespace {

enum Column { kVersion, kSavedAt, kCheck, kOpTime };

// A unified diff as coloured lines: removed red, added green, hunk headers gray.
QString diffHtml(const QString& diff) {
  QString html = "<pre style='margin:0'>";
  for (const QString& line : diff.split('\n')) {
    const QString escaped = line.toHtmlEscaped();
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("@@"))
      html += "<span style='color:gray'>" + escaped + "</span>\n";
    else if (line.startsWith('+'))
      html += "<span style='color:#2ca02c; background:#e6f4e6'>" + escaped + "</span>\n";
    else if (line.startsWith('-'))
      html += "<span style='color:#d62728; background:#fbe9e9'>" + escaped + "</span>\n";
    else
      html += escaped + "\n";
  }
  return html + "</pre>";
}

}  // namespace

KernelHistoryView::KernelHistoryView(QWidget* parent)
    : QWidget(parent),
      message_(new QLabel(this)),
      exportChart_(new QPushButton(tr("Export chart…"), this)),
      chart_(new KernelHistoryChart(this)),
      list_(new QTreeWidget(this)),
      diffTabs_(new QTabWidget(this)),
      sourceDiff_(new QTextEdit(this)),
      sassDiff_(new QTextEdit(this)) {
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->hide();
  list_->setHeaderLabels({tr("Version"), tr("Saved (UTC)"), tr("Check"), tr("Op time")});
  list_->setRootIsDecorated(false);
  list_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  list_->setToolTip(tr("Choose two versions (Ctrl+click) to compare them; one alone is compared with the one before"));
  list_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  const QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  for (QTextEdit* diff : {sourceDiff_, sassDiff_}) {
    diff->setReadOnly(true);
    diff->setFont(fixed);
    diff->setLineWrapMode(QTextEdit::NoWrap);
  }
  diffTabs_->addTab(sourceDiff_, tr("Source diff"));
  diffTabs_->addTab(sassDiff_, tr("SASS diff"));
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(chart_);
  split->addWidget(list_);
  split->addWidget(diffTabs_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 1);
  split->setStretchFactor(2, 2);
  split->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(message_);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(exportChart_);
  layout->addLayout(buttons);
  layout->addWidget(split, 1);
  connect(list_, &QTreeWidget::itemSelectionChanged, this, &KernelHistoryView::showSelection);
  connect(exportChart_, &QPushButton::clicked, this, [this] {
    const QString base = history_ ? QString::fromStdString(history_->kernelFile().stem().string()) + "-history"
                                  : QString("kernel-history");
    const QString path = askExportPath(this, base);
    if (path.isEmpty()) return;
    if (const QString error = exportTo(path); !error.isEmpty()) showProblem(error);
  });
  refresh();
}

KernelHistoryView::~KernelHistoryView() = default;

void KernelHistoryView::setKernelFile(const QString& file, const QString& root) {
  history_ = std::make_unique<KernelHistory>(
      file.toStdString(), root.isEmpty() ? kernelHistoryRoot() : std::filesystem::path(root.toStdString()));
  currentVersion_ = 0;
  message_->hide();
  QStringList skipped;
  for (const std::string& line : history_->skipped()) skipped << QString::fromStdString(line);
  if (!skipped.isEmpty())
    showProblem(tr("Some of the kernel's history could not be read and is left out:\n%1").arg(skipped.join('\n')));
  refresh();
}

void KernelHistoryView::showProblem(const QString& message) {
  message_->setText(message);
  message_->setVisible(!message.isEmpty());
}

void KernelHistoryView::recordCompiled(const QString& source, const QString& sass, const QString& sassMissingReason) {
  if (!history_) return;
  try {
    currentVersion_ = history_->recordCompiled(
        source.toStdString(), sass.isEmpty() ? std::nullopt : std::optional<std::string>(sass.toStdString()),
        sassMissingReason.toStdString());
  } catch (const std::exception& e) {
    currentVersion_ = 0;
    showProblem(tr("This version is not kept in the history: %1").arg(QString::fromUtf8(e.what())));
  }
  refresh();
}

void KernelHistoryView::recordCheck(bool passed, const QString& summary) {
  if (!history_ || !currentVersion_) return;
  try {
    history_->recordCheck(currentVersion_, passed, summary.toStdString());
  } catch (const std::exception& e) {
    showProblem(tr("The check's result is not kept in the history: %1").arg(QString::fromUtf8(e.what())));
  }
  refresh();
}

void KernelHistoryView::recordTiming(const BenchmarkReport& report) {
  if (!history_ || !currentVersion_) return;
  try {
    history_->recordOpTimes(currentVersion_, opTimeSumsPerBatch(report));
  } catch (const std::exception& e) {
    showProblem(tr("The op times are not kept in the history: %1").arg(QString::fromUtf8(e.what())));
  }
  refresh();
}

void KernelHistoryView::refresh() {
  const std::vector<KernelVersion> none;
  const std::vector<KernelVersion>& versions = history_ ? history_->versions() : none;
  chart_->setVersions(versions);
  QList<int> selected;
  for (QTreeWidgetItem* item : list_->selectedItems()) selected << item->data(kVersion, Qt::UserRole).toInt();
  const QSignalBlocker quiet(list_);  // rebuilt, then the same versions chosen again
  list_->clear();
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {  // the newest on top
    const KernelVersion& version = *it;
    auto* item = new QTreeWidgetItem(list_);
    item->setText(kVersion, tr("v%1").arg(version.number));
    item->setData(kVersion, Qt::UserRole, version.number);
    item->setText(kSavedAt, QString::fromStdString(version.savedAt).replace('T', ' ').remove('Z'));
    const QString status = QString::fromStdString(version.status());
    item->setText(kCheck, status == "compiled" ? tr("not checked") : status);
    item->setForeground(kCheck, status == "passed"   ? QColor("#2ca02c")
                                : status == "failed" ? QColor("#d62728")
                                                     : palette().color(QPalette::PlaceholderText));
    if (!version.checkSummary.empty()) item->setToolTip(kCheck, QString::fromStdString(version.checkSummary));
    const std::optional<KernelOpTime> time = version.chartedOpTime();
    item->setText(kOpTime,
                  time ? tr("%1 ms (batch %2)").arg(time->seconds * 1e3, 0, 'f', 3).arg(time->batch) : tr("not timed"));
    if (selected.contains(version.number)) item->setSelected(true);
  }
  showSelection();
}

void KernelHistoryView::showDiff(int older, int newer) {
  const QSignalBlocker quiet(list_);
  list_->clearSelection();
  for (int i = 0; i < list_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = list_->topLevelItem(i);
    const int number = item->data(kVersion, Qt::UserRole).toInt();
    if (number == older || number == newer) item->setSelected(true);
  }
  showSelection();
}

void KernelHistoryView::showSelection() {
  std::vector<int> chosen;
  for (QTreeWidgetItem* item : list_->selectedItems()) chosen.push_back(item->data(kVersion, Qt::UserRole).toInt());
  std::sort(chosen.begin(), chosen.end());
  const KernelVersion* older = nullptr;
  const KernelVersion* newer = nullptr;
  if (history_ && chosen.size() == 2) {
    older = history_->version(chosen[0]);
    newer = history_->version(chosen[1]);
  } else if (history_ && chosen.size() == 1) {
    newer = history_->version(chosen[0]);
    const std::vector<KernelVersion>& all = history_->versions();
    for (size_t i = 1; i < all.size(); ++i)
      if (all[i].number == chosen[0]) older = &all[i - 1];
  }
  sourceDiffPlain_.clear();
  sassDiffPlain_.clear();
  if (!older || !newer) {
    const QString hint = chosen.size() > 2 ? tr("Choose two versions to compare them, not %1.").arg(chosen.size())
                                           : tr("Choose two versions in the list to compare them.");
    sourceDiff_->setPlainText(hint);
    sassDiff_->setPlainText(hint);
    return;
  }
  const std::string name = history_->kernelFile().filename().string();
  const auto label = [&](const KernelVersion& v) { return name + " v" + std::to_string(v.number); };
  sourceDiffPlain_ =
      QString::fromStdString(unifiedDiff(diffLines(older->source, newer->source), label(*older), label(*newer)));
  if (sourceDiffPlain_.isEmpty())
    sourceDiff_->setPlainText(tr("v%1 and v%2 have the same source.").arg(older->number).arg(newer->number));
  else
    sourceDiff_->setHtml(diffHtml(sourceDiffPlain_));
  if (!older->sass || !newer->sass) {
    const KernelVersion& without = older->sass ? *newer : *older;
    sassDiff_->setPlainText(
        tr("No SASS of v%1 to compare: %2").arg(without.number).arg(QString::fromStdString(without.sassMissingReason)));
    return;
  }
  sassDiffPlain_ =
      QString::fromStdString(unifiedDiff(diffLines(comparableSass(*older->sass), comparableSass(*newer->sass)),
                                         label(*older) + " SASS", label(*newer) + " SASS"));
  if (sassDiffPlain_.isEmpty())
    sassDiff_->setPlainText(tr("v%1 and v%2 compile to the same SASS.").arg(older->number).arg(newer->number));
  else
    sassDiff_->setHtml(diffHtml(sassDiffPlain_));
}

QString KernelHistoryView::sourceDiffText() const {
  return sourceDiffPlain_;
}

QString KernelHistoryView::sassDiffText() const {
  return sassDiffPlain_;
}

QString KernelHistoryView::messageText() const {
  return message_->isHidden() ? QString() : message_->text();
}

QString KernelHistoryView::exportTo(const QString& path) {
  return exportPlot(*chart_, path);
}

}  // namespace convscope::ui
