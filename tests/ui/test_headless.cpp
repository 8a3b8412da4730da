// `convscope --screenshot` and `convscope --plot`, run as programs: they write non-blank
// pictures, and bad arguments end with a message and a non-zero exit code.
#include <gtest/gtest.h>

#include "app/core/device/gpu_platform.h"
#include "app/core/engine/benchmark.h"
#include "tests/ui/ui_test_support.h"

namespace convscope::testing {
namespace {

const QString kGui = CONVSCOPE_GUI_PATH;

TEST(Headless, ScreenshotWritesANonBlankPictureOfTheWindow) {
  QTemporaryDir dir;
  const QString shot = dir.filePath("shot.png");
  const ProcessResult result = runProgram(kGui, {"--screenshot", shot, "--index", "3", "--model", modelPath("lenet5")});
  ASSERT_EQ(result.exitCode, 0) << result.output.toStdString();
  const QImage image(shot);
  ASSERT_FALSE(image.isNull());
  EXPECT_EQ(image.size(), QSize(1440, 900));
  EXPECT_GT(distinctColours(image), 200) << "text, thumbnails, maps and bars, not an empty window";
  EXPECT_TRUE(result.output.contains("first prediction shown")) << result.output.toStdString();
}

TEST(Headless, ScreenshotOfTheTimingTabWithABenchmark) {
  QTemporaryDir dir;
  BenchmarkReport report;
  report.model = "course-high";
  report.device = "CPU only";
  for (const char* variant : {"cpu-reference", "cpu-im2col-gemm"})
    for (int batch : {1, 100}) {
      BenchmarkRun run;  // members by name: a positional list shifts when a field is added
      run.variant = variant;
      run.batch = batch;
      run.accuracy = 1.0;
      run.correct = batch;
      LayerBenchmark layer;
      layer.node = "/0/Conv";
      layer.ranVariant = variant;
      layer.opTime = {1e-3 * batch, 1e-3 * batch, 1e-3 * batch};
      layer.gflops = layer.gbytesPerSecond = 1;
      run.layers.push_back(layer);
      report.runs.push_back(run);
    }
  const QString bench = dir.filePath("bench.json"), shot = dir.filePath("timing.png");
  writeBenchmarkJson(report, bench.toStdString());
  const ProcessResult result = runProgram(
      kGui, {"--screenshot", shot, "--tab", "timing", "--bench", bench, "--presentation", "--size", "1600x1000"});
  ASSERT_EQ(result.exitCode, 0) << result.output.toStdString();
  const QImage image(shot);
  EXPECT_EQ(image.size(), QSize(1600, 1000));
  EXPECT_GT(distinctColours(image), 50);
}

TEST(Headless, PlotRendersTheTimingChartOfABenchmarkJson) {
  QTemporaryDir dir;
  BenchmarkReport report;
  report.model = "course-high";
  report.device = "CPU only";
  for (int batch : {1, 10, 100}) {
    BenchmarkRun run;
    run.variant = "cpu-im2col-gemm";
    run.batch = batch;
    run.accuracy = 1.0;
    run.correct = batch;
    LayerBenchmark layer;
    layer.node = "/0/Conv";
    layer.ranVariant = "cpu-im2col-gemm";
    layer.opTime = {1e-4 * batch, 1e-4, 1e-4};
    layer.gflops = layer.gbytesPerSecond = 1;
    run.layers.push_back(layer);
    report.runs.push_back(run);
  }
  const QString bench = dir.filePath("bench.json");
  writeBenchmarkJson(report, bench.toStdString());
  for (const char* name : {"chart.png", "chart.pdf"}) {
    const QString out = dir.filePath(name);
    const ProcessResult result = runProgram(kGui, {"--plot", bench, "--out", out});
    ASSERT_EQ(result.exitCode, 0) << result.output.toStdString();
    QFile file(out);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    EXPECT_GT(file.size(), 2000);
  }
  EXPECT_GT(distinctColours(QImage(dir.filePath("chart.png"))), 10);
}

TEST(Headless, BadArgumentsEndWithAMessageAndANonZeroExitCode) {
  QTemporaryDir dir;
  const QString shot = dir.filePath("x.png");
  struct Case {
    QStringList arguments;
    int exitCode;
    QString says;
  };
  const QString notAnImage = writeFile(dir, "notes.txt", "hello");
  std::vector<Case> cases = {
      {{"--screenshot", shot, "--tab", "nowhere"}, 2, "not a tab"},
      {{"--screenshot", shot, "--index", "-3"}, 2, "not a test image number"},
      {{"--screenshot", shot, "--index", "2", "--image", notAnImage}, 2, "cannot be combined"},
      {{"--screenshot", shot, "--variant", "no-such-kernel"}, 2, "no-such-kernel"},
      {{"--plot", shot}, 2, "--out"},
      {{"--screenshot", shot, "--bogus"}, 2, "bogus"},
      {{"--screenshot", shot, "--model", dir.filePath("missing.onnx")}, 1, "missing.onnx"},
      {{"--screenshot", shot, "--image", notAnImage}, 1, "notes.txt"},
      {{"--screenshot", shot, "--index", "10000"}, 1, "10000"},
      {{"--plot", notAnImage, "--out", dir.filePath("p.png")}, 1, "notes.txt"},
  };
  if (!gpuInfo().usable) cases.push_back({{"--screenshot", shot, "--variant", "gpu-baseline"}, 2, "cannot run here"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.arguments.join(' ').toStdString());
    const ProcessResult result = runProgram(kGui, c.arguments);
    EXPECT_EQ(result.exitCode, c.exitCode) << result.output.toStdString();
    EXPECT_TRUE(result.output.contains(c.says)) << result.output.toStdString();
  }
  EXPECT_FALSE(QFile::exists(shot)) << "no picture written for a failed run";
  const ProcessResult help = runProgram(kGui, {"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_TRUE(help.output.contains("--screenshot"));
}

}  // namespace
}  // namespace convscope::testing
