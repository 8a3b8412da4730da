#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/core/conv/variant_table.h"
#include "app/core/data/class_labels.h"
#include "app/core/data/image_file.h"
#include "app/core/data/video_source.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/picture_input.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/atomic_file.h"
#include "app/core/util/csv_field.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"

namespace convscope::cli {
namespace {

constexpr const char* kHelp = R"(usage: convscope-cli classify [--model FILE.onnx] [--data DIR | --images FILE...]
                             [--video FILE [--every N] [--frames N]] [--count N] [--variant ID] [--csv OUT.csv] [--invert | --no-invert]
                             [--labels FILE] [--top K] [--resize fit|centre-crop|stretch]
                             [--crop-fraction F] [--mean M] [--std S] [--value-range R]
                             [--channel-order rgb|bgr]

Classifies images and reports, in the course's format, the op time of every conv layer and the
accuracy. Without --data or --images the Fashion-MNIST test set is used.
  --model FILE     ONNX model (default: the shipped course-high model)
  --data DIR       folder with t10k-images/labels IDX files, gzipped or not
                   (default: $CONVSCOPE_DATA or /usr/share/datasets/fashion-mnist), or of
                   pictures in class subfolders (DIR/tabby/1.jpg, as PyTorch's ImageFolder):
                   a subfolder is the model's class of that name, else they are numbered in order
  --images F...    image files (PNG, JPEG, BMP ...) instead of the data set
  --video FILE     a video file (MP4, AVI, MKV, WebM ...: what FFmpeg reads), classified frame
                   by frame, each frame as an image file given to --images would be; prints
                   each frame's class, then the frames per second classified (decoding,
                   preprocessing and inference) beside the video's own frame rate
  --every N        --video: classify every Nth frame (the first, the N+1st, ...); default 1
  --frames N       --video: stop after N classified frames (default: to the end)
  --invert         invert every image file; --no-invert: none. By default, as in the window, a
                   gray model's picture whose border is mostly light (a dark object on a light
                   background) is inverted into the data set's light-on-dark form, and the output
                   says so; a colour model's are not (unless its card says "invert")
How image files become the model's input: its card's "preprocessing", else the default for its
input (gray: fit, values 0 to 1; colour: ImageNet's centre crop 0.875, RGB, ImageNet's mean and
std); each option below sets one part of it, and the rule used is printed:
  --resize R       fit (whole picture, aspect kept, padded), centre-crop or stretch
  --crop-fraction F  centre-crop: the shorter side is resized to input / F (0 < F <= 1)
  --mean M         subtracted per channel after the values are scaled to --value-range:
                   one number, or three separated by commas (in the model's channel order)
  --std S          divided by per channel, after the mean: one number or three, each above 0
  --value-range R  the pixel values' range before mean and std: 1 (0..1) or 255 (0..255) ...
  --channel-order  rgb or bgr: the order of the model's three input channels
  --count N        classify the first N images (default: all)
  --variant ID     convolution kernel variant (see 'convscope-cli variants')
  --csv OUT        write per-image predictions: index, label, predicted class, probabilities
  --labels FILE    the model's class names, one a line in the order of its outputs (ImageNet's
                   1,000, say), instead of its card's "class_names" or the data set's
  --top K          each image's K most probable classes with their names and probabilities, the
                   true class marked where it is known
)";

// The data set (or --labels) names the classes; a model may have more outputs than names. Those
// beyond the names are "class 10", "class 11", ...
std::string className(const std::vector<std::string>& names, int64_t index) {
  return index >= 0 && index < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(index)]
                                                                  : "class " + std::to_string(index);
}

void writeCsv(const std::string& path, const ClassificationRun& run, const std::vector<std::string>& names,
              const std::vector<std::string>& fileNames) {
  std::ostringstream out;
  // One probability column per model output, whatever the data set's class count.
  const size_t classes = run.images.empty() ? names.size() : run.images.front().probabilities.size();
  out << "index,source,label,label_name,predicted,predicted_name";
  for (size_t k = 0; k < classes; ++k) out << "," << csvField("p_" + className(names, static_cast<int64_t>(k)));
  out << "\n";
  // File names are always quoted (as before); class names where they must be.
  for (const ImageClassification& c : run.images) {
    out << c.index << ","
        << (fileNames.empty() ? std::string() : quotedCsvField(fileNames[static_cast<size_t>(c.index)])) << ",";
    if (c.label != ImageSet::kNoLabel)
      out << c.label << "," << csvField(className(names, c.label));
    else
      out << ",";
    out << "," << c.predicted << "," << csvField(className(names, c.predicted));
    char buffer[32];
    for (float p : c.probabilities) {
      std::snprintf(buffer, sizeof buffer, ",%.7g", p);
      out << buffer;
    }
    out << "\n";
  }
  writeFileAtomically(path, out.str());
}

double numberOption(const std::string& option, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
    throw Error("--" + option + " " + text + ": not a number");
  return value;
}

// The rule from the model's card (or its default), with each option given on the command line
// put in its place.
Preprocessing preprocessingFromOptions(const Args& args, Preprocessing rule) {
  if (const auto resize = args.value("resize"); resize && !parseFraming(*resize, rule.framing))
    throw Error("--resize " + *resize + ": it is fit, centre-crop or stretch");
  if (const auto order = args.value("channel-order"); order && !parseChannelOrder(*order, rule.channelOrder))
    throw Error("--channel-order " + *order + ": it is rgb or bgr");
  if (const auto fraction = args.value("crop-fraction")) {
    rule.cropFraction = numberOption("crop-fraction", *fraction);
    if (!(rule.cropFraction > 0.0 && rule.cropFraction <= 1.0))
      throw Error("--crop-fraction " + *fraction + ": the part of the resized picture kept, above 0 and at most 1");
  }
  if (const auto range = args.value("value-range")) {
    rule.valueRange = static_cast<float>(numberOption("value-range", *range));
    if (!(rule.valueRange > 0.0f)) throw Error("--value-range " + *range + ": it must be above 0");
  }
  for (const auto& [option, values, positive] :
       {std::tuple{"mean", &rule.mean, false}, std::tuple{"std", &rule.deviation, true}}) {
    const auto text = args.value(option);
    if (!text) continue;
    std::vector<float> numbers;
    std::stringstream parts(*text);
    for (std::string part; std::getline(parts, part, ',');) {
      char* end = nullptr;
      const double value = std::strtod(part.c_str(), &end);
      if (part.empty() || end != part.c_str() + part.size() || !std::isfinite(value))
        throw Error("--" + std::string(option) + " " + *text + ": \"" + part + "\" is not a number");
      numbers.push_back(static_cast<float>(value));
      if (positive && !(numbers.back() > 0.0f))
        throw Error("--" + std::string(option) + " " + *text + ": each value must be above 0");
    }
    if (numbers.size() != 1 && numbers.size() != 3)
      throw Error("--" + std::string(option) + " " + *text + ": one number, or three separated by commas");
    for (size_t c = 0; c < 3; ++c) (*values)[c] = numbers[numbers.size() == 1 ? 0 : c];
  }
  if (args.has("invert")) rule.inversion = PictureInversion::Always;
  if (args.has("no-invert")) rule.inversion = PictureInversion::Never;
  return rule;
}

// classify --video: each frame (every Nth, up to a count) through the path an image file of
// --images takes once decoded -- the inversion rule, the framing to the model's input, the
// model's values -- one frame at a time, as a camera would give them.
int classifyVideo(const Args& args, const std::string& modelPath, const std::string& variant, int top,
                  const std::optional<std::vector<std::string>>& labels, const std::string& labelsPath) {
  const std::string videoPath = *args.value("video");
  const int every = args.intValue("every", 1, 1);
  const int maxFrames = args.intValue("frames", std::numeric_limits<int>::max(), 1);
  std::cout << "Loading model..." << std::flush;
  const std::shared_ptr<const Model> model = loadOnnxModel(modelPath);
  std::cout << " done\n";
  model->imageInput();  // refuses a model that is not a picture classifier, with the reason
  Engine engine(model, variant);
  const std::optional<ModelCard> card = readModelCard(modelPath);
  engine.setPreprocessing(preprocessingFromOptions(args, preprocessingFor(*model, card)));
  std::cout << "Preprocessing: " << describePreprocessing(engine.preprocessing(), model->inputChannels()) << "\n";
  checkPicturesFit(engine, 1);  // the model's figures before a frame is decoded
  const std::vector<std::string> names = labels                              ? *labels
                                         : card && !card->classNames.empty() ? card->classNames
                                                                             : fashionMnistClassNames();
  const std::string namesFile =
      labels ? labelsPath : std::filesystem::path(modelPath).replace_extension(".json").string();

  const auto start = std::chrono::steady_clock::now();
  VideoSource video = VideoSource::openFile(videoPath, model->inputChannels());
  std::cout << "Video " << video.name() << ": " << video.width() << "x" << video.height();
  if (video.frameCount()) std::cout << ", " << *video.frameCount() << " frames";
  if (video.framesPerSecond()) std::printf(", %.2f frames/s", *video.framesPerSecond());
  std::cout << "\n" << std::flush;
  int classified = 0;
  for (std::optional<VideoFrame> frame = video.next(); frame && classified < maxFrames;) {
    DataSetPicture picture = invertedByRule(std::move(frame->picture), engine.preprocessing().inversion);
    const ImageSet one = ImageSet::fromImages(video.name() + ", frame " + std::to_string(frame->index),
                                              {pictureAtModelInput(engine, picture.image)}, names);
    const ClassificationRun run = classify(engine, one, 0, 1, 1);
    const ImageClassification& c = run.images.front();
    if (labels || (card && !card->classNames.empty()))
      if (c.probabilities.size() != names.size())
        throw Error(namesFile + " names " + std::to_string(names.size()) + " classes, but the model " + model->name +
                    " gives " + std::to_string(c.probabilities.size()) + ": the names are its outputs', in order");
    const char* inverted = !picture.inverted ? ""
                           : engine.preprocessing().inversion == PictureInversion::Automatic
                               ? " (inverted: light background)"
                               : " (inverted: --invert)";
    std::printf("frame %lld (%.2f s): %s %.1f%%%s\n", static_cast<long long>(frame->index), frame->seconds,
                className(names, c.predicted).c_str(), 100.0 * c.probabilities[static_cast<size_t>(c.predicted)],
                inverted);
    if (top > 0) {
      int place = 0;
      for (int k : topClasses(c.probabilities, top))
        std::printf("  %d. %s %.2f%%\n", ++place, className(names, k).c_str(),
                    100.0 * c.probabilities[static_cast<size_t>(k)]);
    }
    ++classified;
    if (classified >= maxFrames) break;
    if (every > 1 && video.skip(every - 1) < every - 1) break;
    frame = video.next();
  }
  std::fflush(stdout);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Decoding, preprocessing and inference of the frames classified (and the decoding of those
  // --every passed over): what a live camera would have to keep up with.
  std::printf("Classified %d frames in %.2f s: %.1f frames/s (decoding, preprocessing, inference; variant %s)\n",
              classified, seconds, seconds > 0 ? classified / seconds : 0.0, variant.c_str());
  if (video.framesPerSecond())
    std::printf("The video's own frame rate: %.2f frames/s\n", *video.framesPerSecond());
  else
    std::printf("The video's own frame rate: not given by the file\n");
  return 0;
}

}  // namespace

int runClassify(const std::vector<std::string>& tokens) {
  if (!tokens.empty() && (tokens[0] == "--help" || tokens[0] == "-h")) {
    std::cout << kHelp;
    return 0;
  }
  const Args args(tokens,
                  {"model", "data", "images", "video", "every", "frames", "count", "variant", "csv", "labels", "top",
                   "resize", "crop-fraction", "mean", "std", "value-range", "channel-order"},
                  {"invert", "no-invert"});
  if (args.has("data") && args.has("images")) throw Error("give either --data or --images, not both");
  if (args.has("video")) {
    for (const char* other : {"data", "images", "count", "csv"})
      if (args.has(other))
        throw Error("--video and --" + std::string(other) + " do not go together" +
                    (std::string(other) == "count" ? " (--frames N classifies N frames)" : ""));
    args.intValue("every", 1, 1);  // malformed: refused before anything loads
    args.intValue("frames", 1, 1);
    // A wrong path too (what else is wrong with the file is said once it is opened).
    if (const std::string video = *args.value("video"); !somethingExistsAt(video))
      throw Error(video + ": file not found");
  } else {
    for (const char* videoOnly : {"every", "frames"})
      if (args.has(videoOnly)) throw Error("--" + std::string(videoOnly) + " goes with --video FILE");
  }
  if (args.has("invert") && args.has("no-invert")) throw Error("give either --invert or --no-invert, not both");
  preprocessingFromOptions(args, Preprocessing{});  // a malformed option fails before any loading
  const std::string modelPath = args.value("model").value_or(defaultModelPath());
  const std::string variant = args.value("variant").value_or(defaultConvVariant());
  findConvVariant(variant);  // an unknown id fails before any loading
  const int top = args.has("top") ? args.intValue("top", 1, 1) : 0;
  // Read before the data and the model: a wrong path fails at once.
  const std::optional<std::string> labelsPath = args.value("labels");
  const std::optional<std::vector<std::string>> labels =
      labelsPath ? std::optional(readLabelsFile(*labelsPath)) : std::nullopt;
  if (args.has("video")) return classifyVideo(args, modelPath, variant, top, labels, labelsPath.value_or(""));

  const std::vector<std::string> files = args.values("images");
  std::vector<bool> inverted;  // per file: whether the inversion rule inverted it
  ImageSet images;
  std::shared_ptr<const Model> model;
  std::unique_ptr<Engine> engine;
  const std::string dataFolder = args.value("data").value_or(defaultDataFolder().string());
  if (files.empty() && isImageFolder(dataFolder)) {
    // Photos in class subfolders (PyTorch's ImageFolder): each brought to the model's input by
    // its rule, so the model comes first; the classes are named by the model where it can.
    std::cout << "Loading model..." << std::flush;
    model = loadOnnxModel(modelPath);
    std::cout << " done\n";
    model->imageInput();
    engine = std::make_unique<Engine>(model, variant);
    const std::optional<ModelCard> modelCard = readModelCard(modelPath);
    engine->setPreprocessing(preprocessingFromOptions(args, preprocessingFor(*model, modelCard)));
    std::cout << "Preprocessing: " << describePreprocessing(engine->preprocessing(), model->inputChannels()) << "\n";
    std::cout << "Loading pictures..." << std::flush;
    images = loadImageFolder(*engine, dataFolder,
                             labels      ? *labels
                             : modelCard ? modelCard->classNames
                                         : std::vector<std::string>{});
    std::cout << " done (" << images.count() << " in " << images.classNames().size() << " classes)\n";
  } else if (files.empty()) {
    std::cout << "Loading fashion-mnist data..." << std::flush;
    images = ImageSet::loadIdxFolder(dataFolder);
    std::cout << " done\n";
    std::cout << "Loading model..." << std::flush;
    model = loadOnnxModel(modelPath);
    std::cout << " done\n";
  } else {
    // Image files are resized to the model's input, keeping their aspect ratio (padded like the
    // data set's garments, see resizedToFit), so the model comes first.
    std::cout << "Loading model..." << std::flush;
    model = loadOnnxModel(modelPath);
    std::cout << " done\n";
    model->imageInput();  // refuses a model that is not a picture classifier, with the reason
    engine = std::make_unique<Engine>(model, variant);
    engine->setPreprocessing(preprocessingFromOptions(args, preprocessingFor(*model, readModelCard(modelPath))));
    std::cout << "Preprocessing: " << describePreprocessing(engine->preprocessing(), model->inputChannels()) << "\n";
    // Before any picture is decoded: a model whose input is 2^24 x 2^24 is refused with its
    // figures here, not by std::bad_alloc in the resize.
    checkPicturesFit(*engine, static_cast<int64_t>(files.size()));
    std::cout << "Loading images..." << std::flush;
    std::vector<Picture> pictures;
    for (const std::string& file : files) {
      DataSetPicture picture = loadPictureForModel(*engine, file);
      inverted.push_back(picture.inverted);
      pictures.push_back(pictureAtModelInput(*engine, std::move(picture.image)));
    }
    images = ImageSet::fromImages("image files", pictures, fashionMnistClassNames());
    std::cout << " done\n";
  }
  model->imageInput();  // refuses a model that is not a picture classifier, with the reason
  // The class names: --labels, else the model card's, else the data set's. The first two must be
  // the model's: one too few or too many shifts every name after it.
  const std::optional<ModelCard> card = readModelCard(modelPath);
  std::optional<std::vector<std::string>> modelNames = labels;
  std::string namesFile = labelsPath.value_or("");
  if (!labels && card && !card->classNames.empty()) {
    modelNames = card->classNames;
    namesFile = std::filesystem::path(modelPath).replace_extension(".json").string();
  }
  const auto checkNameCount = [&](int64_t outputs) {
    if (modelNames && outputs > 0 && static_cast<int64_t>(modelNames->size()) != outputs)
      throw Error(namesFile + " names " + std::to_string(modelNames->size()) + " classes, but the model " +
                  model->name + " gives " + std::to_string(outputs) + ": the names are its outputs', in order");
  };
  checkNameCount(model->outputs.empty() || model->outputs.front().shape.empty() ? -1
                                                                                : model->outputs.front().shape.back());
  const std::vector<std::string>& names = modelNames ? *modelNames : images.classNames();

  const int count = args.intValue("count", images.count(), 1);
  if (count > images.count())
    throw Error("--count " + std::to_string(count) + " but " + images.source() + " holds " +
                std::to_string(images.count()) + " images");

  if (!engine) {
    engine = std::make_unique<Engine>(model, variant);
    engine->setPreprocessing(preprocessingFromOptions(args, preprocessingFor(*model, card)));
  }
  std::cout << "New Inference\n";
  // On the GPU the whole request is one batch, as in the course; on the CPU chunks keep memory low.
  const int chunk = findConvVariant(variant).runsOnGpu() ? count : 256;
  const ClassificationRun run = classify(*engine, images, 0, count, chunk);
  for (const ConvLayerTime& t : run.convTimes) {
    std::printf("Op Time: %.6f\n", t.seconds);
    if (!t.fallbackReason.empty())
      std::fprintf(stderr, "note: %s ran on %s: %s cannot run it (%s)\n", t.node.c_str(), t.variant.c_str(),
                   variant.c_str(), t.fallbackReason.c_str());
  }
  if (run.labelled)
    std::printf("Correctness: %.4f Model: %s Batch: %d\n", run.accuracy(), model->name.c_str(), count);
  else
    std::printf("Correctness: n/a (no labels) Model: %s Batch: %d\n", model->name.c_str(), count);
  std::fflush(stdout);
  std::fprintf(stderr, "variant %s, %.2f s in all\n", variant.c_str(), run.seconds);

  if (!run.images.empty()) checkNameCount(static_cast<int64_t>(run.images.front().probabilities.size()));
  if (top > 0)
    for (const ImageClassification& c : run.images) {
      const std::string source =
          files.empty() ? images.source() + ", image " + std::to_string(c.index) : files[static_cast<size_t>(c.index)];
      std::printf("%s%s:\n", source.c_str(),
                  c.label == ImageSet::kNoLabel ? "" : (" (true class: " + className(names, c.label) + ")").c_str());
      int place = 0;
      for (int k : topClasses(c.probabilities, top))
        std::printf("  %d. %s %.2f%%%s\n", ++place, className(names, k).c_str(),
                    100.0 * c.probabilities[static_cast<size_t>(k)], k == c.label ? "  <- true class" : "");
    }
  else if (!files.empty())
    for (const ImageClassification& c : run.images)
      std::printf("%s: %s (%.1f%%)%s\n", files[static_cast<size_t>(c.index)].c_str(),
                  className(names, c.predicted).c_str(), 100.0 * c.probabilities[static_cast<size_t>(c.predicted)],
                  !inverted[static_cast<size_t>(c.index)]                            ? ""
                  : engine->preprocessing().inversion == PictureInversion::Automatic ? " (inverted: light background)"
                                                                                     : " (inverted: --invert)");
  if (const auto csv = args.value("csv")) {
    writeCsv(*csv, run, names, files);
    std::fprintf(stderr, "wrote %zu predictions to %s\n", run.images.size(), csv->c_str());
  }
  return 0;
}

}  // namespace convscope::cli
