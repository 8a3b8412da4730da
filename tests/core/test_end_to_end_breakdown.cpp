// Where the end-to-end time goes, on the host (the GPU's side: tests/gpu/test_end_to_end_gpu.cpp):
// the instrumented pass of the CPU variants names every plan stage as a student reads it and its
// times fit inside the call's own; the benchmark records the stages and its JSON keeps them, while
// older files without them still load; the breakdown's gaps and its fallback for older files; the
// end-to-end floor against the course network's shapes worked out by hand, with the bytes each
// variant really moves (a fused pooling writes the pooled output); the PyTorch peer file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <numeric>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/end_to_end_breakdown.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/peer_timings.h"
#include "app/core/model/onnx_loader.h"
#include "tests/core/course_layers.h"
#include "tests/core/epilogue_backend.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

const std::string kModels = CONVSCOPE_MODELS_DIR;

// A CPU variant that fuses the activation and pooling into the conv (as test_plan.cpp's): its
// plan has the fused stages a breakdown names "conv 1 + tanh + max-pool".
const bool fusingVariantAdded = [] {
  ConvVariant fusing;
  fusing.id = "test-fusing";
  fusing.displayName = "Test: fused epilogue";
  fusing.description = "The definitions in double, with bias, activation and pooling applied in the same pass.";
  fusing.courseStep = "test";
  fusing.sourceFile = "tests/core/test_end_to_end_breakdown.cpp";
  fusing.fusableOps = {"Tanh", "MaxPool"};
  fusing.createHostBackend = [] { return std::make_unique<testing::EpilogueBackend>(); };
  registerConvVariant(fusing);
  return true;
}();

const ImageSet& testSet() {
  static const ImageSet set = ImageSet::loadIdxFolder(defaultDataFolder());
  return set;
}

std::vector<std::string> namesOf(const std::vector<StageTime>& stages) {
  std::vector<std::string> names;
  for (const StageTime& stage : stages) names.push_back(stage.name);
  return names;
}

void writeText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// course-high: conv, tanh, max-pool twice, flatten, dense, tanh, dense, softmax.
TEST(EndToEndStages, OnTheCpuEveryPlanStageIsNamedAndTheirSumFitsInsideTheCall) {
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");
  struct Case {
    std::string variant;
    std::vector<std::string> names;
  };
  const std::vector<std::string> layers = {"dense 1", "tanh 3", "dense 2", "softmax 1", "host: probabilities"};
  std::vector<std::string> unfused = {"resize", "conv 1", "tanh 1", "max-pool 1", "conv 2", "tanh 2", "max-pool 2"};
  unfused.insert(unfused.end(), layers.begin(), layers.end());
  std::vector<std::string> fused = {"resize", "conv 1 + tanh + max-pool", "conv 2 + tanh + max-pool"};
  fused.insert(fused.end(), layers.begin(), layers.end());
  for (const Case& c : {Case{"cpu-reference", unfused}, Case{"test-fusing", fused}}) {
    SCOPED_TRACE(c.variant);
    Engine engine(model, c.variant);
    const ByteImages bytes{testSet().bytes(0), 7, 28, 28};
    engine.timeEndToEndStages(bytes);  // warm-up: the backends' first calls
    const auto start = std::chrono::steady_clock::now();
    const std::vector<StageTime> stages = engine.timeEndToEndStages(bytes);
    const double call = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(namesOf(stages), c.names) << "the flatten stage renames a value: no stage of its own";
    double sum = 0.0;
    for (const StageTime& stage : stages) {
      EXPECT_GT(stage.seconds, 0.0) << stage.name;
      sum += stage.seconds;
    }
    EXPECT_LE(sum, call) << "the stages are timed inside the call";
    EXPECT_EQ(stages.front().kind, "resize");
    EXPECT_EQ(stages.back().kind, "host");
    int convs = 0;
    for (const StageTime& stage : stages) convs += stage.kind == "conv" ? 1 : 0;
    EXPECT_EQ(convs, 2);
    for (const StageTime& stage : stages) EXPECT_NE(stage.kind, "upload") << "no upload on the CPU";
  }
}

TEST(EndToEndStages, TheTimingPassGivesTheSameProbabilitiesAsAPlainCallAfterIt) {
  // The pass leaves the engine as it found it: inferBytes after it still equals infer().
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");
  Engine engine(model, "cpu-reference");
  engine.timeEndToEndStages({testSet().bytes(3), 5, 28, 28});
  const InferenceResult bytes = engine.inferBytes({testSet().bytes(3), 5, 28, 28});
  const InferenceResult floats = engine.infer(testSet().batch(3, 5, 48, 48));
  ASSERT_EQ(bytes.probabilities.size(), floats.probabilities.size());
  for (int64_t i = 0; i < floats.probabilities.size(); ++i)
    ASSERT_EQ(bytes.probabilities[i], floats.probabilities[i]) << "element " << i;
  testing::expectError([&] { engine.timeEndToEndStages({nullptr, 3, 28, 28}); }, {"3 of 28x28", "cannot form a batch"});
}

TEST(EndToEndStages, TheBenchmarkRecordsThemAndItsJsonKeepsThemWhileOlderFilesStillLoad) {
  BenchmarkOptions options;
  options.model = kModels + "/course-high.onnx";
  options.variants = {"cpu-reference"};
  options.batches = {3};
  options.repeats = 3;
  options.warmups = 1;
  const BenchmarkReport report = runBenchmark(options, testSet());
  ASSERT_EQ(report.runs.size(), 1u);
  const BenchmarkRun& run = report.runs[0];
  ASSERT_EQ(run.endToEndStages.size(), 12u);
  EXPECT_EQ(run.endToEndStages[0].name, "resize");
  EXPECT_EQ(run.endToEndStages[1].name, "conv 1");
  for (const EndToEndStage& stage : run.endToEndStages) {
    EXPECT_GT(stage.time.median, 0.0) << stage.name;
    EXPECT_LE(stage.time.min, stage.time.median) << stage.name;
    EXPECT_LE(stage.time.median, stage.time.max) << stage.name;
  }

  testing::TempDir dir;
  const std::filesystem::path file = dir.path() / "bench.json";
  writeBenchmarkJson(report, file);
  const BenchmarkReport back = readBenchmarkJson(file);
  ASSERT_EQ(back.runs[0].endToEndStages.size(), run.endToEndStages.size());
  for (size_t k = 0; k < run.endToEndStages.size(); ++k) {
    EXPECT_EQ(back.runs[0].endToEndStages[k].name, run.endToEndStages[k].name);
    EXPECT_EQ(back.runs[0].endToEndStages[k].kind, run.endToEndStages[k].kind);
    EXPECT_DOUBLE_EQ(back.runs[0].endToEndStages[k].time.median, run.endToEndStages[k].time.median);
    EXPECT_DOUBLE_EQ(back.runs[0].endToEndStages[k].time.min, run.endToEndStages[k].time.min);
    EXPECT_DOUBLE_EQ(back.runs[0].endToEndStages[k].time.max, run.endToEndStages[k].time.max);
  }

  // A file from before the stages were measured: the field is absent, the rest loads.
  nlohmann::json document = nlohmann::json::parse(std::ifstream(file));
  document["runs"][0].erase("end_to_end_stages");
  writeText(dir.path() / "old.json", document.dump());
  const BenchmarkReport old = readBenchmarkJson(dir.path() / "old.json");
  EXPECT_TRUE(old.runs[0].endToEndStages.empty());
  EXPECT_DOUBLE_EQ(old.runs[0].endToEnd.median, run.endToEnd.median);

  // A damaged stage is refused, naming the file and the stage.
  document["runs"][0]["end_to_end_stages"] = {
      {{"name", "conv 1"}, {"kind", "conv"}, {"time_s", {{"median", -1.0}, {"min", 0.0}, {"max", 0.0}}}}};
  writeText(dir.path() / "negative.json", document.dump());
  testing::expectError([&] { readBenchmarkJson(dir.path() / "negative.json"); },
                       {"negative.json", "conv 1", "not a duration"});
  document["runs"][0]["end_to_end_stages"] = {{{"name", "conv 1"}, {"time_s", {{"median", 1.0}}}}};
  writeText(dir.path() / "no-kind.json", document.dump());
  testing::expectError([&] { readBenchmarkJson(dir.path() / "no-kind.json"); }, {"no-kind.json", "kind"});
  document["runs"][0]["end_to_end_stages"] = "fast";
  writeText(dir.path() / "text.json", document.dump());
  testing::expectError([&] { readBenchmarkJson(dir.path() / "text.json"); }, {"text.json", "end_to_end_stages"});
}

BenchmarkRun runWithStages(std::vector<double> stageSeconds, double endToEnd) {
  BenchmarkRun run;
  run.variant = "gpu-baseline";
  run.batch = 100;
  run.endToEnd = {endToEnd, endToEnd, endToEnd};
  const char* kinds[] = {"upload", "resize", "conv", "download"};
  for (size_t k = 0; k < stageSeconds.size(); ++k)
    run.endToEndStages.push_back({"stage " + std::to_string(k), kinds[k % 4], {stageSeconds[k], 0.0, 1.0}});
  return run;
}

TEST(EndToEndBreakdown, TheGapsAreTheTotalLessTheStagesAndNeverNegative) {
  const std::vector<double> stages = {2e-6, 3e-6, 40e-6, 5e-6};
  const EndToEndBreakdown breakdown = endToEndBreakdown(runWithStages(stages, 80e-6));
  EXPECT_TRUE(breakdown.measuredStages);
  ASSERT_EQ(breakdown.segments.size(), 5u);
  for (size_t k = 0; k < stages.size(); ++k) {
    EXPECT_EQ(breakdown.segments[k].name, "stage " + std::to_string(k));
    EXPECT_DOUBLE_EQ(breakdown.segments[k].seconds, stages[k]);
  }
  EXPECT_EQ(breakdown.segments.back().name, "gaps");
  EXPECT_NEAR(breakdown.segments.back().seconds, 80e-6 - 50e-6, 1e-15);
  EXPECT_FALSE(breakdown.gapsClamped);
  EXPECT_NEAR(breakdown.sumOfSegments(), 80e-6, 1e-15) << "the bar is as long as the end-to-end time";

  // The instrumented stages add up to more than the unperturbed total: the gaps are drawn as 0.
  const EndToEndBreakdown over = endToEndBreakdown(runWithStages(stages, 45e-6));
  EXPECT_TRUE(over.gapsClamped);
  EXPECT_EQ(over.segments.back().seconds, 0.0);
  EXPECT_NEAR(over.measuredGapSeconds, -5e-6, 1e-15);
}

TEST(EndToEndBreakdown, AnOlderFileShowsItsConvLayersAndTheRestAsOther) {
  BenchmarkRun run;
  run.upload = {10e-6, 9e-6, 11e-6};
  run.inference = {500e-6, 500e-6, 500e-6};
  for (const double seconds : {100e-6, 150e-6}) {
    LayerBenchmark layer;
    layer.node = seconds < 120e-6 ? "/0/Conv" : "/3/Conv";
    layer.opTime = {seconds, seconds, seconds};
    run.layers.push_back(layer);
  }
  // The op-time runs' upload is of floats from pageable memory: no part of the end-to-end step.
  run.endToEnd = {300e-6, 290e-6, 310e-6};
  EndToEndBreakdown breakdown = endToEndBreakdown(run);
  EXPECT_FALSE(breakdown.measuredStages);
  EXPECT_FALSE(breakdown.totalIsInference);
  ASSERT_EQ(breakdown.segments.size(), 3u);
  EXPECT_EQ(breakdown.segments[0].name, "/0/Conv");
  EXPECT_EQ(breakdown.segments[1].name, "/3/Conv");
  EXPECT_EQ(breakdown.segments[2].name, "other");
  EXPECT_NEAR(breakdown.segments[2].seconds, 300e-6 - 250e-6, 1e-15);

  // Conv op times of other runs adding up to more than the end to end: "other" is drawn as 0.
  run.endToEnd = {200e-6, 200e-6, 200e-6};
  breakdown = endToEndBreakdown(run);
  EXPECT_TRUE(breakdown.gapsClamped);
  EXPECT_EQ(breakdown.segments.back().seconds, 0.0);

  // Older still: no end-to-end time; the float inference stands in, its upload a part of it.
  run.endToEnd = {};
  breakdown = endToEndBreakdown(run);
  EXPECT_TRUE(breakdown.totalIsInference);
  EXPECT_DOUBLE_EQ(breakdown.totalSeconds, 500e-6);
  ASSERT_EQ(breakdown.segments.size(), 4u);
  EXPECT_EQ(breakdown.segments[0].name, "upload (floats)");
  EXPECT_DOUBLE_EQ(breakdown.segments[0].seconds, 10e-6);
  EXPECT_NEAR(breakdown.segments.back().seconds, 500e-6 - 260e-6, 1e-15);
}

TEST(EndToEndFloor, IsTheLargerOfTheUploadAndTheConvBytesOfTheCourseNetwork) {
  // course-high's conv layers by hand: 1x48x48 -> 12x42x42 (7x7), 12x21x21 -> 24x15x15 (7x7).
  const std::vector<ConvProblem> layers = {testing::courseConv1(1), testing::courseConv2(1)};
  const double pinned = 50e9, memory = 3e12;
  for (const int batch : {1, 100, 10000}) {
    SCOPED_TRACE(batch);
    const double bytes = 4.0 * (batch * (48.0 * 48 + 12.0 * 42 * 42) + 12 * 49) +
                         4.0 * (batch * (12.0 * 21 * 21 + 24.0 * 15 * 15) + 24 * 12 * 49);
    EXPECT_DOUBLE_EQ(convLayerBytes(layers, batch), bytes);
    const EndToEndFloor floor = endToEndFloor(layers, batch, kEndToEndPictureBytes, pinned, memory);
    EXPECT_DOUBLE_EQ(floor.uploadSeconds, batch * 784.0 / pinned);
    EXPECT_DOUBLE_EQ(floor.convBytesSeconds, bytes / memory);
    EXPECT_DOUBLE_EQ(floor.seconds(), std::max(batch * 784.0 / pinned, bytes / memory));
  }
  // Unknown bandwidths leave their part out.
  EXPECT_EQ(endToEndFloor(layers, 100, 784, 0.0, memory).uploadSeconds, 0.0);
  EXPECT_GT(endToEndFloor(layers, 100, 784, 0.0, memory).seconds(), 0.0);
  EXPECT_EQ(endToEndFloor(layers, 100, 784, 0.0, 0.0).seconds(), 0.0);
}

TEST(EndToEndFloor, CountsTheBytesEachVariantReallyMovesAFusedPoolingWritesThePooledOutput) {
  // course-high at batch 10,000, as the committed H100 run lists it (docs/results/2026-11-26-
  // end-to-end-peer/bench.json): an unfused variant writes each conv's full output, the TF32 one
  // its pooled output (12x21x21, then 24x7x7), the whole network the scores.
  const int batch = 10000;
  const auto run = [&](const std::string& variant, int64_t written1, int64_t written2) {
    BenchmarkRun r;
    r.variant = variant;
    r.batch = batch;
    LayerBenchmark conv1, conv2;
    conv1.problem = testing::courseConv1(batch);
    conv1.outputElements = written1;
    conv2.problem = testing::courseConv2(batch);
    conv2.outputElements = written2;
    r.layers = {conv1, conv2};
    return r;
  };
  const double input1 = 4.0 * batch * 48 * 48, weights1 = 4.0 * 12 * 49, input2 = 4.0 * batch * 12 * 21 * 21,
               weights2 = 4.0 * 24 * 12 * 49;
  const double full = input1 + weights1 + 4.0 * batch * 12 * 42 * 42 + input2 + weights2 + 4.0 * batch * 24 * 15 * 15;
  const double pooled = input1 + weights1 + 4.0 * batch * 12 * 21 * 21 + input2 + weights2 + 4.0 * batch * 24 * 7 * 7;

  const RunConvBytes unfused =
      runConvBytes(run("cudnn", int64_t{batch} * 12 * 42 * 42, int64_t{batch} * 24 * 225), 784);
  EXPECT_DOUBLE_EQ(unfused.bytes, full);
  EXPECT_EQ(unfused.stages, 2);
  EXPECT_EQ(unfused.pooledStages, 0);
  EXPECT_FALSE(unfused.outputsUnknown);
  EXPECT_DOUBLE_EQ(full, convLayerBytes({testing::courseConv1(1), testing::courseConv2(1)}, batch));
  const RunConvBytes fused =
      runConvBytes(run("gpu-tensor-tf32", int64_t{batch} * 12 * 21 * 21, int64_t{batch} * 24 * 7 * 7), 784);
  EXPECT_DOUBLE_EQ(fused.bytes, pooled);
  EXPECT_EQ(fused.pooledStages, 2);
  // At the 2,924 GB/s copy measured on the H100: about 0.19 ms fused, 0.47 ms not.
  EXPECT_NEAR(endToEndFloorOfBytes(fused.bytes, batch, 784, 0.0, 2924e9).seconds(), 0.1924e-3, 0.0001e-3);
  EXPECT_NEAR(endToEndFloorOfBytes(unfused.bytes, batch, 784, 0.0, 2924e9).seconds(), 0.4673e-3, 0.0001e-3);
  // An older file does not say what its stages wrote: their full outputs.
  const RunConvBytes older = runConvBytes(run("gpu-fused-epilogue", 0, 0), 784);
  EXPECT_DOUBLE_EQ(older.bytes, full);
  EXPECT_TRUE(older.outputsUnknown);
  // One kernel for the whole network reads the 8-bit pictures and writes the scores.
  bool wholeNetworkKnown = false;
  for (const ConvVariant& v : convVariants())
    wholeNetworkKnown = wholeNetworkKnown || (v.id == "gpu-whole-network" && v.runNetwork);
  if (wholeNetworkKnown) {
    BenchmarkRun whole = run("gpu-whole-network", int64_t{batch} * 10, 0);
    whole.layers.resize(1);
    const RunConvBytes network = runConvBytes(whole, 784);
    EXPECT_TRUE(network.wholeNetwork);
    EXPECT_DOUBLE_EQ(network.bytes, batch * 784.0 + weights1 + 4.0 * batch * 10);
  }
}

TEST(EndToEndFloor, TheConvLayersComeFromTheRunThatListsTheMost) {
  BenchmarkReport report;
  BenchmarkRun whole, perLayer;
  LayerBenchmark a, b;
  a.problem.inChannels = 1;
  b.problem.inChannels = 12;
  whole.layers = {a};
  perLayer.layers = {a, b};
  report.runs = {whole, perLayer};
  const std::vector<ConvProblem> layers = convLayerShapes(report);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[1].inChannels, 12);
  EXPECT_TRUE(convLayerShapes(BenchmarkReport{}).empty());
}

TEST(PeerTimings, ReadsTheCompiledPeerAndTheBandwidthsOfTheCommittedRun) {
  const std::filesystem::path path =
      std::filesystem::path(CONVSCOPE_SOURCE_DIR) / "docs/results/2026-11-26-end-to-end-peer/pytorch.json";
  const PeerTimings peer = readPeerTimings(path);
  const nlohmann::json document = nlohmann::json::parse(std::ifstream(path));
  EXPECT_EQ(peer.device, document.at("device").get<std::string>());
  ASSERT_EQ(peer.series.size(), 2u);
  EXPECT_EQ(peer.series[0].label, "PyTorch compiled + CUDA graph (TF32)");
  EXPECT_EQ(peer.series[1].label, "PyTorch compiled + CUDA graph (FP32)");
  for (const PeerSeries& series : peer.series) {
    const nlohmann::json& ms = document.at("peer_host_ms").at(series.mode);
    EXPECT_EQ(series.seconds.size(), ms.size());
    for (const auto& [batch, seconds] : series.seconds)
      EXPECT_DOUBLE_EQ(seconds, ms.at(std::to_string(batch)).get<double>() / 1e3) << series.mode << " " << batch;
  }
  EXPECT_DOUBLE_EQ(peer.pinnedBytesPerSecond, document.at("pinned_h2d_gbytes_per_s").get<double>() * 1e9);
  EXPECT_DOUBLE_EQ(peer.copyBytesPerSecond, document.at("copy_gbytes_per_s").get<double>() * 1e9);
}

TEST(PeerTimings, AFailedModeIsLeftOutAndAnythingElseWrongIsRefusedNamingTheFile) {
  testing::TempDir dir;
  const auto write = [&](const std::string& name, const nlohmann::json& document) {
    writeText(dir.path() / name, document.dump());
    return dir.path() / name;
  };
  const nlohmann::json good = {
      {"device", "NVIDIA H100 80GB HBM3"},
      {"peer_host_ms", {{"compiled_graph_tf32", {{"1", 0.07}, {"100", "failed: out of memory"}}}}}};
  const PeerTimings peer = readPeerTimings(write("good.json", good));
  ASSERT_EQ(peer.series.size(), 1u);
  EXPECT_EQ(peer.series[0].seconds.size(), 1u) << "the failed batch has no bar";
  EXPECT_DOUBLE_EQ(peer.series[0].seconds.at(1), 0.07e-3);
  EXPECT_EQ(peer.pinnedBytesPerSecond, 0.0) << "no bandwidth measured: none invented";

  testing::expectError(
      [&] {
        readPeerTimings(write("bench.json", {{"schema", "convscope-benchmark/1"}}));
      },
      {"bench.json", "not a PyTorch peer file"});
  nlohmann::json negative = good;
  negative["peer_host_ms"]["compiled_graph_tf32"]["1"] = -0.5;
  testing::expectError([&] { readPeerTimings(write("negative.json", negative)); },
                       {"negative.json", "compiled_graph_tf32", "not a time"});
  nlohmann::json badBatch = good;
  badBatch["peer_host_ms"]["compiled_graph_tf32"]["many"] = 0.5;
  testing::expectError([&] { readPeerTimings(write("batch.json", badBatch)); }, {"batch.json", "\"many\""});
  nlohmann::json neither = good;
  neither["peer_host_ms"] = {{"eager", {{"1", 0.3}}}};
  testing::expectError([&] { readPeerTimings(write("neither.json", neither)); },
                       {"neither.json", "neither compiled_graph_tf32 nor compiled_graph_fp32"});
  testing::expectError([&] { readPeerTimings(dir.path() / "absent.json"); }, {"absent.json"});
  writeText(dir.path() / "broken.json", "{\"device\": ");
  testing::expectError([&] { readPeerTimings(dir.path() / "broken.json"); }, {"broken.json"});
}

}  // namespace
}  // namespace convscope
