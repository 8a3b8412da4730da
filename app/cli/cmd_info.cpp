#include <cstdio>
#include <iostream>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/core/conv/variant_table.h"
#include "app/core/engine/plan.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/data_dir.h"

namespace convscope::cli {

std::string defaultModelPath() {
  return std::string(shippedModelsDir()) + "/course-high.onnx";  // installed or the source tree's
}

namespace {

constexpr const char* kHelp = R"(usage: convscope-cli info [--model FILE.onnx] [--variant ID] [--batch N]

Prints the layer table of an ONNX model: each layer's type, output shape for one image,
parameter count and floating-point operations per image (multiply-add = 2). Then the engine's
plan for the variant: its stages in order, each with the variant or device that runs it, fused
groups, and every fallback with its reason.
  --model FILE   the model (default: the shipped course-high model)
  --variant ID   the kernel variant (default: the fastest one this machine can run);
                 `convscope-cli variants` lists them
  --batch N      the batch size the plan is made for (default 1; a variant may decline a
                 layer only at some sizes)
)";

std::string withThousands(int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

}  // namespace

int runInfo(const std::vector<std::string>& tokens) {
  if (!tokens.empty() && (tokens[0] == "--help" || tokens[0] == "-h")) {
    std::cout << kHelp;
    return 0;
  }
  const Args args(tokens, {"model", "variant", "batch"}, {});
  const std::string path = args.value("model").value_or(defaultModelPath());
  const auto model = loadOnnxModel(path);

  std::cout << "Model:    " << model->name << " (" << path << ")\n"
            << "Producer: " << (model->producer.empty() ? "unknown" : model->producer) << ", IR version "
            << model->irVersion << ", opset " << model->opset << "\n";
  for (const ValueInfo& input : model->inputs)
    std::cout << "Input:    " << input.name << " " << shapeToString(input.shape) << " (-1 = any)\n";
  if (const auto card = readModelCard(path)) {
    if (!card->description.empty()) std::cout << "About:    " << card->description << "\n";
    if (card->testAccuracy)
      std::printf("Recorded test accuracy: %.4f (%d of %d, PyTorch)\n", *card->testAccuracy, card->testCorrect,
                  card->testCount);
  }
  std::printf("\n%-3s %-28s %-12s %-18s %12s %16s\n", "#", "Layer", "Type", "Output shape", "Parameters",
              "FLOPs/image");
  int64_t params = 0, flops = 0;
  int row = 0;
  for (const LayerInfo& layer : model->layers()) {
    std::printf("%-3d %-28s %-12s %-18s %12s %16s\n", ++row, layer.name.c_str(), layer.opType.c_str(),
                shapeToString(layer.outputShape).c_str(), withThousands(layer.parameters).c_str(),
                withThousands(layer.flops).c_str());
    params += layer.parameters;
    flops += layer.flops;
  }
  std::printf("%-3s %-28s %-12s %-18s %12s %16s\n", "", "Total", "", "", withThousands(params).c_str(),
              withThousands(flops).c_str());

  // The plan depends only on the table and the shapes: it is printed for variants that cannot run
  // here too, saying so.
  const std::string variantId = args.value("variant").value_or(defaultConvVariant());
  const ConvVariant& variant = findConvVariant(variantId);
  const int batch = args.intValue("batch", 1, 1);
  const ValueInfo& input = model->inputs.front();
  const std::map<std::string, Shape> shapes = model->inputShapesFor(batch);
  const Plan plan = makePlan(*model, variant.id, shapes);
  std::printf("\nPlan for %s (%s), batch %d (input %s): %zu stages, %d fallback%s\n", variant.id.c_str(),
              variant.runsOnGpu() ? "GPU" : "CPU", batch, shapeToString(shapes.at(input.name)).c_str(),
              plan.stages.size(), plan.fallbackCount(), plan.fallbackCount() == 1 ? "" : "s");
  if (const std::string reason = variant.unavailableReason(); !reason.empty())
    std::printf("(%s cannot run on this machine: %s)\n", variant.id.c_str(), reason.c_str());
  for (const std::string& line : plan.describe(*model)) std::printf("  %s\n", line.c_str());
  return 0;
}

}  // namespace convscope::cli
