#include <cstdio>
#include <ctime>
#include <iostream>
#include <optional>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/engine.h"
#include "app/core/engine/kernel_profile_json.h"
#include "app/core/engine/kernel_table.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"

namespace convscope::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: convscope-cli profile --variant ID [--batch N] [--model FILE.onnx] [--data DIR] [--json OUT.json]

Prints the course's profiler table for one inference of the first N test images (default 1000)
on the GPU: per kernel and memory copy, its share of GPU time, total time, calls, average,
minimum and maximum, measured by ConvScope itself with CUDA events around every launch.
--json also writes the table as JSON (docs/profile-json.md), which the GUI's Profile tab
opens on any machine, GPU or not.
)";

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string formatTime(double ms) {
  char text[32];
  if (ms >= 1.0)
    std::snprintf(text, sizeof text, "%.4fms", ms);
  else
    std::snprintf(text, sizeof text, "%.3fus", ms * 1e3);
  return text;
}

}  // namespace

int runProfile(const std::vector<std::string>& tokens) {
  if (!tokens.empty() && (tokens[0] == "--help" || tokens[0] == "-h")) {
    std::cout << kHelp;
    return 0;
  }
  const Args args(tokens, {"variant", "batch", "model", "data", "json"}, {});
  const std::string variant = args.value("variant").value_or(defaultConvVariant());
  if (!findConvVariant(variant).runsOnGpu())
    throw Error("profile times GPU kernels; '" + variant + "' runs on the CPU (see 'convscope-cli variants')");
  const int batch = args.intValue("batch", 1000, 1);
  const auto model = loadOnnxModel(args.value("model").value_or(defaultModelPath()));
  const ImageSet images = ImageSet::loadIdxFolder(args.value("data").value_or(defaultDataFolder().string()));
  if (batch > images.count())
    throw Error("--batch " + std::to_string(batch) + " but the data set holds " + std::to_string(images.count()));

  const std::optional<std::string> jsonPath = args.value("json");
  if (jsonPath && jsonPath->empty()) throw Error("--json needs a file name");

  Engine engine(model, variant);
  engine.checkMemory(batch);
  const Tensor input = images.batch(0, batch, model->inputHeight(), model->inputWidth());
  std::printf("==PROF== ConvScope profile: variant %s, model %s, batch %d, on %s\n", variant.c_str(),
              model->name.c_str(), batch, engine.deviceName().c_str());
  std::printf("%16s %8s %12s %6s %12s %12s %12s  %s\n", "Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max",
              "Name");
  bool firstKernel = true, firstCopy = true;
  const std::vector<KernelRow> rows = profileOneInference(engine, input);
  for (const KernelRow& r : rows) {
    const char* type = "";
    if (!r.isCopy && firstKernel) type = "GPU activities:", firstKernel = false;
    if (r.isCopy && firstCopy) type = "Memory copies:", firstCopy = false;
    std::printf("%16s %7.2f%% %12s %6d %12s %12s %12s  %s\n", type, 100.0 * r.share, formatTime(r.totalMs).c_str(),
                r.calls, formatTime(r.averageMs()).c_str(), formatTime(r.minMs).c_str(), formatTime(r.maxMs).c_str(),
                r.name.c_str());
  }
  if (jsonPath) {
    writeKernelProfileJson({variant, model->name, engine.deviceName(), utcNow(), batch, rows}, *jsonPath);
    std::printf("wrote %s\n", jsonPath->c_str());
  }
  return 0;
}

}  // namespace convscope::cli
