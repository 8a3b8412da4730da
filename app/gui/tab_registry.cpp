#include "app/gui/tab_registry.h"

#include "app/gui/explore_view.h"
#include "app/gui/main_window.h"
#include "ui/charts/prediction_panel.h"
#include "ui/class/class_panel.h"
#include "ui/explain/conv_arithmetic_view.h"
#include "ui/explain/kernel_weights_view.h"
#include "ui/failures/confusion_view.h"
#include "ui/gpumap/gpu_mapping_panel.h"
#include "ui/input/input_panel.h"
#include "ui/jobs/kernel_pipeline_job.h"
#include "ui/kernel/user_kernel_panel.h"
#include "ui/maps/feature_map_view.h"
#include "ui/model/model_summary_view.h"
#include "ui/profile/profile_panel.h"
#include "ui/roofline/roofline_panel.h"
#include "ui/timing/timing_panel.h"

namespace convscope::gui {

QString changeName(Change change) {
  switch (change) {
    case Change::Model:
      return "model";
    case Change::Variant:
      return "variant";
    case Change::TestSet:
      return "test set";
    case Change::Outcome:
      return "outcome";
    case Change::Benchmark:
      return "benchmark";
  }
  return "unknown";
}

QStringList tabNamesOf(const std::vector<TabRow>& rows) {
  QStringList names;
  for (const TabRow& row : rows) names += row.names;
  return names;
}

std::vector<TabRow> standardTabs() {
  using ui::ClassPanel, ui::ConfusionView, ui::ConvArithmeticView, ui::GpuMappingPanel, ui::KernelWeightsView,
      ui::ModelSummaryView, ui::ProfilePanel, ui::RooflinePanel, ui::TimingPanel, ui::UserKernelPanel;
  // The parent is the window; QTabWidget::addTab moves each view into its page.
  return {
      // "draw": the same tab, with the drawing canvas in the left column.
      tab<ExploreView>({"explore", "draw"}, "Feature maps && prediction", LeftColumn::Needed,
                       [](const TabContext& c) { return new ExploreView(c.window); })
          .presentedAs("Maps")
          .on(Change::TestSet,
              [](ExploreView& v, const WindowState& s) { v.prediction()->setClassNames(s.classNames); })
          .on(Change::Outcome,
              [](ExploreView& v, const WindowState& s) {
                v.maps()->setOutcome(s.outcome);
                v.prediction()->setOutcome(s.outcome);
              })
          .whenSelected([](ExploreView&, const QString& name, const TabContext& c) {
            if (name == "draw") c.window->inputPanel()->showSource(ui::InputPanel::Source::Drawing);
          }),
      // The Timing tab has its own variants and pictures: the left column makes way.
      tab<TimingPanel>({"timing"}, "Timing", LeftColumn::NotNeeded,
                       [](const TabContext& c) { return new TimingPanel(c.jobs, c.window); })
          .on(Change::Model, [](TimingPanel& v, const WindowState& s) { v.setModelPath(s.modelPath); })
          .on(Change::TestSet, [](TimingPanel& v, const WindowState& s) { v.setImageSet(s.testSet); }),
      tab<ProfilePanel>({"profile"}, "Profile", LeftColumn::Needed,
                        [](const TabContext& c) { return new ProfilePanel(c.jobs, c.window); })
          .on(Change::Model, [](ProfilePanel& v, const WindowState& s) { v.setModel(s.model); })
          .on(Change::Variant, [](ProfilePanel& v, const WindowState& s) { v.setVariant(s.variant); })
          .on(Change::TestSet, [](ProfilePanel& v, const WindowState& s) { v.setImageSet(s.testSet); }),
      tab<ModelSummaryView>({"model"}, "Model", LeftColumn::Needed,
                            [](const TabContext& c) { return new ModelSummaryView(c.window); })
          .on(Change::Model,
              [](ModelSummaryView& v, const WindowState& s) {
                v.setModel(*s.model, s.card);
                v.showPlan(*s.model, s.variant.toStdString());
              })
          .on(Change::Variant,
              [](ModelSummaryView& v, const WindowState& s) {
                if (s.model) v.showPlan(*s.model, s.variant.toStdString());
              }),
      // The student's editor, its listing and its steps need the width more than the picture
      // browser: the model and variant are the ones chosen in the other tabs.
      tab<UserKernelPanel>({"kernel"}, "Your kernel", LeftColumn::NotNeeded,
                           [](const TabContext& c) { return new UserKernelPanel(c.jobs, c.window); })
          .presentedAs("Kernel")
          .on(Change::Model, [](UserKernelPanel& v, const WindowState& s) { v.pipeline()->setModelPath(s.modelPath); }),
      // The picture for the arithmetic is chosen in the first tab.
      tab<ConvArithmeticView>({"arithmetic"}, "Arithmetic", LeftColumn::NotNeeded,
                              [](const TabContext& c) { return new ConvArithmeticView(c.window); })
          .on(Change::Model, [](ConvArithmeticView& v, const WindowState& s) { v.setModel(s.model); })
          .on(Change::Outcome, [](ConvArithmeticView& v, const WindowState& s) { v.setOutcome(s.outcome); }),
      tab<KernelWeightsView>({"weights"}, "Weights", LeftColumn::NotNeeded,
                             [](const TabContext& c) { return new KernelWeightsView(c.window); })
          .on(Change::Model, [](KernelWeightsView& v, const WindowState& s) { v.setModel(s.model); }),
      tab<ConfusionView>({"confusion"}, "Where it fails", LeftColumn::NotNeeded,
                         [](const TabContext& c) { return new ConfusionView(c.jobs, c.window); })
          .presentedAs("Failures")
          .on(Change::Model, [](ConfusionView& v, const WindowState& s) { v.setModel(s.model); })
          .on(Change::Variant, [](ConfusionView& v, const WindowState& s) { v.setVariant(s.variant); })
          .on(Change::TestSet, [](ConfusionView& v, const WindowState& s) { v.setImageSet(s.testSet); }),
      // The mapping's left side follows a GPU variant (setVariant ignores the others). setModel
      // throws for inconsistent shapes: the window shows the message.
      tab<GpuMappingPanel>({"gpu-mapping"}, "GPU mapping", LeftColumn::NotNeeded,
                           [](const TabContext& c) { return new GpuMappingPanel(c.window); })
          .presentedAs("Mapping")
          .on(Change::Model, [](GpuMappingPanel& v, const WindowState& s) { v.setModel(*s.model); })
          .on(Change::Variant,
              [](GpuMappingPanel& v, const WindowState& s) { v.setVariant(0, s.variant.toStdString()); }),
      // "staircase": the roofline tab's second sub-tab.
      tab<RooflinePanel>({"roofline", "staircase"}, "Roofline", LeftColumn::NotNeeded,
                         [](const TabContext& c) { return new RooflinePanel(c.window); })
          .on(Change::Benchmark,
              [](RooflinePanel& v, const WindowState& s) {
                v.setTimingResults(s.benchmark, s.benchmarkName, s.benchmarkBeside, s.benchmarkBesideName);
              })
          .whenSelected(
              [](RooflinePanel& v, const QString& name, const TabContext&) { v.showStaircase(name == "staircase"); }),
      // A class's graded results: its own folder, none of the window's changes.
      tab<ClassPanel>({"class"}, "Class", LeftColumn::NotNeeded,
                      [](const TabContext& c) { return new ClassPanel(c.window); }),
  };
}

}  // namespace convscope::gui
