// The profile tab: with a CPU variant it says the profiler needs a GPU variant instead of
// showing an empty table; without a GPU it says so first and opens a profile saved on a GPU
// machine (refusing broken files with their name and the problem); with a GPU it fills the
// course's kernel table. The table's arithmetic is checked on a made-up trace.
#include <gtest/gtest.h>

#include <QFile>
#include <QPushButton>
#include <QTableWidget>

#include "app/core/device/gpu_platform.h"
#include "app/core/engine/kernel_profile_json.h"
#include "app/core/engine/kernel_table.h"
#include "tests/ui/ui_test_support.h"
#include "ui/common/error_banner.h"
#include "ui/profile/profile_panel.h"

namespace convscope::testing {
namespace {

TEST(Profile, ACpuVariantGetsAnExplanationInsteadOfAnEmptyTable) {
  auto window = openWindow();
  ASSERT_TRUE(window->selectVariant("cpu-im2col-gemm"));
  ui::ProfilePanel* profile = window->view<ui::ProfilePanel>("profile");
  EXPECT_FALSE(profile->canProfile());
  EXPECT_TRUE(profile->message().contains("GPU")) << profile->message().toStdString();
  const QList<QPushButton*> buttons = profile->findChildren<QPushButton*>();
  ASSERT_FALSE(buttons.isEmpty());
  for (QPushButton* button : buttons)  // only opening a saved profile (or the example) works with a CPU variant
    EXPECT_EQ(button->isEnabled(), button == profile->openButton() || button == profile->exampleButton())
        << button->text().toStdString();
  if (!gpuInfo().usable) {
    EXPECT_TRUE(profile->message().contains(QString::fromStdString(gpuInfo().unusableReason).toHtmlEscaped()));
  }
}

TEST(Profile, AGpuVariantFillsTheKernelTable) {
  if (!gpuInfo().usable) GPU_TEST_SKIP() << "no GPU: " << gpuInfo().unusableReason;
  auto window = openWindow();
  ASSERT_TRUE(window->selectVariant("gpu-baseline"));
  ui::ProfilePanel* profile = window->view<ui::ProfilePanel>("profile");
  ASSERT_TRUE(profile->canProfile());
  profile->runProfile();
  ASSERT_TRUE(QTest::qWaitFor([&] { return profile->table()->rowCount() > 0; }, 60000))
      << window->lastError().toStdString();
  EXPECT_TRUE(profile->message().contains("batch"));
}

TEST(KernelTable, SumsCallsAndSharesPerKernelWithCopiesLast) {
  const std::vector<Device::TracedTime> trace = {{"conv_kernel", 2.0},        {"[CUDA memcpy HtoD]", 1.0},
                                                 {"conv_kernel", 4.0},        {"tanh_kernel", 1.0},
                                                 {"[CUDA memcpy DtoH]", 0.5}, {"tanh_kernel", 1.5}};
  const std::vector<KernelRow> rows = kernelTable(trace);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].name, "conv_kernel");
  EXPECT_EQ(rows[0].calls, 2);
  EXPECT_DOUBLE_EQ(rows[0].totalMs, 6.0);
  EXPECT_DOUBLE_EQ(rows[0].minMs, 2.0);
  EXPECT_DOUBLE_EQ(rows[0].maxMs, 4.0);
  EXPECT_DOUBLE_EQ(rows[0].averageMs(), 3.0);
  EXPECT_DOUBLE_EQ(rows[0].share, 0.6);
  EXPECT_EQ(rows[1].name, "tanh_kernel");
  EXPECT_TRUE(rows[2].isCopy);
  EXPECT_EQ(rows[2].name, "[CUDA memcpy HtoD]");
  EXPECT_TRUE(rows[3].isCopy);
  double shares = 0.0;
  for (const KernelRow& row : rows) shares += row.share;
  EXPECT_NEAR(shares, 1.0, 1e-12);
}

// A profile as a GPU machine saves it: two kernels and two copies.
KernelProfile savedProfile() {
  KernelProfile profile;
  profile.variant = "gpu-tiled-shared";
  profile.model = "course-high";
  profile.device = "NVIDIA H100 80GB HBM3";
  profile.date = "2026-11-23T14:00:00Z";
  profile.batch = 10000;
  profile.rows = {{"conv_forward_tiled", false, 2, 6.0, 1.5, 4.5, 0.6},
                  {"tanh_kernel", false, 2, 1.0, 0.4, 0.6, 0.1},
                  {"[CUDA memcpy HtoD]", true, 1, 2.5, 2.5, 2.5, 0.25},
                  {"[CUDA memcpy DtoH]", true, 1, 0.5, 0.5, 0.5, 0.05}};
  return profile;
}

TEST(Profile, WithoutAGpuItSaysWhyTheTableIsEmpty) {
  if (gpuInfo().usable) GTEST_SKIP() << "this machine has a GPU";
  auto window = openWindow();
  ui::ProfilePanel* profile = window->view<ui::ProfilePanel>("profile");
  for (const ConvVariant& v : convVariants()) {
    if (!v.unavailableReason().empty()) continue;
    SCOPED_TRACE(v.id);
    ASSERT_TRUE(window->selectVariant(QString::fromStdString(v.id)));
    EXPECT_TRUE(profile->message().startsWith("<b>No GPU on this machine:</b> " +
                                              QString::fromStdString(gpuInfo().unusableReason).toHtmlEscaped()))
        << profile->message().toStdString();
    EXPECT_TRUE(profile->message().contains("--json")) << "and how to get a table anyway";
    EXPECT_EQ(profile->table()->rowCount(), 0);
    EXPECT_TRUE(profile->openButton()->isEnabled());
  }
}

// Without a GPU the tab offers a table measured on an H100, built into the program; opened, it is
// that file's table, row by row.
TEST(Profile, WithoutAGpuTheH100ExampleOpensAsTheKernelTable) {
  if (gpuInfo().usable) GTEST_SKIP() << "this machine has a GPU: the example is not offered";
  auto window = openWindow();
  ASSERT_TRUE(window->selectTab("profile"));
  ui::ProfilePanel* profile = window->view<ui::ProfilePanel>("profile");
  ASSERT_TRUE(profile->exampleButton()->isVisible());
  EXPECT_TRUE(profile->message().contains("Open the H100 example")) << profile->message().toStdString();
  QTest::mouseClick(profile->exampleButton(), Qt::LeftButton);
  const KernelProfile expected = readKernelProfileJson(std::string(CONVSCOPE_SOURCE_DIR) +
                                                       "/resources/examples/profile-h100-restrict-unroll-10000.json");
  ASSERT_GT(expected.rows.size(), 3u);
  ASSERT_EQ(profile->table()->rowCount(), static_cast<int>(expected.rows.size()));
  for (size_t r = 0; r < expected.rows.size(); ++r)
    EXPECT_EQ(profile->table()->item(static_cast<int>(r), 7)->text(), QString::fromStdString(expected.rows[r].name))
        << "row " << r;
  EXPECT_TRUE(profile->message().contains("H100")) << profile->message().toStdString();
  EXPECT_TRUE(profile->message().contains("profile-h100-restrict-unroll-10000.json"))
      << profile->message().toStdString();
}

TEST(Profile, ASavedProfileOpensOnAnyMachineAsTheKernelTable) {
  auto window = openWindow();
  QTemporaryDir dir;
  const QString path = dir.filePath("profile-h100.json");
  writeKernelProfileJson(savedProfile(), path.toStdString());
  ui::ProfilePanel* profile = window->view<ui::ProfilePanel>("profile");
  ASSERT_EQ(profile->openProfile(path), QString());
  QTableWidget* table = profile->table();
  ASSERT_EQ(table->rowCount(), 4);
  // The cells as the CLI prints them: share, total, calls, average (total / calls), min, max, name.
  EXPECT_EQ(table->item(0, 0)->text(), "GPU activities");
  EXPECT_EQ(table->item(0, 1)->text(), "60.00 %");
  EXPECT_EQ(table->item(0, 2)->text(), "6.0000 ms");
  EXPECT_EQ(table->item(0, 3)->text(), "2");
  EXPECT_EQ(table->item(0, 4)->text(), "3.0000 ms");
  EXPECT_EQ(table->item(1, 5)->text(), "400.000 µs");
  EXPECT_EQ(table->item(0, 7)->text(), "conv_forward_tiled");
  EXPECT_EQ(table->item(2, 0)->text(), "Memory copies");
  EXPECT_EQ(table->item(3, 7)->text(), "[CUDA memcpy DtoH]");
  for (const char* says : {"profile-h100.json", "GPU tiled, shared memory", "NVIDIA H100", "batch 10000"})
    EXPECT_TRUE(profile->message().contains(says)) << says << ": " << profile->message().toStdString();
  // Another variant chosen: the opened file stays on show.
  ASSERT_TRUE(window->selectVariant("cpu-reference"));
  EXPECT_EQ(table->rowCount(), 4);
  EXPECT_TRUE(profile->message().contains("profile-h100.json"));
}

TEST(Profile, ABadProfileFileIsRefusedWithItsNameAndTheProblem) {
  auto window = openWindow();
  ui::ProfilePanel* profile = window->view<ui::ProfilePanel>("profile");
  QTemporaryDir dir;
  const QString good = dir.filePath("good.json");
  writeKernelProfileJson(savedProfile(), good.toStdString());
  ASSERT_EQ(profile->openProfile(good), QString());
  const QString goodJson = [&] {
    QFile file(good);
    file.open(QIODevice::ReadOnly);
    return QString::fromUtf8(file.readAll());
  }();
  struct Case {
    const char* name;
    QString content;
    const char* problem;
  };
  const std::vector<Case> cases = {
      {"notes.json", "these are lesson notes", "is not JSON: line 1, column"},
      {"bench.json", R"({"schema": "convscope-benchmark/1", "runs": []})", "not a ConvScope profile"},
      {"negative.json", QString(goodJson).replace("\"total_ms\": 6.0", "\"total_ms\": -6.0"), "negative"},
      {"minmax.json", QString(goodJson).replace("\"min_ms\": 1.5", "\"min_ms\": 9.5"), "above \"max_ms\""},
      {"share.json", QString(goodJson).replace("\"share\": 0.6", "\"share\": 60"), "share"},
      {"norows.json", R"({"schema": "convscope-profile/1", "variant": "x", "model": "m", "device": "d",
                          "batch": 1, "rows": []})",
       "no kernels"},
      {"nocalls.json", QString(goodJson).replace("\"calls\": 2", "\"calls\": 0"), "calls"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_NE(c.content, goodJson) << "the case changes the file";
    const QString path = writeFile(dir, c.name, c.content.toUtf8());
    const QString error = profile->openProfile(path);
    EXPECT_TRUE(error.contains(c.name)) << error.toStdString();
    EXPECT_TRUE(error.contains(c.problem)) << error.toStdString();
    EXPECT_EQ(profile->table()->rowCount(), 4) << "the table shown before stays";
    EXPECT_TRUE(profile->message().contains("good.json"));
  }
}

TEST(KernelProfileJson, WhatIsWrittenReadsBackTheSame) {
  QTemporaryDir dir;
  const std::string path = dir.filePath("p.json").toStdString();
  const KernelProfile written = savedProfile();
  writeKernelProfileJson(written, path);
  const KernelProfile read = readKernelProfileJson(path);
  EXPECT_EQ(read.variant, written.variant);
  EXPECT_EQ(read.model, written.model);
  EXPECT_EQ(read.device, written.device);
  EXPECT_EQ(read.date, written.date);
  EXPECT_EQ(read.batch, written.batch);
  ASSERT_EQ(read.rows.size(), written.rows.size());
  for (size_t i = 0; i < read.rows.size(); ++i) {
    EXPECT_EQ(read.rows[i].name, written.rows[i].name);
    EXPECT_EQ(read.rows[i].isCopy, written.rows[i].isCopy);
    EXPECT_EQ(read.rows[i].calls, written.rows[i].calls);
    EXPECT_DOUBLE_EQ(read.rows[i].totalMs, written.rows[i].totalMs);
    EXPECT_DOUBLE_EQ(read.rows[i].minMs, written.rows[i].minMs);
    EXPECT_DOUBLE_EQ(read.rows[i].maxMs, written.rows[i].maxMs);
    EXPECT_DOUBLE_EQ(read.rows[i].share, written.rows[i].share);
  }
}

}  // namespace
}  // namespace convscope::testing
