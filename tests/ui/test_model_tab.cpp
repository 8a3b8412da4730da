// The Model tab shows the engine's plan for the selected variant: one row per stage, who runs it,
// and every fallback with its reason, following the variant selector.
#include <QTableWidget>

#include <gtest/gtest.h>

#include "app/core/conv/variant_table.h"
#include "app/core/model/onnx_loader.h"
#include "tests/ui/ui_test_support.h"
#include "ui/model/model_summary_view.h"
#include "ui/model/variant_selector.h"

namespace convscope {
namespace {

// A CPU row that declines 7x7 kernels (both of the course model's), added by this test.
const bool decliningRow = [] {
  ConvVariant row = findConvVariant("cpu-reference");
  row.id = "test-declines-7x7";
  row.displayName = "Test: declines 7x7";
  row.sourceFile = "tests/ui/test_model_tab.cpp";
  row.preferredDefault = false;
  row.unsupportedReason = [](const ConvProblem& p) {
    return p.kernelHeight == 7 ? "no 7x7 kernels in this test row" : std::string();
  };
  registerConvVariant(row);
  return true;
}();

TEST(ModelTab, ThePlanFollowsTheSelectedVariant) {
  auto window = testing::openWindow();
  ui::ModelSummaryView* summary = window->modelSummary();
  QTableWidget* plan = summary->planTable();
  const int nodes = static_cast<int>(window->model()->nodes.size());
  ASSERT_EQ(plan->rowCount(), nodes) << "the course model: one stage per layer";
  EXPECT_EQ(plan->item(0, 1)->text(), "/0/Conv (Conv)");
  EXPECT_EQ(plan->item(0, 2)->text(), window->variantSelector()->currentVariant());

  ASSERT_TRUE(window->selectVariant("test-declines-7x7"));
  EXPECT_TRUE(summary->planTitle().contains("Plan for test-declines-7x7")) << summary->planTitle().toStdString();
  EXPECT_TRUE(summary->planTitle().contains("2 fallback")) << summary->planTitle().toStdString();
  const QString conv1 = plan->item(0, 2)->text();
  // The row just before it in the table computes the layer instead.
  EXPECT_TRUE(conv1.startsWith("cpu-im2col-gemm (fallback: test-declines-7x7 declined it: no 7x7 kernels"))
      << conv1.toStdString();
  EXPECT_EQ(plan->item(1, 2)->text(), "CPU") << "the activation after it";

  ASSERT_TRUE(window->selectVariant("cpu-reference"));
  EXPECT_EQ(plan->item(0, 2)->text(), "cpu-reference");
  EXPECT_TRUE(summary->planTitle().contains("no fallbacks"));
}

TEST(ModelTab, AVariantThatCannotRunHereIsStillPlanned) {
  const ConvVariant* unavailable = nullptr;
  for (const ConvVariant& v : convVariants())
    if (!v.unavailableReason().empty()) unavailable = &v;
  if (!unavailable) GTEST_SKIP() << "every variant can run on this machine";
  const auto model = loadOnnxModel(testing::modelPath("course-high").toStdString());
  ui::ModelSummaryView view;
  view.setModel(*model, std::nullopt);
  view.showPlan(*model, unavailable->id);
  ASSERT_EQ(view.planTable()->rowCount(), static_cast<int>(model->nodes.size()));
  EXPECT_TRUE(view.planTitle().contains(QString::fromStdString("Plan for " + unavailable->id)));
}

}  // namespace
}  // namespace convscope
