#include "ui/kernel/kernel_resources_view.h"

#include <QLabel>
#include <QTextDocumentFragment>
#include <QVBoxLayout>

#include "ui/jobs/kernel_inspection_job.h"

namespace convscope::ui {
namespace {

const char* const kToolTip =
    QT_TRANSLATE_NOOP("KernelResourcesView", "The same figures as convscope-cli kernel info (docs/your-kernel.md)");

QString bytes(int count) {
  return count == 1 ? QObject::tr("1 byte") : QObject::tr("%1 bytes").arg(count);
}

// "1936 B", "12 KB": the short form the line in view uses.
QString bytesShort(int count) {
  return count >= 10240 ? QObject::tr("%1 KB").arg(count / 1024) : QObject::tr("%1 B").arg(count);
}

}  // namespace

KernelResourcesView::KernelResourcesView(QWidget* parent) : QWidget(parent), figures_(new QLabel(this)) {
  figures_->setWordWrap(true);
  figures_->setTextFormat(Qt::RichText);
  figures_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  figures_->setToolTip(tr(kToolTip));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(figures_);
  clear();
}

void KernelResourcesView::clear() {
  figures_->setToolTip(tr(kToolTip));
  figures_->setText(tr("<b>Resources</b> – (after a compile)"));
}

void KernelResourcesView::showInspecting() {
  figures_->setText(tr("<b>Resources</b> reading the compiler's report…"));
}

void KernelResourcesView::setInspection(const KernelInspectionResult& result) {
  if (!result.ok()) {
    figures_->setToolTip(tr(kToolTip));
    figures_->setText(tr("<b>Resources</b> not known: %1").arg(result.problem.toHtmlEscaped()));
    return;
  }
  const UserKernelInspection& info = result.inspection;
  const KernelResources& r = info.resources;
  const QString architecture = QString::fromStdString(info.kernel.architecture);
  const bool computed = info.figuresFrom.rfind("the compiler", 0) == 0;
  const UserKernelLaunch& launch = info.kernel.source.launch;
  const int threads = launch.blockX * launch.blockY;
  // Three short lines in view (the tab is full at 1024x700); every figure in words in the tooltip.
  QString local = tr("%1 local/thread").arg(bytesShort(r.localBytes));
  if (computed)  // the driver does not report spills apart from the stack frame
    local += tr(" (spills %1)").arg(bytesShort(r.spillStoreBytes + r.spillLoadBytes));
  QStringList shown;
  shown << (computed ? tr("<b>Resources</b> computed for %1 (the compiler's figures; no GPU here)").arg(architecture)
                     : tr("<b>Resources</b> from %1").arg(QString::fromStdString(info.figuresFrom).toHtmlEscaped()));
  shown << tr("%1 registers/thread · %2 shared/block · %3 · %4 constant")
               .arg(r.registers)
               .arg(bytesShort(r.sharedStaticBytes), local, bytesShort(r.constantBytes))
               .toHtmlEscaped();
  QStringList details;
  details << tr("%1, figures from %2").arg(architecture, QString::fromStdString(info.figuresFrom))
          << tr("registers per thread: %1").arg(r.registers)
          << tr("shared memory per block: %1 (static)").arg(bytes(r.sharedStaticBytes))
          << tr("local memory per thread: %1 (its stack frame: local arrays and spills)").arg(bytes(r.localBytes))
          << tr("constant memory: %1").arg(bytes(r.constantBytes))
          << tr("block: %1×%2 = %3 threads (%4 warps)")
                 .arg(launch.blockX)
                 .arg(launch.blockY)
                 .arg(threads)
                 .arg((threads + 31) / 32);
  if (computed) details << tr("spills: %1 stored, %2 loaded").arg(bytes(r.spillStoreBytes), bytes(r.spillLoadBytes));
  if (info.occupancy) {
    const BlockOccupancy& o = *info.occupancy;
    shown << tr("occupancy of a %1×%2 block: %3 blocks/SM, %4 of %5 warps (%6%), limited by %7")
                 .arg(launch.blockX)
                 .arg(launch.blockY)
                 .arg(o.blocksPerSm)
                 .arg(o.activeWarps)
                 .arg(o.maxWarps)
                 .arg(qRound(o.fraction() * 100))
                 .arg(QString::fromStdString(o.limitedBy))
                 .toHtmlEscaped();
    if (o.computed && o.blocksByWarps > 0)
      details << tr("blocks per SM each resource allows: warps %1, registers %2, shared memory %3, the block limit %4")
                     .arg(QString::fromStdString(blocksLimitText(o.blocksByWarps)),
                          QString::fromStdString(blocksLimitText(o.blocksByRegisters)),
                          QString::fromStdString(blocksLimitText(o.blocksByShared)),
                          QString::fromStdString(blocksLimitText(o.blocksByBlockLimit)));
  } else {
    shown << tr("occupancy: %1").arg(QString::fromStdString(info.occupancyFrom)).toHtmlEscaped();
  }
  // Computed (no GPU of that architecture here) or the driver's: the student should know which.
  const QString from = QString::fromStdString(info.occupancyFrom);
  details << (info.occupancy && info.occupancy->computed ? tr("occupancy %1").arg(from)
                                                         : tr("occupancy from %1").arg(from));
  figures_->setText(shown.join("<br>"));
  figures_->setToolTip(details.join('\n'));
}

QString KernelResourcesView::text() const {
  return QTextDocumentFragment::fromHtml(figures_->text()).toPlainText();
}

QString KernelResourcesView::detailsText() const {
  return figures_->toolTip();
}

}  // namespace convscope::ui
