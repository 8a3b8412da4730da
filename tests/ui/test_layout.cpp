// The layout rules of issue 30, checked on every tab and sub-tab at the sizes a class meets (a
// 1024x700 classroom projector, a 1440x900 laptop, presentation mode on a 1440x900 and a 1920x1080
// projector), with the H100's benchmark (14 variants, its roofs, its PyTorch peer), a kernel and a
// class's published leaderboard open as in the walkthrough: the tab bar stays where it is; no text
// is cut (a label narrower than its text, a word-wrapped label shorter than its lines, a button
// narrower than its text, a table header narrower than its title); every chart keeps a plot of a
// least size, its axis captions, titles, legend and labels inside it, no label over another or
// across a bar's end, no bar thinner than 12 px. What the checks find is named with the tab and
// the size, so that a failure says where to look.
#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QAbstractButton>
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>

#include "tests/ui/ui_test_support.h"
#include "ui/common/presentation_mode.h"
#include "ui/maps/layer_maps_widget.h"

namespace convscope::testing {
namespace {

// The least plot a chart may keep (its axes' rectangle): narrower or lower, lines and bars are
// unreadable (the walkthrough saw a plot of 100 px beside its legend, bars 10 px tall).
constexpr int kLeastPlotWidth = 240;
constexpr int kLeastPlotHeight = 120;

struct Setting {
  QSize size;
  bool presentation;
  std::string name() const {
    return std::to_string(size.width()) + "x" + std::to_string(size.height()) + (presentation ? " presentation" : "");
  }
};

struct PresentationOff {
  ~PresentationOff() { ui::setPresentationMode(false); }
};

void settle() {
  for (int i = 0; i < 6; ++i) {
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
  }
}

// Shown to the user: visible in the window and not scrolled out of a scroll area's view (a label
// in a scrolled list is read by scrolling, and is not cut).
bool shown(const QWidget* widget, const QWidget* window) {
  if (!widget->isVisibleTo(window) || widget->width() <= 0 || widget->height() <= 0) return false;
  for (const QWidget* w = widget; w && w != window; w = w->parentWidget())
    if (!w->isVisible()) return false;
  return true;
}

// Inside a scroll area that scrolls that way: its text is reached by scrolling, not cut.
bool scrollsHorizontally(const QWidget* widget) {
  for (const QWidget* w = widget->parentWidget(); w; w = w->parentWidget())
    if (const auto* area = qobject_cast<const QAbstractScrollArea*>(w))
      if (area->horizontalScrollBarPolicy() != Qt::ScrollBarAlwaysOff) return true;
  return false;
}

QString where(const QWidget* widget) {
  QStringList path;
  for (const QObject* o = widget; o; o = o->parent())
    if (!o->objectName().isEmpty() || o == widget) path.prepend(o->metaObject()->className());
  return path.mid(std::max<qsizetype>(0, path.size() - 3)).join('/');
}

void expectTextFits(QWidget& window) {
  for (QLabel* label : window.findChildren<QLabel*>()) {
    if (!shown(label, &window) || label->text().isEmpty() || !label->pixmap().isNull()) continue;
    SCOPED_TRACE(label->text().left(80).toStdString());
    if (label->wordWrap()) {
      EXPECT_GE(label->height() + 1, label->heightForWidth(label->width()))
          << where(label).toStdString() << ": the wrapped text needs more lines than the label shows";
    } else if (!scrollsHorizontally(label)) {
      EXPECT_GE(label->width() + 1, label->sizeHint().width())
          << where(label).toStdString() << ": the label is narrower than its text";
    }
  }
  // The maps' titles are painted, not labels: each is whole on its lines ("... sees it · 4…" at
  // 1024x700 beside the prediction).
  for (ui::LayerMapsWidget* layer : window.findChildren<ui::LayerMapsWidget*>()) {
    if (!shown(layer, &window)) continue;
    EXPECT_EQ(layer->titleLines(layer->width()).join(' '), layer->title())
        << "the maps' title '" << layer->title().toStdString() << "' is cut";
  }
  for (QAbstractButton* button : window.findChildren<QAbstractButton*>()) {
    if (!shown(button, &window) || button->text().isEmpty() || scrollsHorizontally(button)) continue;
    EXPECT_GE(button->width() + 1, button->sizeHint().width())
        << button->text().toStdString() << ": the button is narrower than its text";
  }
  for (QTableView* table : window.findChildren<QTableView*>()) {
    if (!shown(table, &window) || !table->model()) continue;
    QHeaderView* header = table->horizontalHeader();
    if (!header->isVisible()) continue;
    for (int section = 0; section < header->count(); ++section) {
      if (header->isSectionHidden(section)) continue;
      const QString title = table->model()->headerData(section, Qt::Horizontal).toString();
      if (title.isEmpty()) continue;
      const QFontMetrics metrics(header->font());
      int widest = 0;  // a header may break its title onto lines of its own
      for (const QString& line : title.split('\n')) widest = std::max(widest, metrics.horizontalAdvance(line));
      EXPECT_LE(widest, header->sectionSize(section))
          << where(table).toStdString() << ": the column '" << title.toStdString() << "' is cut";
    }
  }
}

// The rectangle a text item of a chart covers, in the chart's pixels.
QRect textItemRect(QCPItemText* item) {
  const QPointF at = item->position->pixelPosition();
  const QFontMetrics metrics(item->font());
  QRect box = metrics.boundingRect(QRect(), Qt::TextDontClip | item->textAlignment(), item->text());
  box.adjust(-item->padding().left(), -item->padding().top(), item->padding().right(), item->padding().bottom());
  const Qt::Alignment align = item->positionAlignment();
  QPointF topLeft = at;
  if (align & Qt::AlignHCenter) topLeft.rx() -= box.width() / 2.0;
  if (align & Qt::AlignRight) topLeft.rx() -= box.width();
  if (align & Qt::AlignVCenter) topLeft.ry() -= box.height() / 2.0;
  if (align & Qt::AlignBottom) topLeft.ry() -= box.height();
  return QRect(topLeft.toPoint(), box.size());
}

// Every bar of every QCPBars of a chart, in pixels, and how thick each is across its key axis.
struct BarRects {
  std::vector<QRectF> rects;
  std::vector<double> thickness;
};
BarRects barRects(QCustomPlot& plot) {
  BarRects found;
  for (int p = 0; p < plot.plottableCount(); ++p) {
    auto* bars = qobject_cast<QCPBars*>(plot.plottable(p));
    if (!bars || !bars->visible()) continue;
    QCPAxis* key = bars->keyAxis();
    QCPAxis* value = bars->valueAxis();
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) {
      const double k0 = key->coordToPixel(it->key - bars->width() / 2),
                   k1 = key->coordToPixel(it->key + bars->width() / 2);
      const double v0 = value->coordToPixel(bars->baseValue()), v1 = value->coordToPixel(it->value);
      found.rects.push_back(key->orientation() == Qt::Horizontal
                                ? QRectF(QPointF(k0, v0), QPointF(k1, v1)).normalized()
                                : QRectF(QPointF(v0, k0), QPointF(v1, k1)).normalized());
      found.thickness.push_back(std::abs(k1 - k0));
    }
  }
  return found;
}

void expectChartsReadable(QWidget& window) {
  for (QCustomPlot* plot : window.findChildren<QCustomPlot*>()) {
    if (!shown(plot, &window)) continue;
    plot->replot(QCustomPlot::rpImmediateRefresh);
    const std::string name = plot->metaObject()->className();
    SCOPED_TRACE(name);
    const QRect axes = plot->axisRect()->rect();
    EXPECT_GE(axes.width(), kLeastPlotWidth) << name << ": the plot is a sliver (" << axes.width() << " px wide)";
    EXPECT_GE(axes.height(), kLeastPlotHeight) << name << ": the plot is a strip (" << axes.height() << " px high)";
    for (QCPAxis* axis : plot->axisRect()->axes()) {
      if (!axis->visible() || axis->label().isEmpty()) continue;
      const QFontMetrics metrics(axis->labelFont());
      const int length = axis->orientation() == Qt::Horizontal ? axes.width() : axes.height();
      for (const QString& line : axis->label().split('\n'))
        EXPECT_LE(metrics.horizontalAdvance(line), length + 2)
            << name << ": the axis caption '" << line.toStdString() << "' is longer than its axis";
    }
    const QRect inside = plot->rect().adjusted(-1, -1, 1, 1);
    if (plot->legend && plot->legend->visible()) {
      EXPECT_TRUE(inside.contains(plot->legend->outerRect())) << name << ": the legend runs off the chart";
      for (int i = 0; i < plot->legend->itemCount(); ++i) {
        auto* item = plot->legend->item(i);
        if (!item || !item->visible()) continue;
        EXPECT_TRUE(inside.contains(item->outerRect())) << name << ": a legend entry is cut";
        if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(item)) {
          const int needed = QFontMetrics(entry->font()).horizontalAdvance(entry->plottable()->name());
          EXPECT_GE(item->outerRect().width() + 2, needed)
              << name << ": the legend entry '" << entry->plottable()->name().toStdString() << "' is cut";
        }
      }
    }
    for (int e = 0; e < plot->plotLayout()->elementCount(); ++e) {
      auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(e));
      if (!title) continue;
      const QFontMetrics metrics(title->font());
      for (const QString& line : title->text().split('\n'))
        EXPECT_LE(metrics.horizontalAdvance(line), plot->width())
            << name << ": the title line '" << line.toStdString() << "' is wider than the chart";
    }
    // No two labels print over each other (the class chart's reference lines did).
    std::vector<std::pair<QRectF, QString>> glyphRects;
    for (int i = 0; i < plot->itemCount(); ++i) {
      auto* text = qobject_cast<QCPItemText*>(plot->item(i));
      if (!text || !text->visible() || text->text().isEmpty()) continue;
      const QRectF glyphs = QRectF(textItemRect(text)).marginsRemoved(QMarginsF(text->padding()));
      for (const auto& [other, otherText] : glyphRects)
        EXPECT_FALSE(glyphs.adjusted(1, 1, -1, -1).intersects(other))
            << name << ": the labels '" << text->text().toStdString() << "' and '" << otherText.toStdString()
            << "' print over each other";
      glyphRects.emplace_back(glyphs, text->text());
    }
    const BarRects found = barRects(*plot);
    const std::vector<QRectF>& bars = found.rects;
    for (double thickness : found.thickness)  // a bar to see, not a hairline (the walkthrough: 10 px)
      EXPECT_GE(thickness, 12.0) << name << ": a bar " << thickness << " px thick";
    for (int i = 0; i < plot->itemCount(); ++i) {
      auto* text = qobject_cast<QCPItemText*>(plot->item(i));
      if (!text || !text->visible() || text->text().isEmpty()) continue;
      const QRect box = textItemRect(text);
      EXPECT_TRUE(inside.contains(box)) << name << ": the label '" << text->text().toStdString()
                                        << "' runs off the chart";
      // Inside the box, the text itself (not its padding) is clear of every bar.
      const QRectF glyphs = QRectF(box).marginsRemoved(QMarginsF(text->padding()));
      for (const QRectF& bar : bars)  // inside a bar (a long one's own figure, in white) is meant
        EXPECT_FALSE(glyphs.intersects(bar.adjusted(0.5, 0.5, -0.5, -0.5)) && !bar.contains(glyphs))
            << name << ": the label '" << text->text().toStdString() << "' lies across a bar's end";
    }
  }
}

class Layout : public ::testing::TestWithParam<Setting> {};

TEST_P(Layout, EveryTabFitsItsTextAndKeepsItsPlotsReadable) {
  PresentationOff off;
  const Setting setting = GetParam();
  auto window = openWindow();
  ASSERT_TRUE(window->openBenchmark(CONVSCOPE_SOURCE_DIR "/docs/results/2026-11-26-end-to-end-peer/bench.json"))
      << window->lastError().toStdString();
  ASSERT_TRUE(window->openFile(CONVSCOPE_SOURCE_DIR "/examples/kernels/tiled_conv.cu"));
  // The class's folder at a long path, as a course's results folder often is (a checkout in
  // /tmp/ci-clone cut the folder's name off at 1440x900 in presentation mode).
  QTemporaryDir scratch;
  const QString classFolder =
      scratch.filePath("courses/gpu-programming-autumn-2026/milestone-1-forward-convolution/graded/class-of-20");
  ASSERT_TRUE(QDir().mkpath(classFolder));
  const QDir published(CONVSCOPE_SOURCE_DIR "/docs/results/2026-11-26-class-mode/class-of-20");
  for (const QString& name : published.entryList(QDir::Files))
    ASSERT_TRUE(QFile::copy(published.filePath(name), classFolder + "/" + name)) << name.toStdString();
  ASSERT_TRUE(window->openResultsFolder(classFolder)) << window->lastError().toStdString();
  if (setting.presentation) window->setPresentation(true);
  window->resize(setting.size);
  ASSERT_TRUE(waitForInference(*window));
  settle();
  ASSERT_EQ(window->size(), setting.size) << "the window fits the screen";

  QTabWidget* tabs = window->tabWidget();
  QTabBar* bar = window->mainTabBar();
  std::vector<QRect> firstPlaces;
  for (int t = 0; t < tabs->count(); ++t) {
    tabs->setCurrentIndex(t);
    settle();
    SCOPED_TRACE(setting.name() + ", tab " + tabs->tabText(t).toStdString());
    // The bar: every tab in sight, each at the same place whichever tab is shown.
    std::vector<QRect> places;
    for (int i = 0; i < bar->count(); ++i) {
      EXPECT_TRUE(bar->rect().contains(bar->tabRect(i))) << bar->tabText(i).toStdString() << " is off the bar";
      places.emplace_back(bar->mapTo(window.get(), bar->tabRect(i).topLeft()), bar->tabRect(i).size());
    }
    if (t == 0) firstPlaces = places;
    EXPECT_EQ(places, firstPlaces) << "the tabs moved";
    // And every page of the tabs inside the view (the Timing tab's charts, the Roofline's
    // staircase, the kernel's Steps, History and PTX / SASS, ...), one after another.
    QList<QTabWidget*> inner;
    for (QTabWidget* sub : tabs->currentWidget()->findChildren<QTabWidget*>())
      if (shown(sub, window.get())) inner << sub;
    if (inner.isEmpty()) {
      expectTextFits(*window);
      expectChartsReadable(*window);
    }
    for (QTabWidget* sub : inner) {
      const int before = sub->currentIndex();
      for (int page = 0; page < sub->count(); ++page) {
        sub->setCurrentIndex(page);
        settle();
        SCOPED_TRACE("page " + sub->tabText(page).toStdString());
        expectTextFits(*window);
        expectChartsReadable(*window);
      }
      sub->setCurrentIndex(before);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ThreeSizes, Layout,
                         ::testing::Values(Setting{{1024, 700}, false}, Setting{{1440, 900}, false},
                                           Setting{{1440, 900}, true}, Setting{{1920, 1080}, true}),
                         [](const ::testing::TestParamInfo<Setting>& info) {
                           return std::to_string(info.param.size.width()) + "x" +
                                  std::to_string(info.param.size.height()) +
                                  (info.param.presentation ? "Presentation" : "");
                         });

}  // namespace
}  // namespace convscope::testing
