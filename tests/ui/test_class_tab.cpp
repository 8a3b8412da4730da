// The Class tab (ui/class/class_panel.h) used as course staff use it: a results folder opened in
// the window (a real one, graded here by convscope-cli grade without a GPU, and hand-written
// results with op times, marked as made-up fixtures), its ranking table in the leaderboard's
// order and sorted by a click on a column title, the distribution chart's dots and reference
// lines, a result that arrives while the folder is open, a broken or oversized result named in the
// banner, a row that opens its kernel and adds its times to the Timing tab, the exports, and a
// folder of submissions graded from the tab itself (progress, cancel, the same statuses as the CLI).
#include <QAction>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QImage>
#include <QMenu>
#include <QMenuBar>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/core/conv/user_kernel_compiler.h"
#include "app/core/conv/variant_table.h"
#include "app/core/grading/class_leaderboard.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/benchmark_series.h"
#include "ui/charts/class_distribution_chart.h"
#include "ui/charts/timing_line_chart.h"
#include "ui/class/class_grading_run.h"
#include "ui/class/class_panel.h"
#include "ui/kernel/user_kernel_panel.h"
#include "ui/timing/timing_panel.h"

namespace convscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ui::ClassPanel;

const fs::path kExamples = fs::path(CONVSCOPE_SOURCE_DIR) / "examples/kernels";
const fs::path kTestKernels = fs::path(CONVSCOPE_SOURCE_DIR) / "tests/data/kernels";

void writeText(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string readText(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The window as a test uses it, without waiting for a model: the Class tab needs none.
std::unique_ptr<gui::MainWindow> classWindow() {
  auto window = std::make_unique<gui::MainWindow>(gui::MainWindow::Options::with(false, false));
  window->resize(1440, 900);
  window->show();
  return window;
}

QStringList columnTexts(const QTableWidget& table, int column) {
  QStringList texts;
  for (int r = 0; r < table.rowCount(); ++r) texts << table.item(r, column)->text();
  return texts;
}

// Made-up timed results (not measured anywhere): five submissions on an "H100" with the course's
// reference, one on an "A100" without. Times in seconds at batch 10,000; the smaller batches are
// that over 100 and over 10. In milliseconds "100" sorts before "20" as text: the table must sort
// numbers as numbers.
struct FixtureSubmission {
  std::string id, status, gpu;
  std::optional<double> seconds;
};
const std::vector<FixtureSubmission> kFixture = {
    {"slow", kGradePassed, "H100", 0.100},           {"fast", kGradePassed, "H100", 0.010},
    {"middle", kGradePassed, "H100", 0.020},         {"wrong-but-fast", kGradeWrong, "H100", 0.001},
    {"faulty", kGradeFaulted, "H100", std::nullopt}, {"elsewhere", kGradePassed, "A100", 0.005},
};
const std::map<std::string, double> kReference = {{"gpu-baseline", 0.060}, {"gpu-tiled", 0.025}, {"cudnn", 0.015}};

void writeFixtureSubmission(const fs::path& results, const FixtureSubmission& s, const fs::path& kernel) {
  json r = {{"schema", 1},
            {"kind", "convscope-class-submission"},
            {"id", s.id},
            {"file", s.id + ".cu"},
            {"path", kernel.string()},
            {"status", s.status},
            {"message", "made-up fixture " + s.id},
            {"gpu", {{"name", s.gpu}}},
            {"accuracy", s.status == kGradePassed ? json(0.9012) : json(nullptr)},
            {"registers", 40},
            {"occupancy", 0.75},
            {"opTimeSeconds", json::object()}};
  if (s.seconds) r["opTimeSeconds"] = {{"100", *s.seconds / 100}, {"1000", *s.seconds / 10}, {"10000", *s.seconds}};
  writeText(results / "submissions" / (s.id + ".json"), r.dump(2));
}

struct FixtureFolder {
  QTemporaryDir temp;
  fs::path results = fs::path(temp.path().toStdString()) / "results";
  fs::path kernels = fs::path(temp.path().toStdString()) / "kernels";
  FixtureFolder() {
    for (const FixtureSubmission& s : kFixture) {
      fs::create_directories(kernels);
      fs::copy_file(kExamples / "naive_conv.cu", kernels / (s.id + ".cu"));
      writeFixtureSubmission(results, s, kernels / (s.id + ".cu"));
    }
    json variants = json::array();
    for (const auto& [id, seconds] : kReference)
      variants.push_back({{"id", id},
                          {"displayName", "ref " + id},
                          {"opTimeSeconds", {{"100", seconds / 100}, {"1000", seconds / 10}, {"10000", seconds}}}});
    writeText(results / "reference.json",
              json({{"schema", 1}, {"gpu", {{"name", "H100"}}}, {"variants", variants}}).dump(2));
  }
  QString folder() const { return QString::fromStdString(results.string()); }
};

int groupOf(const ClassPanel& panel, const QString& gpu) {
  for (int g = 0; g < panel.groupCount(); ++g)
    if (panel.groupTabs()->tabText(g) == gpu) return g;
  return -1;
}

int rowOf(const QTableWidget& table, const QString& id) {
  for (int r = 0; r < table.rowCount(); ++r)
    if (table.item(r, ClassPanel::Id)->text() == id) return r;
  return -1;
}

void clickHeader(QTableWidget& table, int column) {
  QHeaderView* header = table.horizontalHeader();
  const QPoint at(header->sectionViewportPosition(column) + header->sectionSize(column) / 2, header->height() / 2);
  QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, at);
}

// Waits for the panel's next read of its folder (the watcher's pause included).
bool waitForReload(ClassPanel& panel) {
  QSignalSpy reloaded(&panel, &ClassPanel::reloaded);
  return reloaded.wait(10000);
}

TEST(ClassTab, AGradedFolderShowsTheLeaderboardsRowsAndAClickOpensTheKernel) {
  QTemporaryDir temp;
  const fs::path root = temp.path().toStdString();
  const fs::path dir = root / "class", results = root / "results";
  fs::create_directories(dir / "bob-tiled");
  fs::copy_file(kExamples / "naive_conv.cu", dir / "alice-naive.cu");
  fs::copy_file(kExamples / "tiled_conv.cu", dir / "bob-tiled/my_conv.cu");
  fs::copy_file(kTestKernels / "syntax_error.cu", dir / "dave-syntax.cu");
  fs::copy_file(kTestKernels / "wrong_signature.cu", dir / "erin-signature.cu");
  QProcess grade;
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert("CUDA_VISIBLE_DEVICES", "");  // compile-only: fast on a GPU machine too
  grade.setProcessEnvironment(environment);
  grade.setProcessChannelMode(QProcess::MergedChannels);
  grade.start(CONVSCOPE_CLI_PATH, {"grade", QString::fromStdString(dir.string()), "--out",
                                   QString::fromStdString(results.string()), "--jobs", "2"});
  ASSERT_TRUE(grade.waitForFinished(240000));
  ASSERT_EQ(grade.exitCode(), 0) << grade.readAll().toStdString();
  const json board = json::parse(readText(results / "leaderboard.json"));

  auto window = classWindow();
  // Both ways to the folder dialog are there: the File menu's entry and the tab's button.
  QStringList fileMenu;
  for (QAction* action : window->menuBar()->actions().first()->menu()->actions()) fileMenu << action->text();
  EXPECT_TRUE(fileMenu.contains("Open class &results folder…")) << fileMenu.join(" | ").toStdString();
  QStringList buttons;
  for (const QPushButton* button : window->view<ui::ClassPanel>("class")->findChildren<QPushButton*>())
    buttons << button->text();
  EXPECT_TRUE(buttons.contains("Open results folder…")) << buttons.join(" | ").toStdString();
  ASSERT_TRUE(window->openFile(QString::fromStdString(results.string()))) << window->lastError().toStdString();
  ClassPanel* panel = window->view<ui::ClassPanel>("class");
  EXPECT_EQ(window->tabWidget()->currentWidget(), panel);
  EXPECT_TRUE(panel->bannerText().isEmpty()) << panel->bannerText().toStdString();
  ASSERT_EQ(panel->groupCount(), static_cast<int>(board["groups"].size()));
  ASSERT_EQ(panel->groupCount(), 1);  // graded without a GPU: one "no GPU" table
  EXPECT_EQ(panel->summaryText(0).toStdString(), board["groups"][0]["summary"].get<std::string>());
  QTableWidget* table = panel->table(0);
  QStringList ids, statuses;
  for (const json& row : board["groups"][0]["rows"]) {
    ids << QString::fromStdString(row["id"].get<std::string>());
    statuses << QString::fromStdString(row["status"].get<std::string>());
  }
  EXPECT_EQ(columnTexts(*table, ClassPanel::Id), ids);
  EXPECT_EQ(columnTexts(*table, ClassPanel::Status), statuses);
  if (userKernelCompiler().unavailableReason().empty()) {
    EXPECT_TRUE(statuses.contains(kGradeNoGpu));
    EXPECT_TRUE(statuses.contains(kGradeDoesNotCompile));
  } else {  // a build without CUDA: nothing is compiled
    EXPECT_TRUE(statuses.contains(kGradeNoCompiler));
  }
  // Nothing was timed: no dots, and the chart says why there are no lines.
  EXPECT_TRUE(panel->chart(0)->points().empty());
  EXPECT_TRUE(panel->chart(0)->referenceLines().empty());
  EXPECT_TRUE(panel->chart(0)->titleText().contains("graded without a GPU"))
      << panel->chart(0)->titleText().toStdString();

  // A double-click on bob's row opens his file (the one in his folder) in the Your kernel tab.
  const int bob = rowOf(*table, "bob-tiled");
  ASSERT_GE(bob, 0);
  ASSERT_TRUE(QTest::qWaitForWindowExposed(window.get()));
  table->scrollToItem(table->item(bob, ClassPanel::Id));
  const QRect cell = table->visualRect(table->model()->index(bob, ClassPanel::Id));
  ASSERT_TRUE(table->viewport()->rect().contains(cell.center()));
  // A double-click as the system delivers it: a click, then the second press as a double-click.
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
  QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, cell.center());
  EXPECT_TRUE(window->lastError().isEmpty()) << window->lastError().toStdString();
  EXPECT_EQ(window->view<ui::UserKernelPanel>("kernel")->file().toStdString(),
            fs::absolute(dir / "bob-tiled/my_conv.cu").string());
  EXPECT_EQ(window->tabWidget()->currentWidget(), window->view<ui::UserKernelPanel>("kernel"));
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->report(), nullptr);  // not timed: nothing joins the Timing tab

  // A file that left DIR since grading: the window says so, naming it.
  fs::remove(dir / "alice-naive.cu");
  window->selectTab("class");
  panel->activateRow(0, rowOf(*table, "alice-naive"));
  EXPECT_TRUE(window->lastError().contains("alice-naive.cu")) << window->lastError().toStdString();
  EXPECT_TRUE(window->lastError().contains("gone")) << window->lastError().toStdString();
  EXPECT_EQ(window->view<ui::UserKernelPanel>("kernel")->file().toStdString(),
            fs::absolute(dir / "bob-tiled/my_conv.cu").string());
}

// What a teacher opens in class: a published board (leaderboard.json, no submissions/), the
// committed H100 class of 20. Its rows show in the published order, the timed ones as dots among
// the reference lines, and the summary says it is the published board.
TEST(ClassTab, APublishedLeaderboardWithoutSubmissionsShowsAsPublished) {
  const fs::path folder = fs::path(CONVSCOPE_SOURCE_DIR) / "docs/results/2026-11-26-class-mode/class-of-20";
  ASSERT_FALSE(fs::exists(folder / "submissions"));
  const json board = json::parse(readText(folder / "leaderboard.json"));
  auto window = classWindow();
  ASSERT_TRUE(window->openFile(QString::fromStdString(folder.string()))) << window->lastError().toStdString();
  ClassPanel* panel = window->view<ui::ClassPanel>("class");
  EXPECT_TRUE(panel->bannerText().isEmpty()) << panel->bannerText().toStdString();
  ASSERT_EQ(panel->groupCount(), 1);
  EXPECT_TRUE(panel->summaryText(0).contains("published leaderboard")) << panel->summaryText(0).toStdString();
  QStringList ids, statuses;
  int timed = 0;
  for (const json& row : board["groups"][0]["rows"]) {
    ids << QString::fromStdString(row["id"].get<std::string>());
    statuses << QString::fromStdString(row["status"].get<std::string>());
    timed += row["opTimeSeconds"].contains("10000") && row["opTimeSeconds"]["10000"].is_number();
  }
  ASSERT_EQ(ids.size(), 20);
  EXPECT_EQ(columnTexts(*panel->table(0), ClassPanel::Id), ids);
  EXPECT_EQ(columnTexts(*panel->table(0), ClassPanel::Status), statuses);
  EXPECT_EQ(static_cast<int>(panel->chart(0)->points().size()), timed);
  EXPECT_GT(timed, 0);
  EXPECT_FALSE(panel->chart(0)->referenceLines().empty());  // the course's variants, timed on that H100
}

TEST(ClassTab, TimedResultsAreRankedSortedChartedWithReferenceLinesAndAddedToTheTimingTab) {
  FixtureFolder fixture;
  auto window = classWindow();
  ASSERT_TRUE(window->openResultsFolder(fixture.folder())) << window->lastError().toStdString();
  ClassPanel* panel = window->view<ui::ClassPanel>("class");
  ASSERT_EQ(panel->groupCount(), 2);  // results of two GPUs are never ranked together
  const int h100 = groupOf(*panel, "H100"), a100 = groupOf(*panel, "A100");
  ASSERT_GE(h100, 0);
  ASSERT_GE(a100, 0);
  QTableWidget* table = panel->table(h100);

  // The leaderboard's order, worked out here: passed by time, then the others by status.
  EXPECT_EQ(columnTexts(*table, ClassPanel::Id), QStringList({"fast", "middle", "slow", "wrong-but-fast", "faulty"}));
  // Only the correct ones have a rank; the failed ones show their status in red, the passed in green.
  EXPECT_EQ(columnTexts(*table, ClassPanel::Rank), QStringList({"1", "2", "3", "—", "—"}));
  for (int r = 0; r < table->rowCount(); ++r) {
    const QColor colour = table->item(r, ClassPanel::Status)->foreground().color();
    const bool passed = table->item(r, ClassPanel::Status)->text() == kGradePassed;
    EXPECT_EQ(passed, colour.green() > colour.red()) << r;
  }
  const int fast = rowOf(*table, "fast");
  EXPECT_DOUBLE_EQ(table->item(fast, ClassPanel::SpeedupOverBaseline)->text().toDouble(),
                   QString::number(0.060 / 0.010, 'g', 3).toDouble());
  EXPECT_DOUBLE_EQ(table->item(fast, ClassPanel::SpeedupOverCudnn)->text().toDouble(), 1.5);
  EXPECT_DOUBLE_EQ(table->item(fast, ClassPanel::OpTime10000)->text().toDouble(), 10.0);  // ms
  EXPECT_EQ(panel->summaryText(h100), "5 submissions: 3 correct, 1 correct and faster than cuDNN on H100");

  // A click on the op-time title sorts by time (the untimed row last), a second click reverses it.
  std::vector<std::pair<double, std::string>> timed;
  for (const FixtureSubmission& s : kFixture)
    if (s.gpu == "H100" && s.seconds) timed.emplace_back(*s.seconds, s.id);
  std::sort(timed.begin(), timed.end());
  QStringList ascending;
  for (const auto& [seconds, id] : timed) ascending << QString::fromStdString(id);
  clickHeader(*table, ClassPanel::OpTime10000);
  const Qt::SortOrder firstOrder = table->horizontalHeader()->sortIndicatorOrder();
  clickHeader(*table, ClassPanel::OpTime10000);
  const Qt::SortOrder secondOrder = table->horizontalHeader()->sortIndicatorOrder();
  EXPECT_NE(firstOrder, secondOrder);
  if (secondOrder == Qt::DescendingOrder) clickHeader(*table, ClassPanel::OpTime10000);
  EXPECT_EQ(columnTexts(*table, ClassPanel::Id).mid(0, ascending.size()), ascending);
  EXPECT_EQ(columnTexts(*table, ClassPanel::Id).last(), "faulty");
  clickHeader(*table, ClassPanel::OpTime10000);
  QStringList descending = ascending;
  std::reverse(descending.begin(), descending.end());
  EXPECT_EQ(columnTexts(*table, ClassPanel::Id).mid(1), descending);  // the untimed row first
  clickHeader(*table, ClassPanel::Id);
  QStringList byName = columnTexts(*table, ClassPanel::Id);
  QStringList sortedNames = byName;
  std::sort(sortedNames.begin(), sortedNames.end());
  if (table->horizontalHeader()->sortIndicatorOrder() == Qt::DescendingOrder)
    std::reverse(sortedNames.begin(), sortedNames.end());
  EXPECT_EQ(byName, sortedNames);

  // One dot per timed submission, one labelled line per reference variant; none on the A100.
  const ui::ClassDistributionChart* chart = panel->chart(h100);
  std::vector<double> dots;
  for (const auto& point : chart->points()) dots.push_back(point.seconds);
  std::sort(dots.begin(), dots.end());
  std::vector<double> expectedDots;
  for (const auto& [seconds, id] : timed) expectedDots.push_back(seconds);
  EXPECT_EQ(dots, expectedDots);
  EXPECT_EQ(const_cast<ui::ClassDistributionChart*>(chart)->graph(0)->dataCount(), static_cast<int>(timed.size()));
  ASSERT_EQ(chart->referenceLines().size(), kReference.size());
  for (const auto& line : chart->referenceLines()) {
    const std::string id = line.name.toStdString().substr(4);  // "ref " + id
    ASSERT_TRUE(kReference.count(id)) << line.name.toStdString();
    EXPECT_DOUBLE_EQ(line.seconds, kReference.at(id));
  }
  EXPECT_EQ(const_cast<ui::ClassDistributionChart*>(chart)->itemCount(), 2 * static_cast<int>(kReference.size()));
  EXPECT_EQ(panel->chart(a100)->points().size(), 1u);
  EXPECT_TRUE(panel->chart(a100)->referenceLines().empty());
  EXPECT_TRUE(panel->chart(a100)->titleText().contains("not timed on this GPU"));

  // Enter on "middle" opens its kernel and adds its three op-time sums to the Timing tab, beside
  // the course's variants timed with the class (the Timing tab had nothing else).
  table = panel->table(h100);
  table->setFocus();
  table->setCurrentCell(rowOf(*table, "middle"), ClassPanel::Id);
  QTest::keyClick(table, Qt::Key_Return);
  EXPECT_EQ(window->view<ui::UserKernelPanel>("kernel")->file().toStdString(),
            (fixture.kernels / "middle.cu").string());
  const auto report = window->view<ui::TimingPanel>("timing")->report();
  ASSERT_NE(report, nullptr);
  for (int batch : kGradeBatches) {
    const BenchmarkRun* run = ui::findRun(*report, "middle", batch);
    ASSERT_NE(run, nullptr) << batch;
    double seconds = 0.0;
    ASSERT_TRUE(ui::runOpTime(*run, ui::kAllConvLayers, &seconds));
    EXPECT_DOUBLE_EQ(seconds, 0.020 * batch / 10000);
    EXPECT_FALSE(ui::runOpTime(*run, 0, &seconds));  // only the sum is known: no layer of its own
    const BenchmarkRun* baseline = ui::findRun(*report, "gpu-baseline", batch);
    ASSERT_NE(baseline, nullptr);
  }
  const auto& drawn = window->view<ui::TimingPanel>("timing")->lineChart()->variants();
  EXPECT_NE(std::find(drawn.begin(), drawn.end(), "middle"), drawn.end());
  EXPECT_NE(std::find(drawn.begin(), drawn.end(), "cudnn"), drawn.end());
  // A second student joins the first; choosing the first again replaces its runs.
  window->selectTab("class");
  panel->activateRow(h100, rowOf(*panel->table(h100), "fast"));
  panel->activateRow(h100, rowOf(*panel->table(h100), "middle"));
  const auto both = window->view<ui::TimingPanel>("timing")->report();
  EXPECT_EQ(
      std::count_if(both->runs.begin(), both->runs.end(), [](const BenchmarkRun& r) { return r.variant == "middle"; }),
      3);
  EXPECT_NE(ui::findRun(*both, "fast", 10000), nullptr);
}

// The re-timing of the top (retime.json): its verdict under the summary, the second time in the
// re-timed rows' tooltip; the ranking stays the first timing's.
TEST(ClassTab, TheRetimedTopShowsWhetherItsOrderHeldAndItsSecondTime) {
  FixtureFolder fixture;
  json entries = json::array();
  for (const auto& [id, second] : {std::pair<std::string, double>{"fast", 0.040}, {"middle", 0.012}}) {
    const fs::path file = fixture.results / "submissions" / (id + ".json");
    json r = json::parse(std::ifstream(file));
    r["contentHash"] = "hash-" + id;
    writeText(file, r.dump(2));
    entries.push_back({{"id", id}, {"contentHash", "hash-" + id}, {"seconds", second}});
  }
  writeText(fixture.results / "retime.json",
            json({{"schema", 1}, {"gpu", "H100"}, {"batch", 10000}, {"submissions", entries}}).dump(2));
  auto window = classWindow();
  ASSERT_TRUE(window->openResultsFolder(fixture.folder())) << window->lastError().toStdString();
  ClassPanel* panel = window->view<ui::ClassPanel>("class");
  const int h100 = groupOf(*panel, "H100");
  ASSERT_GE(h100, 0);
  QTableWidget* table = panel->table(h100);
  EXPECT_EQ(columnTexts(*table, ClassPanel::Id).mid(0, 3), QStringList({"fast", "middle", "slow"}));
  EXPECT_TRUE(panel->summaryText(h100).contains(
      "the top 2 re-timed (a submission's two timings differ by up to 300.00 %): the order changed"))
      << panel->summaryText(h100).toStdString();
  EXPECT_TRUE(table->item(rowOf(*table, "fast"), ClassPanel::OpTime10000)->toolTip().contains("40"));
  EXPECT_TRUE(table->item(rowOf(*table, "slow"), ClassPanel::OpTime10000)->toolTip().isEmpty());
}

TEST(ClassTab, ResultsThatArriveWhileOpenAppearAndABrokenOrHugeOneIsNamed) {
  FixtureFolder fixture;
  auto window = classWindow();
  ASSERT_TRUE(window->openResultsFolder(fixture.folder()));
  ClassPanel* panel = window->view<ui::ClassPanel>("class");
  const int rowsBefore = panel->table(groupOf(*panel, "H100"))->rowCount();

  // Grading writes a new result: it appears without reopening, in its place.
  writeFixtureSubmission(fixture.results, {"newcomer", kGradePassed, "H100", 0.015}, fixture.kernels / "fast.cu");
  ASSERT_TRUE(waitForReload(*panel));
  QTableWidget* table = panel->table(groupOf(*panel, "H100"));
  EXPECT_EQ(table->rowCount(), rowsBefore + 1);
  EXPECT_EQ(rowOf(*table, "newcomer"), 1);  // between fast (0.010) and middle (0.020)
  EXPECT_EQ(panel->chart(groupOf(*panel, "H100"))->points().size(), 5u);

  // A task killed mid-write: named in the banner, the rest still shown.
  writeText(fixture.results / "submissions/broken.json", "{\"schema\": 1, \"id\": ");
  ASSERT_TRUE(waitForReload(*panel));
  EXPECT_TRUE(panel->bannerText().contains("broken.json")) << panel->bannerText().toStdString();
  EXPECT_EQ(panel->table(groupOf(*panel, "H100"))->rowCount(), rowsBefore + 1);

  // A foreign JSON (an id that is a number): named with the field, the others still ranked.
  writeText(fixture.results / "submissions/foreign.json", R"({"schema": 1, "id": 5, "status": "passed"})");
  ASSERT_TRUE(waitForReload(*panel));
  EXPECT_TRUE(panel->bannerText().contains("foreign.json")) << panel->bannerText().toStdString();
  EXPECT_TRUE(panel->bannerText().contains("\"id\" is not a string")) << panel->bannerText().toStdString();
  EXPECT_EQ(panel->table(groupOf(*panel, "H100"))->rowCount(), rowsBefore + 1);
  fs::remove(fixture.results / "submissions/foreign.json");

  // A huge file is named with its size, never read.
  fs::remove(fixture.results / "submissions/broken.json");
  ASSERT_TRUE(waitForReload(*panel));
  EXPECT_TRUE(panel->bannerText().isEmpty()) << panel->bannerText().toStdString();
  { std::ofstream(fixture.results / "submissions/huge.json") << "{"; }
  fs::resize_file(fixture.results / "submissions/huge.json", kClassResultFileMaxBytes + 1);
  ASSERT_TRUE(waitForReload(*panel));
  EXPECT_TRUE(panel->bannerText().contains("huge.json")) << panel->bannerText().toStdString();
  EXPECT_TRUE(panel->bannerText().contains("too large")) << panel->bannerText().toStdString();

  // A folder that is no results folder: refused, naming it.
  QTemporaryDir empty;
  EXPECT_FALSE(window->openResultsFolder(empty.path()));
  EXPECT_TRUE(window->lastError().contains(empty.path())) << window->lastError().toStdString();
  EXPECT_TRUE(window->lastError().contains("not a class results folder"));
}

TEST(ClassTab, TheTableExportsAsCsvAndTheChartAsPngAndPdf) {
  FixtureFolder fixture;
  auto window = classWindow();
  ASSERT_TRUE(window->openResultsFolder(fixture.folder()));
  ClassPanel* panel = window->view<ui::ClassPanel>("class");
  QTemporaryDir out;
  const QString csv = out.filePath("ranking.csv"), png = out.filePath("class.png"), pdf = out.filePath("class.pdf");
  ASSERT_EQ(panel->exportCsv(csv), "");
  std::istringstream lines(readText(csv.toStdString()));
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), kFixture.size() + 1);  // a title line and one per submission
  EXPECT_EQ(rows[0].rfind("gpu,rank,id,status", 0), 0u) << rows[0];
  // The H100's rows in rank order (the A100's table comes first: the groups go by GPU name).
  std::vector<std::string> h100Order;
  for (const std::string& row : rows)
    if (row.rfind("H100,", 0) == 0) h100Order.push_back(row.substr(5, row.find(',', row.find(',', 5) + 1) - 5));
  EXPECT_EQ(h100Order, (std::vector<std::string>{"1,fast", "2,middle", "3,slow", "4,wrong-but-fast", "5,faulty"}));
  ASSERT_EQ(panel->exportChart(png, 900, 400), "");
  const QImage image(png);
  EXPECT_EQ(image.size(), QSize(900, 400) * 2);  // exportPlot renders at twice the resolution
  EXPECT_GT(testing::distinctColours(image), 3);
  ASSERT_EQ(panel->exportChart(pdf), "");
  EXPECT_TRUE(readText(pdf.toStdString()).rfind("%PDF", 0) == 0);
  EXPECT_FALSE(panel->exportCsv(out.filePath("no/such/folder/x.csv")).isEmpty());
}

// Five submissions as a class hands them in: two that compile, one that reads a file of the
// machine through #include, one that does not compile, one that breaks the contract; and a link
// that passes another student's file off as its own.
fs::path fiveSubmissions(const fs::path& root) {
  const fs::path dir = root / "class";
  fs::create_directories(dir / "bob-tiled");
  fs::copy_file(kExamples / "naive_conv.cu", dir / "alice-naive.cu");
  fs::copy_file(kExamples / "tiled_conv.cu", dir / "bob-tiled/my_conv.cu");
  writeText(dir / "carol-reads.cu", "#include \"/etc/passwd\"\n" + readText(kExamples / "naive_conv.cu"));
  fs::copy_file(kTestKernels / "syntax_error.cu", dir / "dave-syntax.cu");
  fs::copy_file(kTestKernels / "wrong_signature.cu", dir / "erin-signature.cu");
  fs::create_symlink(dir / "alice-naive.cu", dir / "mallory.cu");
  return dir;
}

std::map<std::string, std::string> statusesOf(const json& board) {
  std::map<std::string, std::string> statuses;
  for (const json& group : board["groups"])
    for (const json& row : group["rows"]) statuses[row["id"]] = row["status"];
  return statuses;
}

// The settings a test grades with: the CLI built beside the tests, compile-only on any machine.
GradingSettings testGradingSettings() {
  qputenv("CUDA_VISIBLE_DEVICES", "");  // the kernels' children: compile-only, also on a GPU machine
  GradingSettings settings = ui::ClassGradingRun::defaultSettings();
  settings.program = CONVSCOPE_CLI_PATH;
  settings.timeLimitSeconds = 60;
  return settings;
}

TEST(ClassTab, GradingAFolderFromTheTabFillsInTheRankingWithTheStatusesTheCliGives) {
  QTemporaryDir temp;
  const fs::path root = temp.path().toStdString();
  const fs::path dir = fiveSubmissions(root);
  auto window = classWindow();
  window->selectTab("class");
  ClassPanel* panel = window->view<ui::ClassPanel>("class");
  QStringList buttons;
  for (const QPushButton* button : panel->findChildren<QPushButton*>()) buttons << button->text();
  EXPECT_TRUE(buttons.contains("Grade a folder…")) << buttons.join(" | ").toStdString();
  panel->setGradingSettings(testGradingSettings());

  // Bad input first: what is not a folder is refused, naming it.
  const QString notAFolder = QString::fromStdString((dir / "alice-naive.cu").string());
  EXPECT_TRUE(panel->gradeFolder(notAFolder).contains(notAFolder));
  EXPECT_FALSE(panel->gradingRunning());

  QSignalSpy finished(panel, &ClassPanel::gradingFinished);
  std::vector<int> progress;
  QObject::connect(panel->gradingProgress(), &QProgressBar::valueChanged,
                   [&](int value) { progress.push_back(value); });
  ASSERT_EQ(panel->gradeFolder(QString::fromStdString(dir.string())), QString());
  EXPECT_TRUE(panel->gradingRunning());
  EXPECT_TRUE(panel->gradingProgress()->isVisible());
  EXPECT_EQ(panel->folder().toStdString(), dir.string() + "-results") << "the results folder beside it, opened";
  EXPECT_FALSE(panel->gradeFolder(QString::fromStdString(dir.string())).isEmpty()) << "one grading at a time";
  ASSERT_TRUE(finished.wait(300000));
  EXPECT_FALSE(panel->gradingRunning());
  EXPECT_FALSE(panel->gradingProgress()->isVisible());
  EXPECT_TRUE(panel->gradingStatus().startsWith("Graded")) << panel->gradingStatus().toStdString();
  EXPECT_TRUE(panel->bannerText().isEmpty()) << panel->bannerText().toStdString();
  EXPECT_EQ(panel->gradingProgress()->maximum(), 5);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back(), 5);
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end())) << "the count only grows";

  // The same folder graded by the CLI, independently: the same statuses, id by id.
  const fs::path cliResults = root / "cli-results";
  QProcess grade;
  grade.setProcessChannelMode(QProcess::MergedChannels);
  grade.start(CONVSCOPE_CLI_PATH, {"grade", QString::fromStdString(dir.string()), "--out",
                                   QString::fromStdString(cliResults.string()), "--time-limit", "60"});
  ASSERT_TRUE(grade.waitForFinished(300000));
  ASSERT_EQ(grade.exitCode(), 0) << grade.readAll().toStdString();
  const std::map<std::string, std::string> cli = statusesOf(json::parse(readText(cliResults / "leaderboard.json")));
  const std::map<std::string, std::string> tab =
      statusesOf(json::parse(readText(dir.string() + "-results/leaderboard.json")));
  EXPECT_EQ(tab, cli);
  ASSERT_EQ(tab.size(), 5u) << "the link is no submission";
  const bool compiler = userKernelCompiler().unavailableReason().empty();
  EXPECT_EQ(tab.at("alice-naive"), compiler ? kGradeNoGpu : kGradeNoCompiler);
  EXPECT_EQ(tab.at("bob-tiled"), compiler ? kGradeNoGpu : kGradeNoCompiler);
  EXPECT_EQ(tab.at("carol-reads"), kGradeBreaksContract) << "the #include filter stands before any compiler";
  if (compiler) {
    EXPECT_EQ(tab.at("dave-syntax"), kGradeDoesNotCompile);
    EXPECT_EQ(tab.at("erin-signature"), kGradeBreaksContract);
  }

  // What the tab shows is that board: every row, its status; the link named as skipped.
  ASSERT_EQ(panel->groupCount(), 1);
  QTableWidget* table = panel->table(0);
  ASSERT_EQ(table->rowCount(), 5);
  for (const auto& [id, status] : tab) {
    const int row = rowOf(*table, QString::fromStdString(id));
    ASSERT_GE(row, 0) << id;
    EXPECT_EQ(table->item(row, ClassPanel::Status)->text().toStdString(), status) << id;
  }
  const int carol = rowOf(*table, "carol-reads");
  const QString message = table->item(carol, ClassPanel::Message)->text();
  EXPECT_TRUE(message.contains("carol-reads.cu")) << "named as the student knows it: " << message.toStdString();
  EXPECT_FALSE(message.contains(temp.path())) << "not by the grader's folders: " << message.toStdString();
  ASSERT_EQ(panel->leaderboard().skipped.size(), 1u);
  EXPECT_EQ(panel->leaderboard().skipped[0]["path"], "mallory.cu");
}

TEST(ClassTab, CancelStopsTheGradingKeepsWhatIsFinishedAndTheNextGradingKeepsIt) {
  QTemporaryDir temp;
  const fs::path root = temp.path().toStdString();
  const fs::path dir = fiveSubmissions(root);
  auto window = classWindow();
  ClassPanel* panel = window->view<ui::ClassPanel>("class");
  panel->setGradingSettings(testGradingSettings());
  QSignalSpy finished(panel, &ClassPanel::gradingFinished);
  ASSERT_EQ(panel->gradeFolder(QString::fromStdString(dir.string())), QString());
  // Cancel once the first submission is done: the rest are stopped at once, not waited for.
  ASSERT_TRUE(QTest::qWaitFor([&] { return panel->gradingProgress()->value() >= 1; }, 120000));
  QElapsedTimer stopping;
  stopping.start();
  panel->cancelGrading();
  ASSERT_TRUE(finished.wait(30000));
  EXPECT_LT(stopping.elapsed(), 30000);
  EXPECT_TRUE(panel->gradingStatus().contains("stopped")) << panel->gradingStatus().toStdString();
  const fs::path results = dir.string() + "-results";
  int graded = 0;
  for (const auto& entry : fs::directory_iterator(results / "submissions"))
    graded += entry.path().extension() == ".json";
  EXPECT_GE(graded, 1);
  EXPECT_LT(graded, 5) << "cancelled before the end";
  ASSERT_EQ(panel->groupCount(), 1);
  EXPECT_EQ(panel->table(0)->rowCount(), graded) << "what is finished is ranked";

  // Graded again: the finished ones are kept (not graded twice), the rest graded now.
  // Each grading draws a fresh seed from the secure random source: a kept result keeps its seed.
  std::map<std::string, std::string> seeds;
  for (const auto& entry : fs::directory_iterator(results / "submissions"))
    seeds[entry.path().stem()] = json::parse(readText(entry.path()))["seed"];
  ASSERT_EQ(panel->gradeFolder(QString::fromStdString(dir.string())), QString());
  ASSERT_TRUE(finished.wait(300000));
  EXPECT_TRUE(panel->gradingStatus().startsWith("Graded")) << panel->gradingStatus().toStdString();
  EXPECT_EQ(panel->table(0)->rowCount(), 5);
  for (const auto& [id, seed] : seeds)
    EXPECT_EQ(json::parse(readText(results / "submissions" / (id + ".json")))["seed"], seed) << id << " kept";
}

// On a GPU machine (scripts/device.sh runs it there) the tab's grading times the kernels that pass
// on that GPU, ranks them with the course's reference lines timed beside them, and shows the
// ranks and times; the ones that fail keep their statuses.
TEST(ClassTab, OnAGpuGradingFromTheTabRanksThePassingKernelsWithTheirTimes) {
  if (const std::string reason = findConvVariant("gpu-baseline").unavailableReason(); !reason.empty())
    GPU_TEST_SKIP() << "no GPU here: " << reason;
  qunsetenv("CUDA_VISIBLE_DEVICES");  // another test of this program may have hidden the GPU
  QTemporaryDir temp;
  const fs::path root = temp.path().toStdString();
  const fs::path dir = fiveSubmissions(root);
  auto window = classWindow();
  window->selectTab("class");
  ClassPanel* panel = window->view<ui::ClassPanel>("class");
  GradingSettings settings = ui::ClassGradingRun::defaultSettings();
  settings.program = CONVSCOPE_CLI_PATH;
  settings.timeLimitSeconds = 120;
  panel->setGradingSettings(settings);
  QSignalSpy finished(panel, &ClassPanel::gradingFinished);
  ASSERT_EQ(panel->gradeFolder(QString::fromStdString(dir.string())), QString());
  ASSERT_TRUE(finished.wait(540000));
  EXPECT_TRUE(panel->gradingStatus().startsWith("Graded")) << panel->gradingStatus().toStdString();

  ASSERT_EQ(panel->groupCount(), 1);
  const LeaderboardGroup& group = panel->leaderboard().groups[0];
  EXPECT_FALSE(group.gpu.empty()) << "the table is this GPU's";
  EXPECT_FALSE(group.reference.is_null()) << "the course's reference lines were timed on it";
  ASSERT_EQ(group.rows.size(), 5u);
  std::set<std::string> ranked;
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json& row = group.rows[static_cast<size_t>(i)];
    EXPECT_EQ(row["status"], kGradePassed) << row.dump();
    EXPECT_EQ(row["rank"], i + 1) << row.dump();
    ranked.insert(row["id"].get<std::string>());
  }
  EXPECT_EQ(ranked, (std::set<std::string>{"alice-naive", "bob-tiled"})) << "the two correct kernels, first";
  QTableWidget* table = panel->table(0);
  for (const std::string& id : ranked) {
    const int row = rowOf(*table, QString::fromStdString(id));
    ASSERT_GE(row, 0) << id;
    EXPECT_FALSE(table->item(row, ClassPanel::Rank)->text().isEmpty()) << id;
    EXPECT_FALSE(table->item(row, ClassPanel::OpTime10000)->text().isEmpty()) << id << " shows its time";
  }
  EXPECT_EQ(table->item(rowOf(*table, "dave-syntax"), ClassPanel::Status)->text().toStdString(), kGradeDoesNotCompile);
  EXPECT_EQ(table->item(rowOf(*table, "carol-reads"), ClassPanel::Status)->text().toStdString(), kGradeBreaksContract);
}

}  // namespace
}  // namespace convscope
