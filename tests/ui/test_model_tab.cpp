// The Model tab shows the engine's plan for the selected variant: one row per stage, who runs it,
// and every fallback with its reason, following the variant selector.
#include <QTableWidget>

#include <gtest/gtest.h>

#include <QTextDocumentFragment>

#include <QLocale>

#include <QLabel>

#include "app/core/conv/cpu_backends.h"
#include "app/core/conv/variant_table.h"
#include "app/core/model/onnx_loader.h"
#include "app/gui/explore_view.h"
#include "tests/core/epilogue_backend.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/prediction_panel.h"
#include "ui/inference/inference_controller.h"
#include "ui/model/model_summary_view.h"
#include "ui/model/variant_selector.h"

namespace convscope {
namespace {

// A CPU row that declines 7x7 kernels (both of the course model's), added by this test. Made from
// the reference's row without reading the table, which must not be read before every row is in.
const bool decliningRow = [] {
  ConvVariant row = cpuReferenceVariant();
  row.id = "test-declines-7x7";
  row.displayName = "Test: declines 7x7";
  row.sourceFile = "tests/ui/test_model_tab.cpp";
  row.preferredDefault = false;
  row.unsupportedReason = [](const ConvProblem& p) {
    return p.kernelHeight == 7 ? "no 7x7 kernels in this test row" : std::string();
  };
  registerConvVariant(row);

  ConvVariant fusing = cpuReferenceVariant();
  fusing.id = "test-fusing-ui";
  fusing.displayName = "Test: fused epilogue";
  fusing.sourceFile = "tests/ui/test_model_tab.cpp";
  fusing.preferredDefault = false;
  fusing.fusableOps = {"Tanh", "MaxPool"};
  fusing.createHostBackend = [] { return std::make_unique<testing::EpilogueBackend>(); };
  registerConvVariant(fusing);
  return true;
}();

TEST(ModelTab, ThePlanFollowsTheSelectedVariant) {
  auto window = testing::openWindow();
  ui::ModelSummaryView* summary = window->view<ui::ModelSummaryView>("model");
  QTableWidget* plan = summary->planTable();
  const int nodes = static_cast<int>(window->model()->nodes.size());
  ASSERT_TRUE(window->selectVariant("cpu-reference"));
  ASSERT_EQ(plan->rowCount(), nodes) << "the course model with a variant that fuses nothing: one stage per layer";
  EXPECT_EQ(plan->item(0, 1)->text(), "/0/Conv (Conv)");
  EXPECT_EQ(plan->item(0, 2)->text(), "cpu-reference");

  ASSERT_TRUE(window->selectVariant("test-declines-7x7"));
  EXPECT_TRUE(summary->planTitle().contains("Plan for test-declines-7x7")) << summary->planTitle().toStdString();
  EXPECT_TRUE(summary->planTitle().contains("2 fallback")) << summary->planTitle().toStdString();
  const QString conv1 = plan->item(0, 2)->text();
  // The row just before it in the table computes the layer instead, fusing what it fuses.
  EXPECT_TRUE(conv1.startsWith("cpu-onednn, fused in one kernel (fallback: test-declines-7x7 declined it: no 7x7"))
      << conv1.toStdString();
  EXPECT_EQ(plan->rowCount(), nodes - 4) << "cpu-onednn takes each conv -> tanh -> max-pool chain as one stage";

  ASSERT_TRUE(window->selectVariant("cpu-reference"));
  EXPECT_EQ(plan->item(0, 2)->text(), "cpu-reference");
  EXPECT_TRUE(summary->planTitle().contains("no fallbacks"));
}

// The totals are whole and visible at 1024x700 and on a 1440x900 projector, and are the sums of
// the model's layers; the share column holds each layer's fraction of the FLOPs, whole.
TEST(ModelTab, TheTotalsAreWholeAndEqualTheLayersSums) {
  for (const bool presentation : {false, true}) {
    SCOPED_TRACE(presentation ? "presentation mode at 1440x900" : "1024x700");
    auto window = testing::openWindow();
    if (presentation) window->setPresentation(true);
    window->resize(presentation ? QSize(1440, 900) : QSize(1024, 700));
    ASSERT_TRUE(window->selectTab("model"));
    for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();
    ui::ModelSummaryView* summary = window->view<ui::ModelSummaryView>("model");
    int64_t parameters = 0, flops = 0;
    for (const LayerInfo& layer : window->model()->layers()) {
      parameters += layer.parameters;
      flops += layer.flops;
    }
    EXPECT_EQ(parameters, window->model()->parameterCount());
    const QString totals = summary->totals()->text();
    EXPECT_TRUE(totals.contains(QLocale().toString(static_cast<qlonglong>(parameters)) + " parameters"))
        << totals.toStdString();
    EXPECT_TRUE(totals.contains(QLocale().toString(static_cast<qlonglong>(flops)) + " FLOPs")) << totals.toStdString();
    QLabel* label = summary->totals();
    ASSERT_TRUE(label->isVisible());
    const QRect shown = label->rect().intersected(label->visibleRegion().boundingRect());
    EXPECT_EQ(shown.height(), label->height()) << "the totals are cut";
    EXPECT_GE(label->height(), label->sizeHint().height()) << "the totals are squeezed";
    EXPECT_GE(label->width(),
              label->fontMetrics().horizontalAdvance(QTextDocumentFragment::fromHtml(totals).toPlainText()))
        << "the totals run out of the tab";
    if (presentation) window->setPresentation(false);
  }
}

// The live op times come from the runs that are timed, which run the plan as it is (fused): the
// table says which layers a fused time covers.
TEST(ModelTab, ALiveOpTimeOfAFusedStageSaysWhatItCovers) {
  auto window = testing::openWindow();
  ASSERT_TRUE(window->selectVariant("test-fusing-ui"));
  ASSERT_TRUE(testing::waitForInference(*window));
  const auto outcome = window->inference()->lastOutcome();
  ASSERT_NE(outcome, nullptr);
  ASSERT_EQ(outcome->variant, "test-fusing-ui");
  ASSERT_EQ(outcome->convTimes.size(), 2u);
  EXPECT_EQ(outcome->convTimes[0].fusedNodes, (std::vector<std::string>{"/1/Tanh", "/2/MaxPool"}));
  EXPECT_EQ(outcome->layers.size(), window->model()->nodes.size() + 1) << "the maps still show every layer";
  const QString times = window->view<gui::ExploreView>("explore")->prediction()->timesText();
  EXPECT_TRUE(times.contains("fused")) << times.toStdString();
  EXPECT_TRUE(window->view<ui::ModelSummaryView>("model")->planTitle().contains("7 stages"))
      << window->view<ui::ModelSummaryView>("model")->planTitle().toStdString();
}

TEST(ModelTab, AVariantThatCannotRunHereIsStillPlanned) {
  // One that fuses nothing (a stage per layer), and runs layers (not a whole network in one stage).
  const ConvVariant* unavailable = nullptr;
  for (const ConvVariant& v : convVariants())
    if (!v.unavailableReason().empty() && v.fusableOps.empty() && !v.runNetwork) unavailable = &v;
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
