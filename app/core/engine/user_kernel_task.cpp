#include "app/core/engine/user_kernel_task.h"

#include <memory>

#include "app/core/conv/conv_backend.h"
#include "app/core/conv/conv_check.h"
#include "app/core/data/image_set.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/conv_pixel.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/fair_timer.h"
#include "app/core/engine/fair_timing.h"
#include "app/core/engine/network_predictions.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"

namespace convscope {

using nlohmann::json;

namespace {

using Say = std::function<void(const std::string&)>;

// The kernel on the check's shapes: the random ones of the seed and the model's own layers, as the
// parent computes them. The declined shapes are written first, and after each shape how far it
// got: when the kernel faults or never ends, the parent still compares the shapes before it (a
// wrong one is the first mistake).
void runCheck(const ConvVariant& row, const UserKernelTask& task, json& result, const std::function<void()>& save,
              const Say& say) {
  result["stage"] = "check";
  const std::vector<ConvProblem> shapes =
      checkShapes(task.seed, task.shapes, modelConvProblems(*loadOnnxModel(task.model)));
  say("running the kernel on " + std::to_string(shapes.size()) + " shapes (" + std::to_string(task.shapes) +
      " random, " + std::to_string(shapes.size() - static_cast<size_t>(task.shapes)) + " of " +
      task.model.filename().string() + "'s layers)");
  const auto backend = createConvBackend(row.id);
  std::vector<std::string> reasons(shapes.size());
  json declined = json::array();
  for (size_t i = 0; i < shapes.size(); ++i) {
    reasons[i] = row.unsupportedReason ? row.unsupportedReason(shapes[i]) : std::string();
    declined.push_back(reasons[i].empty() ? json(nullptr) : json(reasons[i]));
  }
  result["declined"] = declined;
  result["reached"] = 0;
  save();
  runConvOnCheckShapes(
      *backend, shapes, task.seed,
      [&](const ConvProblem& p) { return reasons[&p - shapes.data()]; },  // p: an element of shapes
      [&](size_t index, const std::vector<float>& output) {
        writeCheckOutput(checkOutputFile(task.outputs, index), shapes[index], output);
        result["reached"] = index + 1;
        save();
      });
  result["ran"] = true;
}

// The network with the kernel on the whole test set: its predictions go to the parent, which
// holds the labels.
void runNetwork(const ConvVariant& row, const UserKernelTask& task, json& result, const Say& say) {
  result["stage"] = "network";
  say("running the network with it on the test set");
  const ImageSet images = ImageSet::loadIdxImages(task.data);
  Engine engine(loadOnnxModel(task.model), row.id);
  const ClassificationRun run = classify(engine, images, 0, images.count(), 1000);
  std::vector<int32_t> predicted(static_cast<size_t>(images.count()), -1);
  for (const ImageClassification& c : run.images) predicted.at(static_cast<size_t>(c.index)) = c.predicted;
  writePredictions(networkPredictionsFile(task.outputs), predicted);
  json fallbacks = json::array();
  for (const ConvLayerTime& t : run.convTimes)
    if (t.variant != row.id)
      fallbacks.push_back(t.problem.describe() + " ran on " + t.variant + ": " + t.fallbackReason);
  result["network"] = {{"model", task.model.filename().string()}, {"images", images.count()}, {"fallbacks", fallbacks}};
  result["stage"] = "done";
}

// The fair timing (fair_timer.h): every layer the kernel runs, at every batch; the repetitions'
// sampled outputs go back to the parent, which checks them.
void runTiming(const ConvVariant& row, const UserKernelTask& task, json& result, const Say& say) {
  result["stage"] = "timing";
  const ImageSet images = ImageSet::loadIdxImages(task.data);
  FairTimingPlan plan;
  plan.runSeed = task.seed;
  plan.sampleSeed = task.sampleSeed;
  plan.sampleCount = task.samples;
  plan.repetitions = task.repeats;
  plan.warmups = task.warmups;
  const std::unique_ptr<Device> device = createGpuDevice();
  const DeviceFigures figures = localDeviceFigures();  // before any timing: it measures a copy
  json layers = json::array();
  for (const int batch : task.batches) {
    // One pass of the network at this batch gives its conv layers' shapes and who runs them.
    Engine engine(loadOnnxModel(task.model), row.id);
    const std::vector<ConvLayerTime> convLayers = convLayersAtBatch(engine, images, batch);
    for (size_t l = 0; l < convLayers.size(); ++l) {
      const ConvLayerTime& t = convLayers[l];
      json layer = {{"batch", batch}, {"layer", l}, {"node", t.node}, {"problem", convProblemToJson(t.problem)}};
      if (t.variant != row.id) {
        layer["declined"] = t.fallbackReason;
      } else {
        say("timing " + t.node + " at batch " + std::to_string(batch));
        plan.problem = t.problem;
        plan.layer = static_cast<int>(l);
        layer["repetitions"] = timedRepetitionsToJson(timeConvFairly(row, *device, plan));
      }
      layers.push_back(layer);
    }
  }
  // The device's own figures (clocks, bus width, a measured copy): the parent's floors and peaks
  // come from them, never from a table of GPU names.
  result["device"] = deviceFiguresToJson(figures);
  result["timing"] = {{"layers", layers}, {"samples", plan.sampleCount}};
  result["stage"] = "done";
}

// The engine's benchmark with the kernel as its only variant (the Your kernel tab's sweep).
void runBench(const ConvVariant& row, const UserKernelTask& task, json& result, const Say& say) {
  result["stage"] = "bench";
  BenchmarkOptions options;
  options.model = task.model;
  options.variants = {row.id};
  options.batches = task.batches;
  options.repeats = task.repeats;
  options.warmups = task.warmups;
  const ImageSet images = ImageSet::loadIdxFolder(task.data);
  const BenchmarkReport report = runBenchmark(options, images, [&](const std::string& message) {
    say("bench: " + message);
    return true;
  });
  writeBenchmarkJson(report, task.benchJson);
  result["benchmark"] = task.benchJson.string();
  result["stage"] = "done";
}

}  // namespace

UserKernelTask::Kind userKernelTaskKind(const std::string& name) {
  if (name == "check") return UserKernelTask::Kind::Check;
  if (name == "network") return UserKernelTask::Kind::Network;
  if (name == "timing") return UserKernelTask::Kind::Timing;
  if (name == "bench") return UserKernelTask::Kind::Bench;
  throw Error("kernel run-isolated: --task is check, network, timing or bench, not '" + name + "'");
}

void runUserKernelTask(const ConvVariant& row, const UserKernelTask& task, json& result,
                       const std::function<void()>& save, const std::function<void(const std::string&)>& say) {
  switch (task.kind) {
    case UserKernelTask::Kind::Check:
      runCheck(row, task, result, save, say);
      break;
    case UserKernelTask::Kind::Network:
      runNetwork(row, task, result, say);
      break;
    case UserKernelTask::Kind::Timing:
      runTiming(row, task, result, say);
      break;
    case UserKernelTask::Kind::Bench:
      runBench(row, task, result, say);
      break;
  }
  save();
}

}  // namespace convscope
