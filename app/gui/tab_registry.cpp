#include "app/gui/tab_registry.h"

#include <QFileDialog>
#include <QSettings>
#include <QTimer>

#include "app/gui/explore_view.h"
#include "app/gui/main_window.h"
#include "ui/charts/prediction_panel.h"
#include "ui/class/class_panel.h"
#include "ui/common/export.h"
#include "ui/evidence/class_evidence_view.h"
#include "ui/explain/conv_arithmetic_view.h"
#include "ui/explain/kernel_weights_view.h"
#include "ui/failures/confusion_view.h"
#include "ui/gpumap/gpu_mapping_panel.h"
#include "ui/input/input_panel.h"
#include "ui/jobs/kernel_pipeline_job.h"
#include "ui/kernel/user_kernel_panel.h"
#include "ui/maps/feature_map_view.h"
#include "ui/model/model_summary_view.h"
#include "ui/model/variant_selector.h"
#include "ui/profile/profile_panel.h"
#include "ui/roofline/roofline_panel.h"
#include "ui/timing/sweep_controls.h"
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

namespace {

// Runs `added` beside what the Timing tab shows (else beside `base`, else alone); the variant's
// earlier runs give way to them.
void showBesideTiming(WindowLinks& window, const BenchmarkReport& added, const BenchmarkReport* base,
                      const QString& origin) {
  auto* timing = window.view<ui::TimingPanel>("timing");
  if (!timing) return;
  const BenchmarkReport* shown = timing->report() ? timing->report().get() : base;
  auto merged = std::make_shared<BenchmarkReport>(shown ? *shown : added);
  if (shown) mergeRuns(*merged, added, RunMerge::kReplaceTheVariants);
  // The Roofline follows through shownResultsChanged: it replaces the report it had.
  timing->setReport(merged, origin);
}

// A sweep left unsaved by the last run (closed, crashed, killed): offered back once.
void offerRecoveredSweep(ui::TimingPanel& timing, WindowLinks& window) {
  const auto report = ui::TimingPanel::readRecoveryFile(timing.recoveryFile());
  if (!report || timing.sweepRunning()) return;
  const QMessageBox::StandardButton answer =
      window.ask(QObject::tr("ConvScope closed with a sweep that was not saved: %n run(s) on %1 (%2). Show them again?",
                             "", static_cast<int>(report->runs.size()))
                     .arg(QString::fromStdString(report->device), QString::fromStdString(report->date)),
                 QMessageBox::Yes | QMessageBox::Discard);
  if (answer == QMessageBox::Yes) {
    timing.showRecovered(report);
    window.selectTab("timing");
  } else if (answer == QMessageBox::Discard) {
    timing.discardUnsavedResults();
  }
}

// Unsaved sweep results at quit: saved, discarded, or the quit cancelled (false).
bool keepOrDiscardUnsavedResults(ui::TimingPanel& timing, WindowLinks& window) {
  if (!timing.hasUnsavedResults()) return true;
  const QMessageBox::StandardButton answer =
      window.ask(QObject::tr("The sweep's %n run(s) are not saved. Save them before quitting?", "",
                             timing.report() ? static_cast<int>(timing.report()->runs.size()) : 0),
                 QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Discard) {
    timing.discardUnsavedResults();
    return true;
  }
  if (answer != QMessageBox::Save) return false;  // Cancel, or the question closed
  const QString path = window.chooseSavePath("bench.json");
  if (path.isEmpty()) return false;  // no file chosen: stay
  if (const QString error = timing.saveJson(path); !error.isEmpty()) {
    window.showError(error);
    return false;
  }
  return true;
}

}  // namespace

QStringList tabNamesOf(const std::vector<TabRow>& rows) {
  QStringList names;
  for (const TabRow& row : rows) names += row.names;
  return names;
}

std::vector<TabRow> standardTabs() {
  using ui::ClassEvidenceView, ui::ClassPanel, ui::ConfusionView, ui::ConvArithmeticView, ui::GpuMappingPanel,
      ui::KernelWeightsView, ui::ModelSummaryView, ui::ProfilePanel, ui::RooflinePanel, ui::TimingPanel,
      ui::UserKernelPanel;
  // The parent is the window; QTabWidget::addTab moves each view into its page.
  return {
      // "draw": the same tab, with the drawing canvas in the left column.
      tab<ExploreView>({"explore", "draw"}, "Feature maps && prediction", LeftColumn::Needed,
                       [](const TabContext& c) {
                         auto* view = new ExploreView(c.window);
                         view->setSizes({640, 440});
                         return view;
                       })
          .presentedAs("Maps")
          // The names come from the model's card where it has them, else from the test set.
          .on(Change::Model, [](ExploreView& v, const WindowState& s) { v.prediction()->setClassNames(s.classNames); })
          .on(Change::TestSet,
              [](ExploreView& v, const WindowState& s) { v.prediction()->setClassNames(s.classNames); })
          .on(Change::Outcome,
              [](ExploreView& v, const WindowState& s) {
                if (s.outcome || s.outcomeCleared.isEmpty() == s.outcomeFailure.isEmpty()) {
                  v.maps()->setOutcome(s.outcome);
                  v.prediction()->setOutcome(s.outcome);
                } else if (!s.outcomeFailure.isEmpty()) {
                  // The old picture's maps are no answer for the new request: why, in their place.
                  v.maps()->clear(QObject::tr("No feature maps: %1").arg(s.outcomeFailure));
                  v.prediction()->clear(QObject::tr("No prediction"), s.outcomeFailure);
                } else {
                  v.maps()->setOutcome(nullptr);
                  v.prediction()->clear(s.outcomeCleared);
                }
              })
          .links([](ExploreView& v, WindowLinks& w) {
            v.prediction()->setClassNames(w.state().classNames);
            QObject::connect(v.maps(), &ui::FeatureMapView::errorOccurred, &v,
                             [&w](const QString& message) { w.showError(message); });
            QObject::connect(v.prediction(), &ui::PredictionPanel::errorOccurred, &v,
                             [&w](const QString& message) { w.showError(message); });
            // A pixel clicked on an enlarged conv map: its arithmetic, in this window.
            QObject::connect(v.maps(), &ui::FeatureMapView::convPixelChosen, &v,
                             [&w](const QString& node, int channel, int y, int x) {
                               auto* arithmetic = w.view<ui::ConvArithmeticView>("arithmetic");
                               if (!arithmetic || !arithmetic->showPixel(node, channel, y, x)) return;
                               w.showView(arithmetic);
                               w.window()->raise();
                               w.window()->activateWindow();
                             });
          })
          .fileAction(FileAction::Kind::Export, "Export &feature maps…", QKeySequence(QObject::tr("Ctrl+E")),
                      [](ExploreView& v, WindowLinks& w) {
                        const QString path = ui::askExportPath(w.window(), "feature-maps");
                        if (!path.isEmpty())
                          if (const QString error = v.maps()->exportTo(path); !error.isEmpty()) w.showError(error);
                      })
          .fileAction(FileAction::Kind::Export, "Export &prediction chart…", QKeySequence(),
                      [](ExploreView& v, WindowLinks& w) {
                        const QString path = ui::askExportPath(w.window(), "prediction");
                        if (!path.isEmpty())
                          if (const QString error = v.prediction()->exportChart(path); !error.isEmpty())
                            w.showError(error);
                      })
          .remembers(
              [](ExploreView& v, const QSettings& settings) {
                if (settings.contains("window/explore")) v.restoreState(settings.value("window/explore").toByteArray());
                v.maps()->setColourMap(static_cast<ui::ColourMap>(settings.value("maps/colourMap", 0).toInt()));
                v.maps()->setArrangement(
                    static_cast<ui::MapOrder>(
                        settings.value("maps/order", static_cast<int>(ui::MapOrder::MeanFirst)).toInt()),
                    settings.value("maps/perLayer", ui::FeatureMapView::kDefaultMapLimit).toInt());
              },
              [](ExploreView& v, QSettings& settings) {
                settings.setValue("window/explore", v.saveState());
                settings.setValue("maps/colourMap", static_cast<int>(v.maps()->colourMap()));
                settings.setValue("maps/order", static_cast<int>(v.maps()->mapOrder()));
                settings.setValue("maps/perLayer", v.maps()->mapLimit());
              })
          .whenSelected([](ExploreView&, const QString& name, const TabContext& c) {
            if (name == "draw") c.window->inputPanel()->showSource(ui::InputPanel::Source::Drawing);
          }),
      // The Timing tab has its own variants and pictures: the left column makes way.
      tab<TimingPanel>({"timing"}, "Timing", LeftColumn::NotNeeded,
                       [](const TabContext& c) { return new TimingPanel(c.jobs, c.window); })
          .on(Change::Model, [](TimingPanel& v, const WindowState& s) { v.setModelPath(s.modelPath); })
          .on(Change::TestSet, [](TimingPanel& v, const WindowState& s) { v.setImageSet(s.testSet); })
          .opens({"json"},
                 [](TimingPanel& v, const QString& path, WindowLinks& w) {
                   const QString error = v.loadJson(path);
                   if (!error.isEmpty()) return error;
                   w.addRecentFile(path);  // the Roofline has it already (shownResultsChanged)
                   w.showView(&v);
                   return QString();
                 })
          .fileAction(FileAction::Kind::Open, "Open &benchmark JSON…", QKeySequence(QObject::tr("Ctrl+B")),
                      [](TimingPanel&, WindowLinks& w) {
                        const QString path = QFileDialog::getOpenFileName(w.window(), QObject::tr("Open a benchmark"),
                                                                          {}, QObject::tr("Benchmark JSON (*.json)"));
                        if (!path.isEmpty()) w.window()->openBenchmark(path);
                      })
          .links([](TimingPanel& v, WindowLinks& w) {
            // The Roofline draws what the Timing tab shows, however it came (opened, swept, chosen).
            QObject::connect(&v, &TimingPanel::shownResultsChanged, &v,
                             [&v, &w](std::shared_ptr<const BenchmarkReport> report, const QString& name) {
                               w.setBenchmark(std::move(report), name, v.comparison(), v.comparisonName());
                             });
            QObject::connect(&v, &TimingPanel::statusMessage, &v,
                             [&w](const QString& text) { w.showStatus(text, 6000); });
            // Nothing lost: a sweep's runs reach a recovery file as they finish, and the next start
            // offers them back (after the window is up, so the question has a window to sit on).
            if (const QString recovery = w.recoveryFile(); !recovery.isEmpty()) {
              v.setRecoveryFile(recovery);
              QTimer::singleShot(0, &v, [&v, &w] { offerRecoveredSweep(v, w); });
            }
          })
          .remembers(
              [](TimingPanel& v, const QSettings& settings) {
                v.controls()->setBatches(settings.value("timing/batches", v.controls()->batchesText()).toString());
                if (settings.contains("timing/variants"))
                  v.controls()->setCheckedVariants(settings.value("timing/variants").toStringList());
              },
              [](TimingPanel& v, QSettings& settings) {
                settings.setValue("timing/batches", v.controls()->batchesText());
                settings.setValue("timing/variants", v.controls()->checkedVariants());
              })
          // A sweep may not keep the window waiting: it stops after its inference in flight.
          .atQuit(UnsavedWork::kResults, keepOrDiscardUnsavedResults,
                  [](TimingPanel& v) {
                    if (v.sweepRunning()) v.cancelSweep();
                  }),
      tab<ProfilePanel>({"profile"}, "Profile", LeftColumn::Needed,
                        [](const TabContext& c) { return new ProfilePanel(c.jobs, c.window); })
          .on(Change::Model, [](ProfilePanel& v, const WindowState& s) { v.setModel(s.model); })
          .on(Change::Variant, [](ProfilePanel& v, const WindowState& s) { v.setVariant(s.variant); })
          .on(Change::TestSet, [](ProfilePanel& v, const WindowState& s) { v.setImageSet(s.testSet); })
          .atQuit(UnsavedWork::kResults, nullptr,
                  [](ProfilePanel& v) {
                    if (v.profileRunning()) v.cancelProfile();
                  }),
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
          .on(Change::Model, [](UserKernelPanel& v, const WindowState& s) { v.pipeline()->setModelPath(s.modelPath); })
          .opens({"cu"},  // a student's kernel (docs/your-kernel.md)
                 [](UserKernelPanel& v, const QString& path, WindowLinks& w) {
                   v.openKernel(path);
                   w.selectTab("kernel");
                   return QString();
                 })
          .fileAction(FileAction::Kind::Open, "Open your &kernel…", QKeySequence(),
                      [](UserKernelPanel& v, WindowLinks& w) {
                        w.selectTab("kernel");
                        v.openFileDialog();
                      })
          .links([](UserKernelPanel& v, WindowLinks& w) {
            // Selectable once it passed its check; drawn in the GPU mapping once it can run here.
            QObject::connect(&v, &UserKernelPanel::variantReady, w.window()->variantSelector(),
                             &ui::VariantSelector::setUserVariant);
            QObject::connect(&v, &UserKernelPanel::variantReady, &v,
                             [&w](const QString& id, const QString&, const QString& unavailableReason) {
                               auto* mapping = w.view<ui::GpuMappingPanel>("gpu-mapping");
                               if (mapping && unavailableReason.isEmpty()) mapping->addUserVariant(id.toStdString());
                             });
            // Its timings join the Timing tab's, and the Roofline's.
            QObject::connect(&v, &UserKernelPanel::timed, &v, [&w](std::shared_ptr<const BenchmarkReport> kernel) {
              if (kernel && !kernel->runs.empty())
                showBesideTiming(w, *kernel, nullptr, QObject::tr("with your kernel"));
            });
          })
          // Unsaved edits: the student may cancel the quit.
          .atQuit(
              UnsavedWork::kUsersOwnWriting, [](UserKernelPanel& v, WindowLinks&) { return v.confirmClose(); },
              nullptr),
      // The picture for the arithmetic is chosen in the first tab.
      tab<ConvArithmeticView>({"arithmetic"}, "Arithmetic", LeftColumn::NotNeeded,
                              [](const TabContext& c) { return new ConvArithmeticView(c.window); })
          .on(Change::Model, [](ConvArithmeticView& v, const WindowState& s) { v.setModel(s.model); })
          .on(Change::Outcome,
              [](ConvArithmeticView& v, const WindowState& s) {
                if (s.outcome) v.setOutcome(s.outcome);  // the last picture's sums stay until the next
              }),
      tab<KernelWeightsView>({"weights"}, "Weights", LeftColumn::NotNeeded,
                             [](const TabContext& c) { return new KernelWeightsView(c.window); })
          .on(Change::Model, [](KernelWeightsView& v, const WindowState& s) { v.setModel(s.model); }),
      tab<ConfusionView>({"confusion"}, "Where it fails", LeftColumn::NotNeeded,
                         [](const TabContext& c) { return new ConfusionView(c.jobs, c.window); })
          .presentedAs("Failures")
          .on(Change::Model,
              [](ConfusionView& v, const WindowState& s) {
                v.setModel(s.model);
                v.setPreprocessing(s.preprocessing);
              })
          .on(Change::Variant, [](ConfusionView& v, const WindowState& s) { v.setVariant(s.variant); })
          .on(Change::TestSet,
              [](ConfusionView& v, const WindowState& s) {
                v.setImageSet(s.testSet);
                v.setPreprocessing(s.preprocessing);  // an ImageFolder is read again when it changes
              })
          // A test image chosen among the mistakes opens where its maps and probabilities are.
          .links([](ConfusionView& v, WindowLinks& w) {
            QObject::connect(&v, &ConfusionView::testImageChosen, &v, [&w](int index) {
              if (w.selectTestImage(index)) w.selectTab("explore");
            });
          }),
      // Why this class: the picture's evidence, from the same outcome as the maps and the prediction.
      tab<ClassEvidenceView>({"evidence"}, "Why", LeftColumn::Needed,
                             [](const TabContext& c) { return new ClassEvidenceView(c.jobs, c.window); })
          .presentedAs("Why")
          .on(Change::Model, [](ClassEvidenceView& v, const WindowState& s) { v.setClassNames(s.classNames); })
          .on(Change::TestSet, [](ClassEvidenceView& v, const WindowState& s) { v.setClassNames(s.classNames); })
          .on(Change::Outcome, [](ClassEvidenceView& v, const WindowState& s) { v.setOutcome(s.outcome); })
          .links([](ClassEvidenceView& v, WindowLinks& w) { v.setClassNames(w.state().classNames); })
          .fileAction(FileAction::Kind::Export, "Export class &evidence…", QKeySequence(),
                      [](ClassEvidenceView& v, WindowLinks& w) {
                        const QString path = ui::askExportPath(w.window(), "class-evidence");
                        if (!path.isEmpty())
                          if (const QString error = v.exportTo(path); !error.isEmpty()) w.showError(error);
                      }),
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
                      [](const TabContext& c) { return new ClassPanel(c.window); })
          // A grading started here stops with the window; what is finished is kept.
          .atQuit(UnsavedWork::kResults, nullptr, [](ClassPanel& v) { v.cancelGrading(); })
          .opens({"/"},
                 [](ClassPanel& v, const QString& path, WindowLinks& w) {
                   w.selectTab("class");
                   return v.openFolder(path);
                 })
          .fileAction(FileAction::Kind::Open, "Open class &results folder…", QKeySequence(),
                      [](ClassPanel& v, WindowLinks& w) {
                        w.selectTab("class");
                        v.openFolderDialog();
                      })
          // A submission chosen: its kernel in the Your kernel tab, its op times in the Timing tab
          // beside what it shows, else beside the course's variants timed with the class.
          .links([](ClassPanel& v, WindowLinks& w) {
            QObject::connect(&v, &ClassPanel::submissionChosen, &v,
                             [&w](const QString& file, const QString& id, std::shared_ptr<const BenchmarkReport> times,
                                  std::shared_ptr<const BenchmarkReport> reference) {
                               if (auto* kernel = w.view<UserKernelPanel>("kernel")) kernel->openKernel(file);
                               w.selectTab("kernel");
                               if (!times || times->runs.empty()) {
                                 w.showStatus(QObject::tr("%1 has no op times (not timed): nothing to add to the "
                                                          "Timing tab")
                                                  .arg(id),
                                              8000);
                                 return;
                               }
                               showBesideTiming(w, *times, reference.get(),
                                                QObject::tr("with %1's submission").arg(id));
                             });
          }),
  };
}

}  // namespace convscope::gui
