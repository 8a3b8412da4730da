// The views that show why, on the GPU side: the GPU mapping tab (the block under a pointed-at
// pixel is the block the launch assigns it), the roofline (each point's coordinates and × of
// floor as computed here from the benchmark JSON itself, read with Qt's JSON classes rather than
// ConvScope's reader), several machines overlaid and named, and the speed-up staircase (its
// numbers from the JSON's op times, in course order). Headless screenshots of both tabs.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSpinBox>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/benchmark.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/chart_style.h"
#include "ui/charts/roofline_chart.h"
#include "ui/charts/roofline_points.h"
#include "ui/charts/speedup_staircase.h"
#include "ui/gpumap/gpu_mapping_panel.h"
#include "ui/gpumap/gpu_mapping_view.h"
#include "ui/roofline/roofline_panel.h"

namespace convscope::testing {
namespace {

const QString kGui = QStringLiteral(CONVSCOPE_GUI_PATH);
const QString kH100Bench =
    QStringLiteral(CONVSCOPE_SOURCE_DIR) + "/docs/results/2026-11-23-beyond-the-course/bench-h100.json";

// A GPU row of this test, in every build: 4x4 output tiles, map fastest (as the tiled kernels
// order their blocks), so the mapping view has geometry to draw without CUDA. It never runs.
constexpr int kTestTile = 4;
const bool registered = [] {
  ConvVariant row;
  row.id = "test-map-tiles";
  row.displayName = "Test 4x4 tiles";
  row.description = row.courseStep = "test";
  row.sourceFile = "tests/ui/test_gpu_views.cpp";
  row.courseOrder = 99;
  row.requirements.gpu = true;
  row.requirements.minComputeMajor = 99;  // never runs here
  row.runOnDevice = [](Device&, const ConvProblem&, const float*, const float*, float*, const ConvEpilogue&) {};
  row.launchGeometry = [](const ConvProblem& p) {
    KernelLaunchGeometry g;
    g.kernel = "test_tiles";
    (void)p;
    g.gridX = 7;  // fewer blocks than tiles: grid-stride passes
    g.blockX = g.blockY = kTestTile;
    g.tileHeight = g.tileWidth = kTestTile;
    g.sharedBytes = 3000;
    g.order = BlockOrder::kMapTiles;
    g.mapping = "test";
    return std::vector<KernelLaunchGeometry>{g};
  };
  registerConvVariant(row);
  return true;
}();

QJsonObject readJson(const QString& path) {
  QFile file(path);
  EXPECT_TRUE(file.open(QIODevice::ReadOnly)) << path.toStdString();
  return QJsonDocument::fromJson(file.readAll()).object();
}

// The figures sit right under the drawings at every size: no empty band between a diagram and
// its explanation (a 1024x700 window, a tall one, a wide one), for a direct and a GEMM variant.
TEST(GpuMappingView, TheFiguresFollowTheDrawingWithoutAGap) {
  auto window = openWindow();
  ASSERT_TRUE(window->selectTab("gpu-mapping"));
  ui::GpuMappingPanel* panel = window->view<ui::GpuMappingPanel>("gpu-mapping");
  for (const QSize size : {QSize(1024, 700), QSize(1440, 1000), QSize(1920, 1080)}) {
    // The test's own row draws in every build; the GEMM row only where the build has CUDA (without
    // it the GPU rows carry no launch geometry, and the view says so instead of drawing).
    for (const char* variant : {"test-map-tiles", "gpu-unroll-gemm"}) {
      ASSERT_TRUE(panel->setVariant(0, variant));
      window->resize(size);
      for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();
      ui::GpuMappingView* view = panel->view(0);
      if (!view->hasLaunch()) {
        ASSERT_STRNE(variant, "test-map-tiles") << "the test's own row always has a launch";
        continue;
      }
      // The figures of both sides share a row: the taller drawing of the two is the one to follow.
      const int drawingBottom = std::max(view->mapTo(panel, QPoint(0, view->drawingBottom())).y(),
                                         panel->view(1)->mapTo(panel, QPoint(0, panel->view(1)->drawingBottom())).y());
      const int figuresTop = panel->figures(0)->mapTo(panel, QPoint(0, 0)).y();
      SCOPED_TRACE(std::string(variant) + " at " + std::to_string(size.width()) + "x" + std::to_string(size.height()));
      EXPECT_GE(figuresTop, drawingBottom) << "the figures cover the drawing";
      EXPECT_LE(figuresTop - drawingBottom, 40) << "an empty band between the drawing and its figures";
    }
  }
}

TEST(GpuMappingView, TheBlockUnderThePointerIsTheOneTheLaunchAssigns) {
  auto window = openWindow();
  ui::GpuMappingPanel* panel = window->view<ui::GpuMappingPanel>("gpu-mapping");
  ASSERT_EQ(panel->layerChoice()->count(), 2) << "course-high has two conv layers";
  panel->resize(1200, 800);
  panel->show();
  ASSERT_TRUE(panel->setVariant(0, "test-map-tiles"));
  panel->setLayer(1);  // 12x21x21 -> 24x15x15, kernel 7
  panel->mapChoice()->setValue(5);
  ui::GpuMappingView* view = panel->view(0);
  ASSERT_TRUE(view->hasLaunch()) << view->figuresText().toStdString();
  const int outHeight = 15, outWidth = 15, maps = 24;
  const int tiles = (outWidth + kTestTile - 1) / kTestTile;  // 4 per side
  for (const auto& [oh, ow] : std::vector<std::pair<int, int>>{{0, 0}, {14, 14}, {5, 9}, {12, 3}}) {
    QTest::mouseMove(view, view->outputPixelCentre(oh, ow));
    QTest::mouseClick(view, Qt::LeftButton, {}, view->outputPixelCentre(oh, ow));
    SCOPED_TRACE(std::to_string(oh) + "," + std::to_string(ow));
    EXPECT_EQ(view->pixelRow(), oh);
    EXPECT_EQ(view->pixelColumn(), ow);
    // Blocks (image, tile row, tile column, map), map fastest; 7 blocks in the grid.
    const int64_t block = ((0 * tiles + oh / kTestTile) * tiles + ow / kTestTile) * maps + 5;
    EXPECT_EQ(view->selection().block, block);
    EXPECT_EQ(view->selection().blockIdxX, block % 7);
    EXPECT_EQ(view->selection().threadX, ow % kTestTile);
    EXPECT_EQ(view->selection().threadY, oh % kTestTile);
    const QString figures = panel->figures(0)->text();
    EXPECT_TRUE(figures.contains(QString("block %1 (blockIdx.x %2").arg(block).arg(block % 7)))
        << figures.toStdString();
    EXPECT_TRUE(figures.contains(QString("thread (%1, %2)").arg(ow % kTestTile).arg(oh % kTestTile)));
    // The staged input: (4-1)*1 + 7 = 10 rows and columns from the tile's origin.
    EXPECT_TRUE(figures.contains(QString("rows %1–%2").arg(oh / kTestTile * 4).arg(oh / kTestTile * 4 + 9)));
    // The other side shows the same pixel.
    EXPECT_EQ(panel->view(1)->pixelRow(), oh);
    EXPECT_EQ(panel->view(1)->pixelColumn(), ow);
  }
  // Arrow keys step the pixel.
  view->setFocus();
  QTest::keyClick(view, Qt::Key_Left);
  EXPECT_EQ(view->pixelColumn(), 2);
  EXPECT_TRUE(panel->figures(0)->text().contains("3000 bytes"));
  EXPECT_TRUE(panel->figures(0)->text().contains("estimated"));

  // The course's baseline: 256 threads over the flat output, where this build has its geometry.
  ASSERT_TRUE(panel->setVariant(1, "gpu-baseline"));
  ui::GpuMappingView* baseline = panel->view(1);
  if (!findConvVariant("gpu-baseline").launchGeometry) {
    EXPECT_TRUE(panel->figures(1)->text().contains("no CUDA")) << panel->figures(1)->text().toStdString();
  } else {
    QTest::mouseClick(baseline, Qt::LeftButton, {}, baseline->outputPixelCentre(7, 11));
    const int64_t flat = (0 * maps + 5) * outHeight * outWidth + 7 * outWidth + 11;
    EXPECT_EQ(baseline->selection().block, flat / 256);
    EXPECT_EQ(baseline->selection().threadX, flat % 256);
    // The fused unroll + GEMM: 512-column tiles of the (maps x image-pixels) output, map tile
    // fastest; 24 maps make one tile of 24 (gpu/kernels/05_fused_unroll_gemm.cu).
    ASSERT_TRUE(panel->setVariant(1, "gpu-fused-unroll-gemm"));
    QTest::mouseClick(baseline, Qt::LeftButton, {}, baseline->outputPixelCentre(9, 4));
    const int64_t column = 9 * outWidth + 4;
    EXPECT_EQ(baseline->launch().tileHeight, 24);
    EXPECT_EQ(baseline->selection().block, column / 512 * 1 + 5 / 24);
    EXPECT_EQ(baseline->selection().threadX, column % 512 % 128);
    EXPECT_TRUE(panel->figures(1)->text().contains("W (24×588)")) << panel->figures(1)->text().toStdString();
  }

  QTemporaryDir dir;
  const QString png = dir.filePath("mapping.png");
  EXPECT_EQ(panel->exportTo(png), "");
  EXPECT_GT(distinctColours(QImage(png)), 20);
}

TEST(Roofline, PointsAreTheJsonsLayersAtTheirIntensityAndFlopRate) {
  const QJsonObject json = readJson(kH100Bench);
  ui::RooflinePanel panel;
  panel.resize(1200, 900);
  panel.show();
  ASSERT_EQ(panel.addJson(kH100Bench), "");
  ui::RooflineChart* chart = panel.chart();
  chart->replot(QCustomPlot::rpImmediateRefresh);

  // The largest batch of the file, every layer: computed here from the JSON alone.
  int largest = 0;
  for (const QJsonValue run : json["runs"].toArray()) largest = std::max(largest, run["batch"].toInt());
  struct Expected {
    double intensity, gflops, timesFloor;
  };
  // The roofs, from the GPU figures the file records (its "device_figures"), worked out here:
  // memory 2619 MHz x 2 (double data rate) x 5120 bits / 8 = 3352.32 GB/s, more than the copy the
  // file records (so it is the roof); FP32 132 SMs x 1980 MHz x 128 lanes x 2 = 66.90816 TFLOP/s;
  // dense TF32 132 SMs x 1980 MHz x 2048 FLOPs per SM per clock (Hopper) = 535.26528 TFLOP/s.
  const QJsonObject figures = json["device_figures"].toObject();
  ASSERT_EQ(figures["memory_clock_mhz"].toInt(), 2619);
  ASSERT_EQ(figures["memory_bus_width_bits"].toInt(), 5120);
  ASSERT_EQ(figures["sm_count"].toInt(), 132);
  ASSERT_EQ(figures["sm_clock_mhz"].toInt(), 1980);
  ASSERT_EQ(figures["compute_capability"].toString(), "9.0");
  const double bandwidth = std::max(2619e6 * 2 * 5120 / 8, figures["copy_bytes_per_second"].toDouble());
  EXPECT_EQ(bandwidth, 3.35232e12);
  const double fp32Peak = 132 * 1980e6 * 128 * 2, tf32Peak = 132 * 1980e6 * 2048;
  EXPECT_NEAR(fp32Peak, 66.90816e12, 1.0);
  EXPECT_NEAR(tf32Peak, 535.26528e12, 1.0);
  std::map<std::pair<std::string, std::string>, Expected> expected;  // (variant, node)
  for (const QJsonValue run : json["runs"].toArray()) {
    if (run["batch"].toInt() != largest) continue;
    const QString arithmetic = run["arithmetic"].toString("FP32");
    for (const QJsonValue layer : run["layers"].toArray()) {
      const QJsonObject p = layer["problem"].toObject();
      const double n = p["batch"].toDouble(), c = p["in_channels"].toDouble(), m = p["out_channels"].toDouble();
      const double k = p["kernel_height"].toDouble() * p["kernel_width"].toDouble();
      const double outPixels = p["out_height"].toDouble() * p["out_width"].toDouble();
      const double written =
          layer.toObject().contains("output_elements") ? layer["output_elements"].toDouble() : n * m * outPixels;
      const double compulsory =
          4.0 * (n * c * p["in_height"].toDouble() * p["in_width"].toDouble() + m * c * k + written);
      const double median = layer["op_time_s"]["median"].toDouble();
      // The JSON's own GB/s counts the same compulsory bytes.
      EXPECT_NEAR(compulsory / median / 1e9, layer["gbytes_per_s"].toDouble(), 1e-6 * layer["gbytes_per_s"].toDouble());
      const std::string ran = layer["ran_variant"].toString().toStdString();
      // The unroll step writes its unrolled matrix (C*K*K x N*H*W) and reads it back.
      const double scratch = ran == "gpu-unroll-gemm" ? 2.0 * 4.0 * c * k * n * outPixels : 0.0;
      const double flops = p["flops"].toDouble();
      const double peak = arithmetic == "TF32" ? tf32Peak : arithmetic == "3xTF32" ? tf32Peak / 3 : fp32Peak;
      const double floor = std::max(compulsory / bandwidth, flops / peak);
      expected[{ran, layer["node"].toString().toStdString()}] = {flops / (compulsory + scratch), flops / median / 1e9,
                                                                 median / floor};
    }
  }
  ASSERT_GE(expected.size(), 20u);
  ASSERT_EQ(chart->points().size(), expected.size());
  for (const auto& plotted : chart->points()) {
    const ui::RooflinePoint& p = plotted.point;
    SCOPED_TRACE(p.variant + " " + p.node);
    ASSERT_EQ(expected.count({p.variant, p.node}), 1u);
    const Expected& e = expected.at({p.variant, p.node});
    EXPECT_NEAR(p.intensity, e.intensity, 1e-9 * e.intensity);
    EXPECT_NEAR(p.flopsPerSecond / 1e9, e.gflops, 1e-9 * e.gflops);
    EXPECT_NEAR(p.timesFloor, e.timesFloor, 1e-9 * e.timesFloor);
    EXPECT_EQ(p.batch, largest);
  }
  EXPECT_EQ(chart->roofCount(), 2) << "the H100's FP32 and TF32 roofs";
  // Where the roofs come from is said: the file's figures, not this machine's GPU.
  const ui::DeviceCeilings ceilings = ui::ceilingsFor(readBenchmarkJson(kH100Bench.toStdString()));
  EXPECT_EQ(ceilings.bytesPerSecond, bandwidth);
  EXPECT_TRUE(ceilings.source.contains("device_figures")) << ceilings.source.toStdString();

  // Clicking a point selects that point and says what it is, with its × of floor.
  const int index = 3;
  const QPoint at = chart->pointPosition(index);
  EXPECT_EQ(chart->pointAt(at), index);
  QTest::mouseClick(chart, Qt::LeftButton, {}, at);
  EXPECT_EQ(chart->selectedPoint(), index);
  const ui::RooflinePoint& p = chart->points()[index].point;
  EXPECT_TRUE(panel.selectionText()->text().contains(QString::fromStdString(p.node)));
  EXPECT_TRUE(panel.selectionText()->text().contains(
      QString("×%1 of its floor").arg(p.timesFloor, 0, 'f', p.timesFloor < 10 ? 1 : 0)))
      << panel.selectionText()->text().toStdString();

  // One layer only.
  panel.layerChoice()->setCurrentIndex(2);  // conv 2
  EXPECT_EQ(chart->points().size(), expected.size() / 2);
  QTemporaryDir dir;
  EXPECT_EQ(panel.exportRoofline(dir.filePath("roofline.pdf")), "");
  EXPECT_GT(QFileInfo(dir.filePath("roofline.pdf")).size(), 1000);
}

TEST(Roofline, SeveralMachinesOverlayEachNamedInTheLegend) {
  auto h100 = std::make_shared<BenchmarkReport>(readBenchmarkJson(kH100Bench.toStdString()));
  auto cpu = std::make_shared<BenchmarkReport>(*h100);
  cpu->device = "CPU only";
  cpu->deviceFigures.reset();  // a CPU-only run records no GPU figures
  cpu->host = "Test CPU, 2 threads";
  cpu->runs.resize(3);
  for (BenchmarkRun& run : cpu->runs)
    for (LayerBenchmark& l : run.layers) l.opTime.median *= 100.0;  // a slower machine
  ui::RooflinePanel panel;
  panel.resize(1100, 800);
  panel.show();
  panel.addReport(h100, "bench-h100.json");
  panel.addReport(cpu, "bench-cpu.json");
  ui::RooflineChart* chart = panel.chart();
  ASSERT_EQ(chart->machines().size(), 2u);
  QStringList legend;
  for (int i = 0; i < chart->legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(chart->legend->item(i))) legend << item->plottable()->name();
  EXPECT_TRUE(legend.filter("NVIDIA H100 80GB HBM3 (batch").size() == 1) << legend.join(" | ").toStdString();
  EXPECT_TRUE(legend.filter("CPU: Test CPU, 2 threads (batch").size() == 1) << legend.join(" | ").toStdString();
  EXPECT_EQ(chart->roofCount(), 2) << "no ceilings are known for the CPU: the H100's roofs only";
  int cpuPoints = 0;
  for (const auto& p : chart->points())
    if (p.machine == 1) {
      ++cpuPoints;
      EXPECT_EQ(p.point.timesFloor, 0.0) << "no floor without ceilings";
    }
  int expectedCpu = 0;
  for (const BenchmarkRun& run : cpu->runs) expectedCpu += run.batch == 10000 ? static_cast<int>(run.layers.size()) : 0;
  EXPECT_EQ(cpuPoints, expectedCpu);
  EXPECT_EQ(panel.machineChoice()->count(), 2);
  // A file that is not a benchmark is refused by name.
  QTemporaryDir dir;
  const QString bad = writeFile(dir, "broken.json", "{\"schema\": \"something-else\"}");
  const QString error = panel.addJson(bad);
  EXPECT_TRUE(error.contains("broken.json")) << error.toStdString();
  EXPECT_EQ(chart->machines().size(), 2u);
}

// At 1024x700 the H100's 22 points crowd two intensities: no "× of floor" label may cover another
// or a point, and the legend holds only what the chart draws (no key for a single machine).
TEST(Roofline, FloorLabelsOverlapNeitherEachOtherNorAnyPointAndTheLegendMatchesThePoints) {
  ui::RooflinePanel panel;
  panel.resize(690, 560);  // the Roofline tab's share of a 1024x700 window
  panel.show();
  ASSERT_EQ(panel.addJson(kH100Bench), "");
  ui::RooflineChart* chart = panel.chart();
  chart->replot(QCustomPlot::rpImmediateRefresh);
  const std::vector<QRectF> boxes = chart->floorLabelBoxes();
  int withFloor = 0;
  for (const auto& p : chart->points()) withFloor += p.point.timesFloor > 0.0;
  ASSERT_GT(withFloor, 10);
  EXPECT_EQ(static_cast<int>(boxes.size()) + chart->hiddenFloorLabels(), withFloor);
  EXPECT_GE(static_cast<int>(boxes.size()), withFloor / 2) << "most points keep their label";
  const QRectF axes = chart->axisRect()->rect();
  for (size_t a = 0; a < boxes.size(); ++a) {
    EXPECT_TRUE(axes.contains(boxes[a])) << "label " << a << " runs out of the axes";
    for (size_t b = a + 1; b < boxes.size(); ++b)
      EXPECT_FALSE(boxes[a].intersects(boxes[b])) << "labels " << a << " and " << b << " overlap";
    for (size_t i = 0; i < chart->points().size(); ++i) {
      const QPointF at = chart->pointPosition(static_cast<int>(i));
      EXPECT_FALSE(boxes[a].intersects(QRectF(at.x() - 4, at.y() - 4, 8, 8))) << "label " << a << " covers point " << i;
    }
  }
  // Every legend entry with a marker is the colour of some point: no key that matches nothing.
  std::set<QRgb> pointColours;
  for (const auto& p : chart->points()) pointColours.insert(ui::variantColour(p.point.variant).rgb());
  for (int i = 0; i < chart->legend->itemCount(); ++i) {
    auto* item = qobject_cast<QCPPlottableLegendItem*>(chart->legend->item(i));
    auto* graph = item ? qobject_cast<QCPGraph*>(item->plottable()) : nullptr;
    if (!graph || graph->scatterStyle().shape() == QCPScatterStyle::ssNone) continue;  // a roof: a line
    EXPECT_EQ(pointColours.count(graph->scatterStyle().brush().color().rgb()), 1u) << graph->name().toStdString();
  }
  // The term is explained where the reader looks.
  EXPECT_TRUE(panel.selectionText()->text().contains("floor")) << panel.selectionText()->text().toStdString();
}

TEST(SpeedupStaircase, StepsAreTheJsonsOpTimesInCourseOrder) {
  const QJsonObject json = readJson(kH100Bench);
  std::map<std::string, double> seconds;  // variant -> summed median op time at batch 10000
  for (const QJsonValue run : json["runs"].toArray()) {
    if (run["batch"].toInt() != 10000) continue;
    double sum = 0.0;
    for (const QJsonValue layer : run["layers"].toArray()) sum += layer["op_time_s"]["median"].toDouble();
    seconds[run["variant"].toString().toStdString()] = sum;
  }
  ui::RooflinePanel panel;
  panel.resize(1100, 800);
  panel.show();
  ASSERT_EQ(panel.addJson(kH100Bench), "");
  ui::SpeedupStaircase* stairs = panel.staircase();
  const std::vector<ui::Speedup>& steps = stairs->steps();
  ASSERT_EQ(steps.size(), seconds.size());
  // Course order: the variant table's order.
  std::vector<std::string> order;
  for (const ConvVariant& v : convVariants())
    if (seconds.count(v.id)) order.push_back(v.id);
  ASSERT_EQ(order.size(), steps.size());
  const double baseline = seconds.at("gpu-baseline");
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE(order[i]);
    EXPECT_EQ(steps[i].variant, order[i]);
    EXPECT_NEAR(steps[i].overBaseline, baseline / seconds.at(order[i]), 1e-12);
    if (i > 0) {
      EXPECT_NEAR(steps[i].overPrevious, seconds.at(order[i - 1]) / seconds.at(order[i]), 1e-12);
    }
  }
  // What the bars say.
  const QStringList labels = stairs->labels();
  ASSERT_EQ(labels.size(), static_cast<int>(steps.size()));
  const double restrict = baseline / seconds.at("gpu-restrict-unroll");
  const auto at = std::find(order.begin(), order.end(), "gpu-restrict-unroll") - order.begin();
  EXPECT_TRUE(labels[static_cast<int>(at)].startsWith(QString("×%1").arg(restrict, 0, 'f', restrict < 10 ? 2 : 1)))
      << labels[static_cast<int>(at)].toStdString();
  QTemporaryDir dir;
  EXPECT_EQ(panel.exportStaircase(dir.filePath("stairs.png")), "");
  EXPECT_GT(distinctColours(QImage(dir.filePath("stairs.png"))), 10);
}

TEST(GpuViewsHeadless, ScreenshotsOfTheMappingAndRooflineTabs) {
  QTemporaryDir dir;
  const QString mapping = dir.filePath("mapping.png");
  ProcessResult result = runProgram(kGui, {"--screenshot", mapping, "--tab", "gpu-mapping", "--size", "1024x700"});
  ASSERT_EQ(result.exitCode, 0) << result.output.toStdString();
  EXPECT_GT(distinctColours(QImage(mapping)), 30);
  const QString roofline = dir.filePath("roofline.png");
  result = runProgram(kGui, {"--screenshot", roofline, "--tab", "roofline", "--bench", kH100Bench, "--presentation",
                             "--size", "1920x1080"});
  ASSERT_EQ(result.exitCode, 0) << result.output.toStdString();
  EXPECT_GT(distinctColours(QImage(roofline)), 30);
}

}  // namespace
}  // namespace convscope::testing
