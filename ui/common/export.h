// Saving what is on screen: charts as QCustomPlot renders them (PDF stays vector), any other
// widget (the feature-map grid) as a PNG or a one-page PDF. The format follows the file's suffix.
#pragma once

#include <QString>

class QCustomPlot;
class QWidget;

namespace convscope::ui {

// An empty string on success, otherwise the message to show.
QString exportPlot(QCustomPlot& plot, const QString& path, int width = 0, int height = 0);
QString exportWidget(QWidget& widget, const QString& path);

// Asks where to save (PNG or PDF); empty when the user cancels.
QString askExportPath(QWidget* parent, const QString& suggestedBaseName);

}  // namespace convscope::ui
