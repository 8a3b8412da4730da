// convscope-cli evidence: why the model chose a class for one picture, in the terminal: the class
// activation map (exact, where the network ends in global average pooling and one linear layer)
// and the occlusion sensitivity map (any model), each printed as a grid of numbers and written,
// on request, as CSV files at the model's input size.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/core/conv/variant_table.h"
#include "app/core/data/class_labels.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/class_evidence.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/picture_input.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/atomic_file.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"

namespace convscope::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: convscope-cli evidence --image FILE [--model FILE.onnx] [--variant ID] [--class K|NAME]
                              [--patch P] [--stride S] [--batch B] [--no-occlusion] [--out PREFIX]

Where the evidence for a class lies in one picture, two ways:
  class activation map  for a network that ends in global average pooling and one linear layer
                        (EfficientNet, ResNet, MobileNet): the last conv layer's maps weighted by
                        the class's classifier weights. Exact: its mean plus the class's bias is
                        the logit the model computed (printed beside it).
  occlusion             for any model: the picture with a grey patch at every position, all of
                        them classified in batches as large as memory allows (on a GPU usually
                        one), and how much the class's probability drops at each.
The picture becomes the model's input by the model's card's preprocessing, as in classify.
  --image FILE     the picture (PNG, JPEG, BMP ...)
  --model FILE     ONNX model (default: the shipped course-high model)
  --variant ID     convolution kernel variant (see 'convscope-cli variants')
  --class K        the class to explain: its number or its name (default: the top class)
  --patch P        occlusion patch side in input pixels (default: a seventh of the input's side)
  --stride S       pixels between patch positions (default: half the patch)
  --batch B        occluded pictures per inference (default: as many as memory allows on a GPU;
                   on the CPU about 2 GFLOP's worth, at least 16)
  --no-occlusion   the class activation map only
  --out PREFIX     also write PREFIX-cam.csv and PREFIX-occlusion.csv (one row per input pixel
                   row, at the model's input size) and PREFIX.json (the class, the grids and the
                   run's figures)
)";

std::string className(const std::vector<std::string>& names, int index) {
  return index >= 0 && index < static_cast<int>(names.size()) ? names[static_cast<size_t>(index)]
                                                              : "class " + std::to_string(index);
}

// --class: a number, or one of the names.
int classFromOption(const std::string& text, const std::vector<std::string>& names, int classes) {
  char* end = nullptr;
  const long number = std::strtol(text.c_str(), &end, 10);
  if (!text.empty() && end == text.c_str() + text.size()) {
    if (number < 0 || number >= classes)
      throw Error("--class " + text + ": the model has " + std::to_string(classes) + " classes (0 to " +
                  std::to_string(classes - 1) + ")");
    return static_cast<int>(number);
  }
  for (size_t k = 0; k < names.size() && static_cast<int>(k) < classes; ++k)
    if (names[k] == text) return static_cast<int>(k);
  throw Error("--class " + text + ": no class of the model has that name (give its number or its exact name)");
}

// A grid of numbers, one row per line, `scale` times each value with one decimal.
void printGrid(const std::vector<float>& values, size_t rows, size_t columns, double scale) {
  for (size_t r = 0; r < rows; ++r) {
    std::printf("   ");
    for (size_t c = 0; c < columns; ++c) {
      const float v = values[r * columns + c];
      if (std::isnan(v))
        std::printf("      -");
      else
        std::printf(" %6.1f", scale * v);
    }
    std::printf("\n");
  }
}

// Where a grid is largest: "row 2, column 3".
size_t largestAt(const std::vector<float>& values) {
  size_t best = 0;
  for (size_t i = 1; i < values.size(); ++i)
    if (!std::isnan(values[i]) && (std::isnan(values[best]) || values[i] > values[best])) best = i;
  return best;
}

// A plane at the model's input size: `height` lines of `width` comma-separated values.
std::string planeCsv(const std::vector<float>& values, int height, int width) {
  std::ostringstream out;
  out.precision(7);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const float v = values[static_cast<size_t>(y) * width + x];
      out << (x ? "," : "");
      if (!std::isnan(v)) out << v;
    }
    out << "\n";
  }
  return out.str();
}

// The activation map (h x w) brought to the input's size by nearest position: each input pixel
// takes the value of the feature-map position above it, as the window's overlay shows it unsmoothed.
std::vector<float> atInputSize(const ActivationMap& map, int height, int width) {
  std::vector<float> out(static_cast<size_t>(height) * width);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      out[static_cast<size_t>(y) * width + x] =
          map.values[static_cast<size_t>(y * map.height / height) * map.width + x * map.width / width];
  return out;
}

}  // namespace

int runEvidence(const std::vector<std::string>& tokens) {
  if (!tokens.empty() && (tokens[0] == "--help" || tokens[0] == "-h")) {
    std::cout << kHelp;
    return 0;
  }
  const Args args(tokens, {"image", "model", "variant", "class", "patch", "stride", "batch", "out"}, {"no-occlusion"});
  const std::optional<std::string> imagePath = args.value("image");
  if (!imagePath) throw Error("evidence needs a picture: --image FILE");
  if (!somethingExistsAt(*imagePath)) throw Error(*imagePath + ": file not found");
  OcclusionRequest request;
  request.patch = args.intValue("patch", 0, 1);
  request.stride = args.intValue("stride", 0, 1);
  request.batch = args.intValue("batch", 0, 1);
  const bool occlusion = !args.has("no-occlusion");
  if (!occlusion)
    for (const char* option : {"patch", "stride", "batch"})
      if (args.has(option))
        throw Error("--" + std::string(option) + " is an occlusion option; --no-occlusion skips it");
  const std::string modelPath = args.value("model").value_or(defaultModelPath());
  const std::string variant = args.value("variant").value_or(defaultConvVariant());
  findConvVariant(variant);  // an unknown id fails before any loading

  const std::shared_ptr<const Model> model = loadOnnxModel(modelPath);
  model->imageInput();
  Engine engine(model, variant);
  const std::optional<ModelCard> card = readModelCard(modelPath);
  engine.setPreprocessing(preprocessingFor(*model, card));
  const std::vector<std::string> names =
      card && !card->classNames.empty() ? card->classNames : fashionMnistClassNames();
  std::cout << "Model " << model->name << " on " << engine.deviceName() << " (variant " << variant << ")\n"
            << "Preprocessing: " << describePreprocessing(engine.preprocessing(), model->inputChannels()) << "\n";

  const DataSetPicture picture = loadPictureForModel(engine, *imagePath);
  const int height = model->inputHeight(), width = model->inputWidth();
  const Tensor input = ImageSet::fromImages(*imagePath, {pictureAtModelInput(engine, picture.image, true)}, names)
                           .batch(0, 1, height, width, engine.preprocessing());
  const InferenceResult result = engine.infer(input, true);
  const int classes = static_cast<int>(result.probabilities.dim(1));
  const std::vector<float> probabilities(result.probabilities.data(), result.probabilities.data() + classes);
  std::cout << *imagePath << (picture.inverted ? " (inverted: light background)" : "") << ":\n";
  int place = 0;
  for (int k : topClasses(probabilities, 5))
    std::printf("  %d. %s %.2f%%\n", ++place, className(names, k).c_str(),
                100.0 * probabilities[static_cast<size_t>(k)]);
  const int chosen =
      args.has("class") ? classFromOption(*args.value("class"), names, classes) : topClasses(probabilities, 1).front();
  std::printf("Evidence for %s (class %d, %.2f%%)\n", className(names, chosen).c_str(), chosen,
              100.0 * probabilities[static_cast<size_t>(chosen)]);

  nlohmann::json summary = {{"image", *imagePath},
                            {"model", model->name},
                            {"variant", variant},
                            {"device", engine.deviceName()},
                            {"class", chosen},
                            {"class_name", className(names, chosen)},
                            {"probability", probabilities[static_cast<size_t>(chosen)]}};
  std::string whyNot;
  std::optional<ActivationMap> cam;
  if (const std::optional<ActivationMapHead> head = findActivationMapHead(*model, &whyNot)) {
    cam = classActivationMap(*model, *head, headFeatures(*head, result.layers), 0, chosen);
    std::printf("\nClass activation map (%dx%d, of '%s'): what each position adds to the logit\n", cam->height,
                cam->width, head->featureNode.c_str());
    printGrid(cam->values, static_cast<size_t>(cam->height), static_cast<size_t>(cam->width), 1.0);
    const size_t peak = largestAt(cam->values);
    std::printf("  strongest at row %zu, column %zu; mean + bias = %.4f, the logit\n", peak / cam->width,
                peak % cam->width, cam->logit);
    summary["class_activation_map"] = {{"feature_node", head->featureNode},
                                       {"height", cam->height},
                                       {"width", cam->width},
                                       {"values", cam->values},
                                       {"logit", cam->logit}};
  } else {
    std::printf("\nNo class activation map: %s\n", whyNot.c_str());
    summary["class_activation_map"] = nullptr;
    summary["no_class_activation_map"] = whyNot;
  }

  std::optional<OcclusionMap> occluded;
  if (occlusion) {
    request.classIndex = chosen;
    occluded = occlusionSensitivity(engine, input, request, [](int done, int total) {
      std::fprintf(stderr, "\rOcclusion: %d of %d pictures", done, total);
      return true;
    });
    std::fprintf(stderr, "\n");
    std::printf("\nOcclusion (a %dx%d grey patch every %d pixels): the drop in percentage points\n", occluded->patch,
                occluded->patch, occluded->stride);
    printGrid(occluded->drop, occluded->rowStarts.size(), occluded->columnStarts.size(), 100.0);
    const size_t peak = largestAt(occluded->drop);
    const size_t columns = occluded->columnStarts.size();
    std::printf("  largest drop with the patch at pixel row %d, column %d; %s\n", occluded->rowStarts[peak / columns],
                occluded->columnStarts[peak % columns], describeOcclusionRun(*occluded).c_str());
    summary["occlusion"] = {{"patch", occluded->patch},
                            {"stride", occluded->stride},
                            {"row_starts", occluded->rowStarts},
                            {"column_starts", occluded->columnStarts},
                            {"baseline", occluded->baseline},
                            {"drop", occluded->drop},
                            {"pictures", occluded->pictures},
                            {"batches", occluded->batches},
                            {"inference_seconds", occluded->inferenceSeconds}};
  }

  if (const std::optional<std::string> prefix = args.value("out")) {
    std::vector<std::string> written;
    if (cam) {
      writeFileAtomically(*prefix + "-cam.csv", planeCsv(atInputSize(*cam, height, width), height, width));
      written.push_back(*prefix + "-cam.csv");
    }
    if (occluded) {
      writeFileAtomically(*prefix + "-occlusion.csv", planeCsv(occluded->pixelDrop, height, width));
      written.push_back(*prefix + "-occlusion.csv");
    }
    writeFileAtomically(*prefix + ".json", summary.dump(2) + "\n");
    written.push_back(*prefix + ".json");
    std::cout << "\nWrote";
    for (const std::string& file : written) std::cout << " " << file;
    std::cout << "\n";
  }
  return 0;
}

}  // namespace convscope::cli
