// The profile tab: with a CPU variant it says the profiler needs a GPU variant instead of
// showing an empty table; with a GPU it fills the course's kernel table. The table's arithmetic
// is checked on a made-up trace.
#include <gtest/gtest.h>

#include <QPushButton>
#include <QTableWidget>

#include "gpu_device.h"
#include "engine/kernel_table.h"
#include "ui/profile/profile_panel.h"
#include "ui_test_support.h"

namespace convscope::testing {
namespace {

TEST(Profile, ACpuVariantGetsAnExplanationInsteadOfAnEmptyTable) {
  auto window = openWindow();
  ASSERT_TRUE(window->selectVariant("cpu-im2col-gemm"));
  ui::ProfilePanel* profile = window->profile();
  EXPECT_FALSE(profile->canProfile());
  EXPECT_TRUE(profile->message().contains("GPU")) << profile->message().toStdString();
  const QList<QPushButton*> buttons = profile->findChildren<QPushButton*>();
  ASSERT_FALSE(buttons.isEmpty());
  for (QPushButton* button : buttons) EXPECT_FALSE(button->isEnabled());
  if (!gpu::gpuDevice().usable) {
    EXPECT_TRUE(profile->message().contains(QString::fromStdString(gpu::gpuDevice().unusableReason).toHtmlEscaped()));
  }
}

TEST(Profile, AGpuVariantFillsTheKernelTable) {
  if (!gpu::gpuDevice().usable) GTEST_SKIP() << "no GPU: " << gpu::gpuDevice().unusableReason;
  auto window = openWindow();
  ASSERT_TRUE(window->selectVariant("gpu-baseline"));
  ui::ProfilePanel* profile = window->profile();
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

}  // namespace
}  // namespace convscope::testing
