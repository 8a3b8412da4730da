// The Timing tab's Breakdown: where the end-to-end time goes at one batch size. A benchmark JSON
// of fourteen GPU variants with their stages (and a CPU variant far slower) opens with the PyTorch
// peer file beside it; the chart has one stacked bar per variant and the peer's two bars, each
// segment as long as the JSON says, the gaps the end to end less the stages (never negative), the
// floor where the bytes worked out by hand put it, no two touching segments of one colour; it
// keeps a usable height at 1024x700 and in presentation mode at 1920x1080 (screenshots in /tmp).
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHelpEvent>
#include <QTabWidget>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <fstream>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/benchmark.h"
#include "app/core/util/error.h"
#include "tests/core/course_layers.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/benchmark_series.h"
#include "ui/charts/end_to_end_breakdown_chart.h"
#include "ui/timing/timing_panel.h"

namespace convscope::testing {
namespace {

constexpr int kBatch = 1000;
constexpr const char* kDevice = "NVIDIA H100 80GB HBM3";
constexpr const char* kClamped = "gpu-atomics";  // its stages add up to more than its end to end

// The registry's GPU variants and one kernel no registry knows: fourteen drawn; and a CPU variant.
std::vector<std::string> gpuVariants() {
  std::vector<std::string> ids;
  for (const ConvVariant& v : convVariants())
    if (v.runsOnGpu()) ids.push_back(v.id);
  ids.push_back("someone-elses-kernel");
  return ids;
}

// The stages of one variant's end-to-end step: fused, layer by layer or the whole network in one.
std::vector<std::string> stageNames(const std::string& variant) {
  if (variant == "gpu-whole-network") return {"upload", "whole network", "download", "host: probabilities"};
  std::vector<std::string> names = {"upload", "resize"};
  if (variant == "gpu-fused-epilogue" || variant == "gpu-tensor-tf32")
    names.insert(names.end(), {"conv 1 + tanh + max-pool", "conv 2 + tanh + max-pool"});
  else
    names.insert(names.end(), {"conv 1", "tanh 1", "max-pool 1", "conv 2", "tanh 2", "max-pool 2"});
  names.insert(names.end(), {"dense 1", "tanh 3", "dense 2", "softmax 1", "download", "host: probabilities"});
  return names;
}

double stageSeconds(size_t v, size_t k) {
  return 1e-6 * static_cast<double>((v % 5) + 1) * static_cast<double>(k + 2);
}

// The figures an H100 80GB HBM3's driver reports, as a benchmark run there records them: memory
// 2619 MHz x 2 x 5120 bits / 8 = 3352.32 GB/s, more than the copy measured (2924 GB/s).
DeviceFigures h100Figures() {
  DeviceFigures f;
  f.name = kDevice;
  f.computeMajor = 9;
  f.multiprocessors = 132;
  f.smClockMHz = 1980;
  f.memoryClockMHz = 2619;
  f.memoryBusWidthBits = 5120;
  f.copyBytesPerSecond = 2924e9;
  return f;
}
constexpr double kH100Bandwidth = 3.35232e12;

BenchmarkReport fixture() {
  BenchmarkReport report;
  report.model = "course-high";
  report.device = kDevice;
  report.deviceFigures = h100Figures();  // the floor's bandwidth, wherever the test runs
  report.date = "2026-11-26T00:00:00Z";
  report.repeats = 5;
  std::vector<std::string> variants = gpuVariants();
  variants.push_back("cpu-im2col-gemm");
  for (size_t v = 0; v < variants.size(); ++v)
    for (int batch : {1, kBatch}) {
      BenchmarkRun run;
      run.variant = variants[v];
      run.batch = batch;
      for (const ConvProblem& problem : {courseConv1(batch), courseConv2(batch)}) {  // the floor's bytes
        LayerBenchmark layer;
        layer.node = problem.inChannels == 1 ? "/0/Conv" : "/3/Conv";
        layer.problem = problem;
        layer.ranVariant = run.variant;
        layer.opTime = {20e-6, 19e-6, 21e-6};
        run.layers.push_back(layer);
      }
      double sum = 0.0;
      const std::vector<std::string> names = stageNames(run.variant);
      for (size_t k = 0; k < names.size(); ++k) {
        const double seconds = stageSeconds(v, k);
        run.endToEndStages.push_back({names[k], "layer", {seconds, seconds * 0.9, seconds * 1.2}});
        sum += seconds;
      }
      const double endToEnd = run.variant == "cpu-im2col-gemm" ? 0.5
                              : run.variant == kClamped        ? sum * 0.97
                                                               : sum + 30e-6;
      run.endToEnd = {endToEnd, endToEnd, endToEnd};
      run.inference = {endToEnd * 2, endToEnd * 2, endToEnd * 2};
      run.upload = {5e-6, 5e-6, 5e-6};
      run.accuracy = 0.9;
      report.runs.push_back(run);
    }
  return report;
}

const nlohmann::json kPeer = {{"device", kDevice},
                              {"torch", "2.11.0+cu130"},
                              {"batches", {1, kBatch}},
                              {"pinned_h2d_gbytes_per_s", 54.8},
                              {"copy_gbytes_per_s", 2924.0},
                              {"peer_host_ms",
                               {{"compiled_graph_fp32", {{"1", 0.0696}, {"1000", 0.7099}}},
                                {"compiled_graph_tf32", {{"1", 0.0732}, {"1000", 0.6041}}}}}};

// Writes bench.json and, unless told not to, pytorch.json beside it; returns bench.json's path.
QString writeFiles(const QTemporaryDir& dir, const BenchmarkReport& report, bool peer = true) {
  const QString bench = dir.filePath("bench.json");
  writeBenchmarkJson(report, bench.toStdString());
  if (peer) std::ofstream(dir.filePath("pytorch.json").toStdString()) << kPeer.dump(2);
  return bench;
}

// The value of `bars` at row key `key`, or -1 where it has none.
double valueAt(const QCPBars* bars, double key) {
  for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
    if (it->key == key) return it->value;
  return -1.0;
}

// The stacked series from the bottom up (each moved above the one before).
std::vector<QCPBars*> stackOf(ui::EndToEndBreakdownChart& chart) {
  std::vector<QCPBars*> stack;
  for (int i = 0; i < chart.plottableCount(); ++i) {
    auto* bars = qobject_cast<QCPBars*>(chart.plottable(i));
    if (bars && bars != chart.peerBars()) stack.push_back(bars);
  }
  return stack;
}

ui::EndToEndBreakdownChart* showBreakdown(gui::MainWindow& window, int batch = kBatch) {
  EXPECT_TRUE(window.selectTab("timing"));
  ui::TimingPanel* timing = window.view<ui::TimingPanel>("timing");
  timing->lowerTabs()->setCurrentWidget(timing->breakdownChart());
  const int batchIndex = [&] {
    for (QComboBox* combo : timing->findChildren<QComboBox*>())
      if (combo->findData(batch) >= 0 && combo->toolTip().contains("batch")) {
        combo->setCurrentIndex(combo->findData(batch));
        return combo->currentIndex();
      }
    return -1;
  }();
  EXPECT_GE(batchIndex, 0) << "the batch chooser";
  for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
  timing->breakdownChart()->replot(QCustomPlot::rpImmediateRefresh);
  return timing->breakdownChart();
}

TEST(TimingBreakdown, OneStackedBarPerVariantAsLongAsTheJsonSaysWithThePeerBesideAndTheFloorMarked) {
  auto window = openWindow();
  QTemporaryDir dir;
  const BenchmarkReport report = fixture();
  ASSERT_TRUE(window->openBenchmark(writeFiles(dir, report))) << window->lastError().toStdString();
  ASSERT_NE(window->view<ui::TimingPanel>("timing")->peer(), nullptr)
      << "the pytorch.json beside the benchmark opens with it";
  EXPECT_TRUE(window->view<ui::TimingPanel>("timing")->originText().contains("pytorch.json"));
  ui::EndToEndBreakdownChart* chart = showBreakdown(*window);
  ASSERT_EQ(chart->batch(), kBatch);

  // Rows: the fourteen GPU variants in course order, then the peer's TF32 and FP32 bars; the CPU
  // variant, 0.5 s against microseconds, is named in the note instead.
  std::vector<std::string> expectedRows;
  for (const std::string& variant : ui::variantsInCourseOrder(report))
    if (variant != "cpu-im2col-gemm") expectedRows.push_back(variant);
  ASSERT_EQ(expectedRows.size(), 14u);
  expectedRows.push_back("PyTorch compiled + CUDA graph (TF32)");
  expectedRows.push_back("PyTorch compiled + CUDA graph (FP32)");
  EXPECT_EQ(chart->rows(), expectedRows);
  EXPECT_TRUE(chart->noteText().contains(ui::variantDisplayName("cpu-im2col-gemm"))) << chart->noteText().toStdString();

  // Every segment as long as the JSON's median (in ms), at its variant's row.
  const std::vector<std::string> variants = gpuVariants();
  for (size_t r = 0; r < 14; ++r) {
    SCOPED_TRACE(expectedRows[r]);
    const BenchmarkRun* run = ui::findRun(report, expectedRows[r], kBatch);
    ASSERT_NE(run, nullptr);
    double sum = 0.0;
    for (const EndToEndStage& stage : run->endToEndStages) {
      const QCPBars* bars = chart->stageBars(QString::fromStdString(stage.name));
      ASSERT_NE(bars, nullptr) << stage.name;
      EXPECT_NEAR(valueAt(bars, r + 1.0), stage.time.median * 1e3, 1e-12) << stage.name;
      sum += stage.time.median;
    }
    const double gaps = run->endToEnd.median - sum;
    if (expectedRows[r] == kClamped) {
      EXPECT_LT(gaps, 0.0);
      EXPECT_EQ(valueAt(chart->stageBars("gaps"), r + 1.0), -1.0) << "negative gaps are not drawn";
    } else {
      EXPECT_NEAR(valueAt(chart->stageBars("gaps"), r + 1.0), gaps * 1e3, 1e-12);
    }
  }
  EXPECT_TRUE(chart->noteText().contains("drawn as 0")) << chart->noteText().toStdString();
  EXPECT_TRUE(chart->noteText().contains(ui::variantDisplayName(kClamped)));

  // The peer's totals, from its file.
  ASSERT_NE(chart->peerBars(), nullptr);
  EXPECT_NEAR(valueAt(chart->peerBars(), 15.0), kPeer["peer_host_ms"]["compiled_graph_tf32"]["1000"].get<double>(),
              1e-12);
  EXPECT_NEAR(valueAt(chart->peerBars(), 16.0), kPeer["peer_host_ms"]["compiled_graph_fp32"]["1000"].get<double>(),
              1e-12);

  // Stacked: each series on the one before, so a bar's segments follow each other.
  const std::vector<QCPBars*> stack = stackOf(*chart);
  for (size_t i = 1; i < stack.size(); ++i)
    EXPECT_EQ(stack[i]->barBelow(), stack[i - 1]) << stack[i]->name().toStdString();

  // No two segments that touch in a bar share a colour.
  for (size_t r = 0; r < 14; ++r) {
    const QCPBars* previous = nullptr;
    for (const QCPBars* bars : stack) {
      if (valueAt(bars, r + 1.0) < 0.0) continue;
      if (previous) {
        EXPECT_NE(bars->brush().color(), previous->brush().color())
            << expectedRows[r] << ": " << previous->name().toStdString() << " | " << bars->name().toStdString();
      }
      previous = bars;
    }
  }

  // The floor: the least of the variants' floors, each the larger of the upload (1000 pictures of
  // 784 bytes at the peer's pinned 54.8 GB/s) and its conv stages' bytes over the memory bandwidth:
  // the larger of the driver's figure the file records (3352.32 GB/s) and the peer's 2924 GB/s
  // copy. This file's stages do not say what they wrote, so every variant counts each conv's
  // full output (worked out by hand): they all have the same floor.
  EXPECT_EQ(2619e6 * 2 * 5120 / 8, kH100Bandwidth);
  const double convBytes = 4.0 * (kBatch * (48.0 * 48 + 12.0 * 42 * 42) + 12 * 49) +
                           4.0 * (kBatch * (12.0 * 21 * 21 + 24.0 * 15 * 15) + 24 * 12 * 49);
  const double floorMs = std::max(kBatch * 784.0 / 54.8e9, convBytes / std::max(kH100Bandwidth, 2924e9)) * 1e3;
  EXPECT_NEAR(chart->floorMilliseconds(), floorMs, 1e-12);
  ASSERT_NE(chart->floorLine(), nullptr);
  EXPECT_NEAR(chart->floorLine()->point1->coords().x(), floorMs, 1e-12);
  EXPECT_NEAR(chart->floorLine()->point2->coords().x(), floorMs, 1e-12);
  EXPECT_TRUE(chart->floorToolTip().contains("pinned")) << chart->floorToolTip().toStdString();
  EXPECT_TRUE(chart->floorToolTip().contains("54.8 GB/s"));
  const QPoint onFloor(qRound(chart->xAxis->coordToPixel(floorMs)), chart->axisRect()->center().y());
  EXPECT_EQ(chart->toolTipAt(onFloor), chart->floorToolTip());

  // Pointing at a segment names the variant, the stage and its time.
  const QCPBars* conv = chart->stageBars("conv 1");
  const double left = chart->xAxis->coordToPixel(valueAt(chart->stageBars("upload"), 1.0) +
                                                 valueAt(chart->stageBars("resize"), 1.0) + valueAt(conv, 1.0) / 2.0);
  const QString tip = chart->toolTipAt(QPoint(qRound(left), qRound(chart->yAxis->coordToPixel(1.0))));
  EXPECT_TRUE(tip.contains("conv 1")) << tip.toStdString();
  EXPECT_TRUE(tip.contains(ui::variantDisplayName(expectedRows[0]))) << tip.toStdString();

  // Exported like the other Timing charts.
  for (const char* name : {"breakdown.png", "breakdown.pdf"}) {
    EXPECT_EQ(window->view<ui::TimingPanel>("timing")->exportBreakdownChart(dir.filePath(name)), QString());
    EXPECT_GT(QFileInfo(dir.filePath(name)).size(), 1000) << name;
  }
}

TEST(TimingBreakdown, ReadableAt1024x700AndInPresentationModeWithScreenshots) {
  auto window = openWindow();
  QTemporaryDir dir;
  ASSERT_TRUE(window->openBenchmark(writeFiles(dir, fixture())));
  struct Screen {
    QSize size;
    bool presentation;
    const char* file;
  };
  for (const Screen screen : {Screen{{1024, 700}, false, "/tmp/timing-breakdown-1024x700.png"},
                              Screen{{1920, 1080}, true, "/tmp/timing-breakdown-1920x1080-presentation.png"}}) {
    SCOPED_TRACE(screen.file);
    window->setPresentation(screen.presentation);
    window->resize(screen.size);
    ui::EndToEndBreakdownChart* chart = showBreakdown(*window);
    for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
    chart->replot(QCustomPlot::rpImmediateRefresh);
    // Sixteen rows, each at least as tall as its label, and the axes a good part of the chart.
    const QRect axes = chart->axisRect()->rect();
    const double rowPixels = axes.height() / (chart->yAxis->range().size());
    EXPECT_GE(rowPixels, QFontMetrics(chart->yAxis->tickLabelFont()).height()) << "the rows' names overlap";
    EXPECT_GE(axes.height(), chart->height() / 3) << "the bars are a strip between the title and the legend";
    EXPECT_GE(axes.width(), chart->width() / 3) << "the names leave the bars no room";
    window->grab().save(screen.file);
  }
  window->setPresentation(false);
}

TEST(TimingBreakdown, AnOlderFileShowsConvOpTimesAndTheRestAsOtherAndSaysSo) {
  auto window = openWindow();
  QTemporaryDir dir;
  BenchmarkReport report = fixture();
  for (BenchmarkRun& run : report.runs) run.endToEndStages.clear();
  ASSERT_TRUE(window->openBenchmark(writeFiles(dir, report, false)));
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->peer(), nullptr);
  ui::EndToEndBreakdownChart* chart = showBreakdown(*window);
  EXPECT_TRUE(chart->noteText().contains("no stage timings for any variant")) << chart->noteText().toStdString();
  const BenchmarkRun* run = ui::findRun(report, chart->rows()[0], kBatch);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(chart->stageBars("upload (floats)"), nullptr) << "the op-time runs' upload is no part of the step";
  EXPECT_NEAR(valueAt(chart->stageBars("/0/Conv"), 1.0), run->layers[0].opTime.median * 1e3, 1e-12);
  const double other = run->endToEnd.median - run->layers[0].opTime.median - run->layers[1].opTime.median;
  EXPECT_NEAR(valueAt(chart->stageBars("other"), 1.0), other * 1e3, 1e-12);
  // Without the peer's pinned bandwidth the floor is the conv bytes' at the bandwidth of the GPU
  // figures the file records, and its tooltip says the upload's part is unknown.
  const double convBytes = 4.0 * (kBatch * (48.0 * 48 + 12.0 * 42 * 42) + 12 * 49) +
                           4.0 * (kBatch * (12.0 * 21 * 21 + 24.0 * 15 * 15) + 24 * 12 * 49);
  EXPECT_NEAR(chart->floorMilliseconds(), convBytes / kH100Bandwidth * 1e3, 1e-12);
  EXPECT_TRUE(chart->floorToolTip().contains("unknown")) << chart->floorToolTip().toStdString();
}

// The committed H100 run (written before the stages were measured) with its peer beside it.
TEST(TimingBreakdown, TheCommittedH100RunOpensWithItsPeerAndItsFloorIsTheLeastVariantFloor) {
  auto window = openWindow();
  const QString folder = QString(CONVSCOPE_SOURCE_DIR) + "/docs/results/2026-11-26-end-to-end-peer";
  ASSERT_TRUE(window->openBenchmark(folder + "/bench.json")) << window->lastError().toStdString();
  ASSERT_NE(window->view<ui::TimingPanel>("timing")->peer(), nullptr);
  window->resize(1440, 900);
  ui::EndToEndBreakdownChart* chart = showBreakdown(*window, 10000);
  ASSERT_EQ(chart->batch(), 10000);
  const nlohmann::json peer = nlohmann::json::parse(std::ifstream((folder + "/pytorch.json").toStdString()));
  // The variants' rows (the CPU one, seconds against milliseconds, named in the note), then the peer's.
  ASSERT_GE(chart->rows().size(), 3u);
  EXPECT_EQ(chart->rows()[chart->rows().size() - 2], "PyTorch compiled + CUDA graph (TF32)");
  EXPECT_NEAR(valueAt(chart->peerBars(), static_cast<double>(chart->rows().size())),
              peer["peer_host_ms"]["compiled_graph_fp32"]["10000"].get<double>(), 1e-12);
  EXPECT_TRUE(chart->noteText().contains("no stage timings")) << chart->noteText().toStdString();
  // The floor: the least of the GPU variants' floors, each the larger of the upload (10,000
  // pictures of 784 bytes over the peer's pinned bandwidth) and the bytes its conv stages move over
  // the memory bandwidth -- the larger of the driver's figure the file records (2619 MHz x 2 x
  // 5120 bits / 8) and the copy the peer measured in the same call. Three kinds of variant, their
  // bytes worked out by hand (4-byte floats; course-high: conv1 1x48x48 -> 12x42x42, pooled
  // 12x21x21; conv2 12x21x21 -> 24x15x15, pooled 24x7x7; 7x7 kernels; 10 classes):
  const nlohmann::json bench = nlohmann::json::parse(std::ifstream((folder + "/bench.json").toStdString()));
  const nlohmann::json& figures = bench.at("device_figures");
  ASSERT_EQ(figures.at("memory_clock_mhz"), 2619);
  ASSERT_EQ(figures.at("memory_bus_width_bits"), 5120);
  const double bandwidth = std::max(2619e6 * 2 * 5120 / 8, peer["copy_gbytes_per_s"].get<double>() * 1e9);
  EXPECT_EQ(bandwidth, 3.35232e12) << "the driver's figure is more than the copy measured";
  const double upload = 10000 * 784.0 / (peer["pinned_h2d_gbytes_per_s"].get<double>() * 1e9);
  // each conv its own kernel, writing its full output (cudnn, gpu-restrict-unroll, ...);
  const double fullBytes = 4.0 * (10000 * (48.0 * 48 + 12.0 * 42 * 42) + 12 * 49) +
                           4.0 * (10000 * (12.0 * 21 * 21 + 24.0 * 15 * 15) + 24 * 12 * 49);
  // tanh and max-pooling fused into each conv: the pooled output written (gpu-tensor-tf32, ...);
  const double pooledBytes = 4.0 * (10000 * (48.0 * 48 + 12.0 * 21 * 21) + 12 * 49) +
                             4.0 * (10000 * (12.0 * 21 * 21 + 24.0 * 7 * 7) + 24 * 12 * 49);
  // the whole network in one kernel: the 8-bit pictures read, conv1's weights read, the scores written.
  const double wholeNetworkBytes = 10000 * 784.0 + 4.0 * (12 * 49 + 10000 * 10);
  const auto floorOf = [&](double bytes) { return std::max(upload, bytes / bandwidth); };
  EXPECT_LT(floorOf(wholeNetworkBytes), floorOf(pooledBytes));
  EXPECT_LT(floorOf(pooledBytes), floorOf(fullBytes));
  EXPECT_EQ(floorOf(wholeNetworkBytes), upload) << "below the upload, the whole-network kernel's bytes";
  EXPECT_NEAR(chart->floorMilliseconds(), floorOf(wholeNetworkBytes) * 1e3, 1e-9);
  EXPECT_TRUE(chart->floorToolTip().contains(ui::variantDisplayName("gpu-whole-network")))
      << chart->floorToolTip().toStdString();
  window->grab().save("/tmp/timing-breakdown-h100-file.png");
}

// The floor's bandwidth comes from the GPU figures the file carries: written, read back the same;
// absent (an older file) read as none; malformed, refused naming the file and the field.
TEST(TimingBreakdown, TheFileCarriesItsGpusFiguresAndAMalformedOneIsRefusedByName) {
  QTemporaryDir dir;
  const std::string path = writeFiles(dir, fixture(), false).toStdString();
  const BenchmarkReport back = readBenchmarkJson(path);
  ASSERT_TRUE(back.deviceFigures.has_value());
  EXPECT_EQ(deviceFiguresToJson(*back.deviceFigures), deviceFiguresToJson(h100Figures()));

  nlohmann::json j = nlohmann::json::parse(std::ifstream(path));
  ASSERT_TRUE(j.contains("device_figures"));
  j.erase("device_figures");
  std::ofstream(path) << j.dump();
  EXPECT_FALSE(readBenchmarkJson(path).deviceFigures.has_value());

  j["device_figures"] = deviceFiguresToJson(h100Figures());
  j["device_figures"]["sm_count"] = "many";
  std::ofstream(path) << j.dump();
  try {
    readBenchmarkJson(path);
    ADD_FAILURE() << "a malformed sm_count was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("device_figures.sm_count"), std::string::npos) << e.what();
  }
}

TEST(TimingBreakdown, APeerOfAnotherDeviceIsRefusedNamingTheFile) {
  auto window = openWindow();
  QTemporaryDir dir;
  ASSERT_TRUE(window->openBenchmark(writeFiles(dir, fixture(), false)));
  nlohmann::json other = kPeer;
  other["device"] = "NVIDIA H200";
  const QString path = dir.filePath("h200-pytorch.json");
  std::ofstream(path.toStdString()) << other.dump();
  const QString error = window->view<ui::TimingPanel>("timing")->loadPeerJson(path);
  EXPECT_TRUE(error.contains("h200-pytorch.json")) << error.toStdString();
  EXPECT_TRUE(error.contains("NVIDIA H200")) << error.toStdString();
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->peer(), nullptr);
  std::ofstream(dir.filePath("broken.json").toStdString()) << "{";
  EXPECT_TRUE(
      window->view<ui::TimingPanel>("timing")->loadPeerJson(dir.filePath("broken.json")).contains("broken.json"));
  // The same device's peer opens on its own too; opened as a benchmark, it says what it is.
  std::ofstream(dir.filePath("peer.json").toStdString()) << kPeer.dump();
  const QString asBenchmark = window->view<ui::TimingPanel>("timing")->loadJson(dir.filePath("peer.json"));
  EXPECT_TRUE(asBenchmark.contains("peer.json")) << asBenchmark.toStdString();
  EXPECT_TRUE(asBenchmark.contains("Open PyTorch peer")) << asBenchmark.toStdString();
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->loadPeerJson(dir.filePath("peer.json")), QString());
  EXPECT_EQ(window->view<ui::TimingPanel>("timing")->breakdownChart()->peerBars() != nullptr, true);
}

}  // namespace
}  // namespace convscope::testing
