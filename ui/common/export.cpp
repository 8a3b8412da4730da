#include "ui/common/export.h"

#include <qcustomplot.h>

#include <QFileDialog>
#include <QFileInfo>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QStandardPaths>

namespace convscope::ui {
namespace {

enum class Format { Png, Pdf, Unknown };

Format formatOf(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "png") return Format::Png;
  if (suffix == "pdf") return Format::Pdf;
  return Format::Unknown;
}

QString unknownFormat(const QString& path) {
  return QObject::tr("%1: cannot export to this format; use a file name ending in .png or .pdf").arg(path);
}

QString cannotWrite(const QString& path) {
  return QObject::tr("%1: could not write the file").arg(path);
}

}  // namespace

QString exportPlot(QCustomPlot& plot, const QString& path, int width, int height) {
  bool saved = false;
  switch (formatOf(path)) {
    case Format::Png:
      saved = plot.savePng(path, width, height, 2.0);  // twice the screen resolution: sharp on slides
      break;
    case Format::Pdf:
      saved = plot.savePdf(path, width, height);
      break;
    case Format::Unknown:
      return unknownFormat(path);
  }
  return saved ? QString() : cannotWrite(path);
}

QString exportWidget(QWidget& widget, const QString& path) {
  const QSize size = widget.size().expandedTo(QSize(1, 1));
  switch (formatOf(path)) {
    case Format::Png: {
      QPixmap pixmap(size * 2);
      pixmap.setDevicePixelRatio(2.0);
      pixmap.fill(widget.palette().color(QPalette::Window));
      widget.render(&pixmap);
      // Through a temporary file renamed on commit: a failed save leaves the file there before.
      QSaveFile file(path);
      if (!file.open(QIODevice::WriteOnly) || !pixmap.save(&file, "PNG") || !file.commit()) return cannotWrite(path);
      return QString();
    }
    case Format::Pdf: {
      QPdfWriter pdf(path);
      pdf.setResolution(96);
      pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
      pdf.setPageSize(QPageSize(QSizeF(size.width() * 72.0 / 96.0, size.height() * 72.0 / 96.0), QPageSize::Point));
      QPainter painter;
      if (!painter.begin(&pdf)) return cannotWrite(path);
      widget.render(&painter);
      return painter.end() ? QString() : cannotWrite(path);
    }
    case Format::Unknown:
      return unknownFormat(path);
  }
  return unknownFormat(path);
}

QString askExportPath(QWidget* parent, const QString& suggestedBaseName) {
  const QString folder = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
  QString path = QFileDialog::getSaveFileName(parent, QObject::tr("Export"), folder + "/" + suggestedBaseName + ".png",
                                              QObject::tr("PNG image (*.png);;PDF document (*.pdf)"));
  if (!path.isEmpty() && formatOf(path) == Format::Unknown) path += ".png";
  return path;
}

}  // namespace convscope::ui
