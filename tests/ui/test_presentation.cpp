// Presentation mode (F5) and small screens, checked as a class would see the window: the mode
// fills the screen and goes back; the maps grow with it; on a 1920x1080 projector and on
// 1280x720 no button is cut, no label is squeezed to a few letters, no chart title runs off its
// chart, the prediction heading stays on one line; and at 1024x700 the timing chart keeps off
// the sub-tabs under it.
#include <gtest/gtest.h>

#include <QAbstractButton>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QRegularExpression>
#include <QTabBar>
#include <QTabWidget>

#include "app/gui/explore_view.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/prediction_chart.h"
#include "ui/charts/prediction_panel.h"
#include "ui/charts/timing_bar_chart.h"
#include "ui/charts/timing_line_chart.h"
#include "ui/common/presentation_mode.h"
#include "ui/maps/feature_map_view.h"
#include "ui/maps/layer_maps_widget.h"
#include "ui/timing/timing_panel.h"

namespace convscope::testing {
namespace {

const QString kH100Bench = QString::fromUtf8(CONVSCOPE_SOURCE_DIR) + "/docs/results/bench-h100.json";

// Presentation mode is application-wide (fonts, palette): every test leaves it off.
struct PresentationOff {
  ~PresentationOff() { ui::setPresentationMode(false); }
};

std::unique_ptr<gui::MainWindow> windowOfSize(QSize size, bool presentation) {
  auto window = openWindow();
  if (presentation) window->setPresentation(true);
  window->resize(size);
  EXPECT_TRUE(waitForInference(*window));
  for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
  return window;
}

QRect inWindow(const QWidget* widget, const QWidget* window) {
  return QRect(widget->mapTo(window, QPoint(0, 0)), widget->size());
}

// The widest word of a label's plain text, at its font: a label narrower than that shows a word cut.
int widestWord(const QLabel* label) {
  int widest = 0;
  const QString plain = QString(label->text()).remove(QRegularExpression("<[^>]*>"));
  for (const QString& word : plain.split(QRegularExpression("\\s+"), Qt::SkipEmptyParts))
    widest = std::max(widest, label->fontMetrics().horizontalAdvance(word));
  return widest;
}

// Every line of a chart title fits the chart's width at the title's font.
void expectTitleFits(const QString& title, const QCustomPlot& chart, const QFont& font) {
  const QFontMetrics metrics(font);
  for (const QString& line : title.split('\n')) {
    EXPECT_LE(metrics.horizontalAdvance(line), chart.width())
        << "title line '" << line.toStdString() << "' is wider than its chart";
    EXPECT_FALSE(line.trimmed().isEmpty());
  }
}

// What a class reads on the Timing tab, with the H100 benchmark open.
void expectTimingTabReadable(gui::MainWindow& window) {
  ui::TimingPanel* timing = window.view<ui::TimingPanel>("timing");
  for (QAbstractButton* button : timing->findChildren<QAbstractButton*>()) {
    if (!button->isVisibleTo(&window) || button->text().isEmpty()) continue;
    SCOPED_TRACE(button->text().toStdString());
    EXPECT_GE(button->width(), button->sizeHint().width()) << "the button's text is clipped";
    EXPECT_GE(button->height(), button->sizeHint().height());
  }
  for (QLabel* label : timing->findChildren<QLabel*>()) {
    if (!label->isVisibleTo(&window) || label->text().isEmpty()) continue;
    SCOPED_TRACE(label->text().toStdString());
    EXPECT_GE(label->width(), widestWord(label)) << "the label is squeezed narrower than one of its words";
  }
  EXPECT_TRUE(timing->originText().contains("bench-h100.json"));
  for (QComboBox* combo : timing->findChildren<QComboBox*>()) {
    if (!combo->isVisibleTo(&window)) continue;
    EXPECT_GE(combo->width(), combo->fontMetrics().horizontalAdvance(combo->currentText()))
        << combo->currentText().toStdString();
  }
  const QFont titleFont = [&] {
    QFont bold = timing->lineChart()->font();
    bold.setBold(true);
    return bold;
  }();
  expectTitleFits(timing->lineChart()->titleText(), *timing->lineChart(), titleFont);
  expectTitleFits(timing->barChart()->titleText(), *timing->barChart(), titleFont);
  // The line chart ends above the sub-tabs, which stay whole.
  const QRect chart = inWindow(timing->lineChart(), &window);
  const QRect tabs = inWindow(timing->lowerTabs()->tabBar(), &window);
  EXPECT_FALSE(chart.intersects(tabs)) << "chart " << chart.y() << "+" << chart.height() << ", tabs " << tabs.y();
  QTabBar* tabBar = timing->lowerTabs()->tabBar();
  EXPECT_GE(tabBar->height(), tabBar->sizeHint().height());
  for (int i = 0; i < tabBar->count(); ++i)  // every sub-tab in sight, none behind scroll arrows
    EXPECT_TRUE(tabBar->rect().contains(tabBar->tabRect(i))) << tabBar->tabText(i).toStdString();
  EXPECT_GE(timing->lineChart()->height(), 150);
  // The lines get room of their own: the legend (beside or under the axes) leaves them at least a
  // third of the chart each way.
  timing->lineChart()->replot(QCustomPlot::rpImmediateRefresh);
  const QRect axes = timing->lineChart()->axisRect()->rect();
  EXPECT_GE(axes.width(), timing->lineChart()->width() / 3) << "the axes are a sliver beside the legend";
  EXPECT_GE(axes.height(), timing->lineChart()->height() / 3) << "the axes are a strip over the legend";
  EXPECT_GE(timing->barChart()->height(), 150);
}

// On every tab of the window: no visible button narrower than its text, no label squeezed
// below one of its words.
void expectEveryTabWhole(gui::MainWindow& window) {
  auto* tabs = window.findChild<QTabWidget*>();
  ASSERT_NE(tabs, nullptr);
  for (int t = 0; t < tabs->count(); ++t) {
    tabs->setCurrentIndex(t);
    for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
    SCOPED_TRACE(tabs->tabText(t).toStdString());
    for (QAbstractButton* button : window.findChildren<QAbstractButton*>()) {
      if (!button->isVisible() || button->text().isEmpty()) continue;
      EXPECT_GE(button->width(), button->sizeHint().width()) << button->text().toStdString() << " is clipped";
    }
    for (QLabel* label : window.findChildren<QLabel*>()) {
      if (!label->isVisible() || label->text().isEmpty() || label->width() <= 0) continue;
      EXPECT_GE(label->width(), std::min(widestWord(label), 200)) << label->text().toStdString() << " is squeezed";
    }
  }
  tabs->setCurrentIndex(0);
}

TEST(Presentation, F5FillsTheScreenAndASecondF5GivesTheWindowBack) {
  PresentationOff off;
  gui::MainWindow window(gui::MainWindow::Options::with(false, true));
  window.resize(1200, 800);
  window.show();
  ASSERT_TRUE(waitForInference(window));
  window.activateWindow();
  ASSERT_TRUE(QTest::qWaitForWindowActive(&window));
  const QFont normal = QApplication::font();
  QTest::keyClick(&window, Qt::Key_F5);
  EXPECT_TRUE(window.presentation());
  EXPECT_TRUE(window.windowState() & Qt::WindowFullScreen);
  EXPECT_GT(QApplication::font().pointSizeF(), normal.pointSizeF() * 1.4);
  QTest::keyClick(&window, Qt::Key_F5);
  EXPECT_FALSE(window.presentation());
  EXPECT_FALSE(window.windowState() & Qt::WindowFullScreen);
  EXPECT_EQ(QApplication::font().pointSizeF(), normal.pointSizeF());
}

TEST(Presentation, TheMapsGrowWithTheScreenAndTheMode) {
  PresentationOff off;
  auto window = windowOfSize({1920, 1080}, false);
  ui::FeatureMapView* maps = window->view<gui::ExploreView>("explore")->maps();
  ASSERT_GT(maps->layerCount(), 2);
  // A map's tile, in pixels: the widget's narrowest width is one tile and its two margins.
  const auto tileOf = [&](int layer) { return maps->layer(layer)->minimumSizeHint().width() - 12; };
  const int deskTile = tileOf(1);
  window->setPresentation(true);
  ASSERT_TRUE(waitForInference(*window));
  QCoreApplication::processEvents();
  const int projectorTile = tileOf(1);
  EXPECT_GE(projectorTile, 120) << "a conv map on a 1920-wide projector";
  EXPECT_GT(projectorTile, deskTile * 5 / 4);
  EXPECT_GT(tileOf(0), projectorTile) << "the input stays the largest picture";
  // And they still fit the view: the widest row of maps is not cut at the right.
  for (int l = 0; l < maps->layerCount(); ++l) EXPECT_LE(maps->layer(l)->minimumSizeHint().width(), maps->width());
  window->setPresentation(false);
  QCoreApplication::processEvents();
  EXPECT_EQ(tileOf(1), deskTile) << "back to the desk's size";
}

// The ten class names beside the probability bars each keep a line of their own: at the tick
// labels' font, ten lines fit the height of the bars' axis.
void expectClassNamesApart(gui::MainWindow& window) {
  ui::PredictionChart* chart = window.view<gui::ExploreView>("explore")->prediction()->chart();
  chart->replot(QCustomPlot::rpImmediateRefresh);
  const int classes = static_cast<int>(chart->shownProbabilities().size());
  ASSERT_EQ(classes, 10);
  const double line = QFontMetricsF(chart->yAxis->tickLabelFont()).height();
  EXPECT_LE(classes * line, chart->axisRect()->height()) << "class names overlap: " << classes << " lines of " << line
                                                         << " px in " << chart->axisRect()->height() << " px";
}

TEST(Presentation, EveryTabReadsWholeOnA1920By1080Projector) {
  PresentationOff off;
  auto window = windowOfSize({1920, 1080}, true);
  expectClassNamesApart(*window);
  expectEveryTabWhole(*window);
  ASSERT_TRUE(window->openBenchmark(kH100Bench)) << window->lastError().toStdString();
  for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
  expectTimingTabReadable(*window);
}

// The maps' titles and the hint under them, read from the back of a room: on a 1440x900
// projector each title is whole (on two lines where one would cut it) and the hint is not cut
// at the window's edge.
TEST(Presentation, LayerTitlesAndTheMapsHintAreWholeAt1440By900) {
  PresentationOff off;
  auto window = windowOfSize({1440, 900}, true);
  const QList<ui::LayerMapsWidget*> layers = window->findChildren<ui::LayerMapsWidget*>();
  ASSERT_GE(layers.size(), 3);
  int twoLines = 0;
  for (ui::LayerMapsWidget* layer : layers) {
    if (!layer->isVisible()) continue;
    SCOPED_TRACE(layer->title().toStdString());
    const QStringList lines = layer->titleLines(layer->width());
    ASSERT_LE(lines.size(), 2);
    EXPECT_EQ(lines.join(' '), layer->title()) << "the title is cut";
    twoLines += lines.size() == 2;
    QFont bold = layer->font();
    bold.setBold(true);
    for (const QString& line : lines)  // each line fits beside the colour legend (190 px wide)
      EXPECT_LE(QFontMetrics(bold).horizontalAdvance(line), layer->width() - 190) << line.toStdString();
  }
  EXPECT_GE(twoLines, 1) << "at this size some title needs its second line: the test would not see a cut one";
  auto* maps = window->findChild<ui::FeatureMapView*>();
  ASSERT_NE(maps, nullptr);
  for (QLabel* label : maps->findChildren<QLabel*>()) {
    if (!label->isVisible() || !label->text().contains("Point at a map")) continue;
    EXPECT_TRUE(label->wordWrap());
    EXPECT_GE(label->height(), label->heightForWidth(label->width())) << "the hint is cut";
  }
}

TEST(Presentation, EveryTabReadsWholeAt1280By720) {
  PresentationOff off;
  auto window = windowOfSize({1280, 720}, true);
  EXPECT_EQ(window->size(), QSize(1280, 720)) << "the window's minimum size fits the screen";
  // The prediction heading: one line, "Pullover  99.8 %" never broken before its "%".
  QLabel* headline = window->view<gui::ExploreView>("explore")->prediction()->headlineLabel();
  EXPECT_FALSE(headline->wordWrap());
  EXPECT_LE(headline->fontMetrics().horizontalAdvance(headline->text()), headline->contentsRect().width())
      << headline->text().toStdString();
  EXPECT_GE(headline->font().pointSizeF(), QApplication::font().pointSizeF()) << "never smaller than the text";
  expectClassNamesApart(*window);
  expectEveryTabWhole(*window);
  ASSERT_TRUE(window->openBenchmark(kH100Bench)) << window->lastError().toStdString();
  for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
  expectTimingTabReadable(*window);
}

TEST(SmallScreen, At1024By700TheTimingChartStaysAboveItsSubTabs) {
  auto window = windowOfSize({1024, 700}, false);
  EXPECT_EQ(window->size(), QSize(1024, 700)) << "the window's minimum size fits the screen";
  expectEveryTabWhole(*window);
  ASSERT_TRUE(window->openBenchmark(kH100Bench)) << window->lastError().toStdString();
  for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
  expectTimingTabReadable(*window);
}

}  // namespace
}  // namespace convscope::testing
