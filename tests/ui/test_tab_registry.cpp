// The tab list (app/gui/tab_registry.h) is the only list of the window's views: every consumer
// reads it. A probe view, registered here as one more row, must appear in the tab bar, be chosen
// by each of its names, have its View-menu entry (and Ctrl+N), make the left column give way in
// presentation mode as its row says, hear each change exactly once, and have its links, the files
// it opens, its File-menu entries and its say at quit, with no word of it in the window. The standard rows are
// checked the same way, their listeners counted by wrapping them.
#include <QAction>
#include <QDir>
#include <QMenu>
#include <QMenuBar>
#include <QSet>
#include <QTabWidget>

#include <map>

#include "app/gui/headless.h"
#include "app/gui/launch_options.h"
#include "app/gui/tab_registry.h"
#include "tests/ui/ui_test_support.h"
#include "ui/common/presentation_mode.h"
#include "ui/model/model_picker.h"
#include "ui/model/variant_selector.h"
#include "ui/timing/timing_panel.h"

namespace convscope {
namespace {

using gui::Change;
using gui::LeftColumn;
using gui::TabRow;
using gui::WindowState;
using testing::loadModelAndWait;
using testing::modelPath;
using testing::waitForInference;

const QString kBench =
    QStringLiteral(CONVSCOPE_SOURCE_DIR) + "/docs/results/2026-11-23-beyond-the-course/bench-h100.json";
constexpr std::array kChanges = {Change::Model, Change::Variant, Change::TestSet, Change::Outcome, Change::Benchmark};

// A view that listens to everything and remembers what it heard.
class ProbeView : public QWidget {
 public:
  using QWidget::QWidget;
  WindowState last;
  QString selectedName;
  bool linked = false;
  bool sawTheTimingTab = false;
  QStringList opened;
  QStringList actionsRun;
  bool mayClose = false;
  int closings = 0;
};

TabRow probeRow() {
  auto row =
      gui::tab<ProbeView>({"probe", "probe-part"}, "Pro&be", LeftColumn::NotNeeded, [](const gui::TabContext& c) {
        return new ProbeView(c.window);
      }).whenSelected([](ProbeView& view, const QString& name, const gui::TabContext&) { view.selectedName = name; });
  for (Change change : kChanges) row.on(change, [](ProbeView& view, const WindowState& state) { view.last = state; });
  row.links([](ProbeView& view, gui::WindowLinks& window) {
       view.linked = true;
       view.sawTheTimingTab =
           window.view<ui::TimingPanel>("timing") != nullptr && window.viewNamed("probe-part") == &view;
     })
      .opens({"probe"},
             [](ProbeView& view, const QString& path, gui::WindowLinks&) {
               if (path.contains("damaged")) return path + ": damaged probe";
               view.opened << path;
               return QString();
             })
      .fileAction(gui::FileAction::Kind::Open, "Open &probe…", QKeySequence(),
                  [](ProbeView& view, gui::WindowLinks&) { view.actionsRun << "open"; })
      .fileAction(gui::FileAction::Kind::Export, "Export p&robe…", QKeySequence(),
                  [](ProbeView& view, gui::WindowLinks&) { view.actionsRun << "export"; })
      .atQuit(
          gui::UnsavedWork::kResults, [](ProbeView& view, gui::WindowLinks&) { return view.mayClose; },
          [](ProbeView& view) { ++view.closings; });
  return row;
}

// Deliveries per (row title, change), counted by wrapping each row's listeners.
using Deliveries = std::map<std::pair<QString, int>, int>;

std::vector<TabRow> countedRows(std::vector<TabRow> rows, Deliveries* deliveries) {
  for (TabRow& row : rows)
    for (Change change : kChanges) {
      auto& listener = row.listeners[static_cast<int>(change)];
      if (!listener) continue;
      listener = [inner = listener, key = std::make_pair(QString(row.title), static_cast<int>(change)), deliveries](
                     QWidget* view, const WindowState& state) {
        ++(*deliveries)[key];
        inner(view, state);
      };
    }
  return rows;
}

std::vector<TabRow> standardAndProbe() {
  std::vector<TabRow> rows = gui::standardTabs();
  rows.push_back(probeRow());
  return rows;
}

std::unique_ptr<gui::MainWindow> windowWith(std::vector<TabRow> rows) {
  gui::MainWindow::Options options = gui::MainWindow::Options::with(false, false);
  options.tabs = std::move(rows);
  auto window = std::make_unique<gui::MainWindow>(std::move(options));
  window->resize(1440, 900);
  window->show();
  EXPECT_TRUE(waitForInference(*window));
  return window;
}

ProbeView* probeOf(const gui::MainWindow& window) {
  const int last = static_cast<int>(window.tabRows().size()) - 1;
  return dynamic_cast<ProbeView*>(window.tabView(last));
}

TEST(TabRegistry, TheTabBarHasOneTabPerRowInOrderWithItsTitle) {
  auto window = windowWith(standardAndProbe());
  const std::vector<TabRow>& rows = window->tabRows();
  QTabWidget* tabs = window->tabWidget();
  ASSERT_EQ(tabs->count(), static_cast<int>(rows.size()));
  for (int i = 0; i < tabs->count(); ++i) {
    EXPECT_EQ(tabs->tabText(i), QString(rows[i].title));
    EXPECT_EQ(tabs->widget(i), window->tabView(i));
  }
  EXPECT_NE(probeOf(*window), nullptr);
}

TEST(TabRegistry, NamesAreUniqueAndTheTabOptionAcceptsEveryStandardName) {
  const std::vector<TabRow> rows = gui::standardTabs();
  QStringList expected;
  for (const TabRow& row : rows) expected += row.names;
  EXPECT_EQ(gui::MainWindow::tabNames(), expected);
  EXPECT_EQ(QSet<QString>(expected.begin(), expected.end()).size(), expected.size()) << "a name chooses one tab";

  gui::LaunchOptions options;
  QString message;
  ASSERT_EQ(gui::parseLaunchOptions({"convscope", "--help"}, &options, &message), gui::ParseResult::ExitOk);
  for (const QString& name : expected) EXPECT_TRUE(message.contains(name)) << name.toStdString() << " not in --help";
  EXPECT_EQ(gui::parseLaunchOptions({"convscope", "--tab", "no-such-tab"}, &options, &message),
            gui::ParseResult::UsageError);
  EXPECT_TRUE(message.contains("no-such-tab")) << message.toStdString();
}

TEST(TabRegistry, TheTabOptionSelectsEachStandardNamesTab) {
  auto window = windowWith(gui::standardTabs());
  const std::vector<TabRow>& rows = window->tabRows();
  for (size_t i = 0; i < rows.size(); ++i)
    for (const QString& name : rows[i].names) {
      SCOPED_TRACE(name.toStdString());
      window->tabWidget()->setCurrentIndex(i == 0 ? 1 : 0);  // somewhere else first
      gui::LaunchOptions options;
      QString message;
      ASSERT_EQ(gui::parseLaunchOptions({"convscope", "--tab", name.toUpper()}, &options, &message),
                gui::ParseResult::Run)
          << message.toStdString();
      EXPECT_EQ(gui::applyLaunchOptions(*window, options), QString());
      EXPECT_EQ(window->tabWidget()->currentWidget(), window->tabView(static_cast<int>(i)));
    }
}

TEST(TabRegistry, SelectTabReachesTheProbeByEachOfItsNames) {
  auto window = windowWith(standardAndProbe());
  ProbeView* probe = probeOf(*window);
  ASSERT_NE(probe, nullptr);
  for (const QString& name : {QString("probe"), QString("Probe-Part")}) {
    window->tabWidget()->setCurrentIndex(0);
    ASSERT_TRUE(window->selectTab(name));
    EXPECT_EQ(window->tabWidget()->currentWidget(), probe);
    EXPECT_EQ(probe->selectedName, name.toLower());
  }
  EXPECT_FALSE(window->selectTab("no-such-tab"));
  EXPECT_EQ(window->tabWidget()->currentWidget(), probe) << "an unknown name changes nothing";
}

TEST(TabRegistry, TheViewMenuHasEveryRowAndCtrlDigitForTheFirstNine) {
  auto window = windowWith(standardAndProbe());
  const std::vector<TabRow>& rows = window->tabRows();
  ASSERT_GE(rows.size(), 10u) << "the probe must sit beyond Ctrl+9 to check the tenth and later have no digit";
  QMenu* view = nullptr;
  for (QAction* action : window->menuBar()->actions())
    if (action->text() == "&View") view = action->menu();
  ASSERT_NE(view, nullptr);
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(rows[i].title);
    QAction* entry = nullptr;
    for (QAction* action : view->actions())
      if (action->text() == QString(rows[i].title)) entry = action;
    ASSERT_NE(entry, nullptr) << "no View-menu entry";
    const QKeySequence expected = i < 9 ? QKeySequence(QString("Ctrl+%1").arg(i + 1)) : QKeySequence();
    EXPECT_EQ(entry->shortcut(), expected);
    window->tabWidget()->setCurrentIndex(i == 0 ? 1 : 0);
    entry->trigger();
    EXPECT_EQ(window->tabWidget()->currentWidget(), window->tabView(static_cast<int>(i)));
  }
}

TEST(TabRegistry, InPresentationTheLeftColumnStaysExactlyForTheRowsThatNeedIt) {
  struct PresentationOff {
    ~PresentationOff() { ui::setPresentationMode(false); }
  } off;
  auto window = windowWith(standardAndProbe());
  const std::vector<TabRow>& rows = window->tabRows();
  ASSERT_EQ(rows.back().leftColumn, LeftColumn::NotNeeded) << "the probe checks the column gives way";
  ASSERT_EQ(rows.front().leftColumn, LeftColumn::Needed) << "the first tab checks the column stays";
  window->setPresentation(true);
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(rows[i].title);
    window->tabWidget()->setCurrentIndex(static_cast<int>(i));
    EXPECT_EQ(window->modelPicker()->isVisible(), rows[i].leftColumn == LeftColumn::Needed);
  }
  window->setPresentation(false);
  for (size_t i = 0; i < rows.size(); ++i) {
    window->tabWidget()->setCurrentIndex(static_cast<int>(i));
    EXPECT_TRUE(window->modelPicker()->isVisible()) << rows[i].title << ": out of presentation the column stays";
  }
}

// After `act`, every row that listens to `change` has heard it exactly once, and no other change
// reached anyone more than `act` explains (checked by the caller).
void expectOneDeliveryEach(const gui::MainWindow& window, const Deliveries& before, const Deliveries& after,
                           Change change) {
  int listeners = 0;
  for (const TabRow& row : window.tabRows()) {
    const auto key = std::make_pair(QString(row.title), static_cast<int>(change));
    const int delta = (after.contains(key) ? after.at(key) : 0) - (before.contains(key) ? before.at(key) : 0);
    SCOPED_TRACE(std::string(row.title) + ", " + gui::changeName(change).toStdString());
    EXPECT_EQ(delta, row.listensTo(change) ? 1 : 0);
    listeners += row.listensTo(change);
  }
  EXPECT_GE(listeners, 2) << "the probe and at least one standard view listen to it";
}

TEST(TabRegistry, EveryChangeReachesEveryListenerOnceWithTheWindowsState) {
  Deliveries deliveries;
  auto window = windowWith(countedRows(standardAndProbe(), &deliveries));
  ProbeView* probe = probeOf(*window);
  ASSERT_NE(probe, nullptr);
  ASSERT_NE(window->model(), nullptr) << window->lastError().toStdString();

  // The test set arrived once while the window opened.
  if (window->testSet()) {
    expectOneDeliveryEach(*window, {}, deliveries, Change::TestSet);
    EXPECT_EQ(probe->last.testSet, window->testSet());
    EXPECT_EQ(probe->last.classNames, window->classNames());
  }

  Deliveries before = deliveries;
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("course-low")));
  ASSERT_TRUE(waitForInference(*window));
  expectOneDeliveryEach(*window, before, deliveries, Change::Model);
  EXPECT_EQ(probe->last.model, window->model());
  EXPECT_TRUE(probe->last.modelPath.endsWith("course-low.onnx")) << probe->last.modelPath.toStdString();

  before = deliveries;
  const QString variant = window->variantSelector()->currentVariant();
  window->variantSelector()->selectNext();
  if (window->variantSelector()->currentVariant() == variant) window->variantSelector()->selectPrevious();  // the last
  ASSERT_NE(window->variantSelector()->currentVariant(), variant) << "needs a second variant";
  ASSERT_TRUE(waitForInference(*window));
  expectOneDeliveryEach(*window, before, deliveries, Change::Variant);
  EXPECT_EQ(probe->last.variant, window->variantSelector()->currentVariant());

  if (window->testSet()) {
    before = deliveries;
    ASSERT_TRUE(window->selectTestImage(window->testSet()->count() - 1));
    ASSERT_TRUE(waitForInference(*window));
    expectOneDeliveryEach(*window, before, deliveries, Change::Outcome);
    ASSERT_NE(probe->last.outcome, nullptr);
  }

  before = deliveries;
  ASSERT_TRUE(window->openBenchmark(kBench)) << window->lastError().toStdString();
  expectOneDeliveryEach(*window, before, deliveries, Change::Benchmark);
  EXPECT_EQ(probe->last.benchmark, window->view<ui::TimingPanel>("timing")->report());
  EXPECT_EQ(probe->last.benchmarkName, "bench-h100.json");
}

TEST(TabRegistry, AProbesLinksFilesMenuEntriesAndQuitHooksWorkWithNoWordOfItInTheWindow) {
  auto window = windowWith(standardAndProbe());
  ProbeView* probe = probeOf(*window);
  ASSERT_NE(probe, nullptr);
  EXPECT_TRUE(probe->linked);
  EXPECT_TRUE(probe->sawTheTimingTab) << "links find the other tabs' views by name";

  const QString file = QDir::temp().filePath("a.probe");
  EXPECT_TRUE(window->openFile(file));
  EXPECT_EQ(probe->opened, QStringList{file});
  EXPECT_FALSE(window->openFile(QDir::temp().filePath("damaged.PROBE"))) << "suffixes match in any case";
  EXPECT_TRUE(window->lastError().endsWith("damaged.PROBE: damaged probe")) << window->lastError().toStdString();

  // Its File-menu entries sit with the other tabs' opens and exports, in the tabs' order.
  QMenu* fileMenu = window->menuBar()->actions().front()->menu();
  ASSERT_NE(fileMenu, nullptr);
  QStringList texts;
  for (QAction* action : fileMenu->actions())
    if (!action->isSeparator()) texts << action->text();
  const qsizetype openProbe = texts.indexOf("Open &probe…"), exportProbe = texts.indexOf("Export p&robe…");
  ASSERT_GE(openProbe, 0) << texts.join(" | ").toStdString();
  ASSERT_GE(exportProbe, 0);
  EXPECT_EQ(texts[openProbe - 1], "Open class &results folder…");
  EXPECT_EQ(texts[openProbe + 1], "&Recent files");
  EXPECT_EQ(texts[exportProbe - 1], "Export class &evidence…");
  EXPECT_EQ(texts[exportProbe + 1], "&Quit");
  for (QAction* action : fileMenu->actions())
    if (action->text() == "Open &probe…" || action->text() == "Export p&robe…") action->trigger();
  EXPECT_EQ(probe->actionsRun, (QStringList{"open", "export"}));

  // Its unsaved work keeps the window open; once it may close, its long work is stopped once.
  EXPECT_FALSE(window->close());
  EXPECT_TRUE(window->isVisible());
  EXPECT_EQ(probe->closings, 0);
  probe->mayClose = true;
  EXPECT_TRUE(window->close());
  EXPECT_EQ(probe->closings, 1);
}

}  // namespace
}  // namespace convscope
