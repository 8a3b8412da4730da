#include "ui/kernel/kernel_resources_view.h"

#include <QLabel>
#include <QTextDocumentFragment>
#include <QVBoxLayout>

#include "ui/jobs/kernel_inspection_job.h"

namespace convscope::ui {
namespace {

QString bytes(int count) {
  return count == 1 ? QObject::tr("1 byte") : QObject::tr("%1 bytes").arg(count);
}

QString row(const QString& name, const QString& value) {
  return QString("<tr><td>%1</td><td>&nbsp;&nbsp;%2</td></tr>").arg(name.toHtmlEscaped(), value.toHtmlEscaped());
}

}  // namespace

KernelResourcesView::KernelResourcesView(QWidget* parent) : QWidget(parent), figures_(new QLabel(this)) {
  figures_->setWordWrap(true);
  figures_->setTextFormat(Qt::RichText);
  figures_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  figures_->setToolTip(tr("The same figures as convscope-cli kernel info (docs/your-kernel.md)"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(figures_);
  clear();
}

void KernelResourcesView::clear() {
  figures_->setText(tr("<b>Resources</b> – (after a compile)"));
}

void KernelResourcesView::showInspecting() {
  figures_->setText(tr("<b>Resources</b> reading the compiler's report…"));
}

void KernelResourcesView::setInspection(const KernelInspectionResult& result) {
  if (!result.ok()) {
    figures_->setText(tr("<b>Resources</b> not known: %1").arg(result.problem.toHtmlEscaped()));
    return;
  }
  const UserKernelInspection& info = result.inspection;
  const KernelResources& r = info.resources;
  const bool fromCompiler = info.figuresFrom.rfind("the compiler", 0) == 0;
  QString local = bytes(r.localBytes);
  if (fromCompiler)  // the driver does not report spills apart from the stack frame
    local += tr(" (spills: %1 stored, %2 loaded)").arg(bytes(r.spillStoreBytes), bytes(r.spillLoadBytes));
  const UserKernelLaunch& launch = info.kernel.source.launch;
  const int threads = launch.blockX * launch.blockY;
  QString html = tr("<b>Resources</b> for %1, from %2")
                     .arg(QString::fromStdString(info.kernel.architecture).toHtmlEscaped(),
                          QString::fromStdString(info.figuresFrom).toHtmlEscaped());
  html += "<table cellspacing='0' cellpadding='0'>";
  html += row(tr("registers per thread"), QString::number(r.registers));
  html += row(tr("shared memory per block"), bytes(r.sharedStaticBytes) + tr(" (static)"));
  html += row(tr("local memory per thread"), local);
  html += row(tr("constant memory"), bytes(r.constantBytes));
  html += row(
      tr("block"),
      tr("%1×%2 = %3 threads (%4 warps)").arg(launch.blockX).arg(launch.blockY).arg(threads).arg((threads + 31) / 32));
  if (info.occupancy) {
    const BlockOccupancy& o = *info.occupancy;
    html += row(tr("occupancy"), tr("%1 blocks per SM, %2 of %3 warps (%4%), limited by %5")
                                     .arg(o.blocksPerSm)
                                     .arg(o.activeWarps)
                                     .arg(o.maxWarps)
                                     .arg(qRound(o.fraction() * 100))
                                     .arg(QString::fromStdString(o.limitedBy)));
    if (o.computed && o.blocksByWarps > 0)
      html += row(tr("blocks per SM allowed by"), tr("warps %1, registers %2, shared memory %3, the block limit %4")
                                                      .arg(o.blocksByWarps)
                                                      .arg(o.blocksByRegisters)
                                                      .arg(o.blocksByShared)
                                                      .arg(o.blocksByBlockLimit));
  }
  html += "</table>";
  // Computed (no GPU of that architecture here) or the driver's: the student should know which.
  const QString from = QString::fromStdString(info.occupancyFrom);
  html += "<small>" +
          (info.occupancy && info.occupancy->computed ? tr("occupancy %1").arg(from) : from).toHtmlEscaped() +
          "</small>";
  figures_->setText(html);
}

QString KernelResourcesView::text() const {
  return QTextDocumentFragment::fromHtml(figures_->text()).toPlainText();
}

}  // namespace convscope::ui
