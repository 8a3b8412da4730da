#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "cli_args.h"
#include "commands.h"
#include "conv/conv_registry.h"
#include "data/image_set.h"
#include "engine/engine.h"
#include "model/onnx_loader.h"
#include "util/error.h"

namespace convscope::cli {
namespace {

constexpr const char* kHelp = R"(usage: convscope-cli profile --variant ID [--batch N] [--model FILE.onnx] [--data DIR]

Prints the course's profiler table for one inference of the first N test images (default 1000)
on the GPU: per kernel and memory copy, its share of GPU time, total time, calls, average,
minimum and maximum, measured by ConvScope itself with CUDA events around every launch.
)";

std::string formatTime(double ms) {
  char text[32];
  if (ms >= 1.0) std::snprintf(text, sizeof text, "%.4fms", ms);
  else std::snprintf(text, sizeof text, "%.3fus", ms * 1e3);
  return text;
}

}  // namespace

int runProfile(const std::vector<std::string>& tokens) {
  if (!tokens.empty() && (tokens[0] == "--help" || tokens[0] == "-h")) {
    std::cout << kHelp;
    return 0;
  }
  const Args args(tokens, {"variant", "batch", "model", "data"}, {});
  const std::string variant = args.value("variant").value_or(defaultConvVariant());
  if (!findConvVariant(variant).runsOnGpu)
    throw Error("profile times GPU kernels; '" + variant + "' runs on the CPU (see 'convscope-cli variants')");
  const int batch = args.intValue("batch", 1000, 1);
  const auto model = loadOnnxModel(args.value("model").value_or(defaultModelPath()));
  const ImageSet images = ImageSet::loadIdxFolder(args.value("data").value_or(defaultDataFolder().string()));
  if (batch > images.count()) throw Error("--batch " + std::to_string(batch) + " but the data set holds " + std::to_string(images.count()));

  Engine engine(model, variant);
  const Tensor input = images.batch(0, batch, model->inputHeight(), model->inputWidth());
  engine.infer(input);  // warm-up: module loading, cuDNN's algorithm search, allocations
  Device& device = *engine.device();
  device.collectTrace();
  device.setTracing(true);
  engine.infer(input);
  device.setTracing(false);
  const std::vector<Device::TracedTime> trace = device.collectTrace();

  struct Row {
    int calls = 0;
    double total = 0, min = 1e30, max = 0;
  };
  std::map<std::string, Row> rows;
  double all = 0;
  for (const Device::TracedTime& t : trace) {
    Row& r = rows[t.name];
    ++r.calls;
    r.total += t.milliseconds;
    r.min = std::min(r.min, t.milliseconds);
    r.max = std::max(r.max, t.milliseconds);
    all += t.milliseconds;
  }
  std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.total > b.second.total; });

  std::printf("==PROF== ConvScope profile: variant %s, model %s, batch %d, on %s\n", variant.c_str(),
              model->name.c_str(), batch, engine.deviceName().c_str());
  std::printf("%16s %8s %12s %6s %12s %12s %12s  %s\n", "Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name");
  bool firstKernel = true, firstCopy = true;
  for (bool copies : {false, true})
    for (const auto& [name, r] : sorted) {
      if ((name.rfind("[CUDA", 0) == 0) != copies) continue;
      const char* type = "";
      if (!copies && firstKernel) type = "GPU activities:", firstKernel = false;
      if (copies && firstCopy) type = "Memory copies:", firstCopy = false;
      std::printf("%16s %7.2f%% %12s %6d %12s %12s %12s  %s\n", type, 100.0 * r.total / all, formatTime(r.total).c_str(),
                  r.calls, formatTime(r.total / r.calls).c_str(), formatTime(r.min).c_str(), formatTime(r.max).c_str(),
                  name.c_str());
    }
  return 0;
}

}  // namespace convscope::cli
