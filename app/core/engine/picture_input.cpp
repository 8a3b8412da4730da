#include "app/core/engine/picture_input.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"
#include "app/core/util/memory_limit.h"

namespace convscope {

void checkPicturesFit(const Engine& engine, int64_t pictures, bool captureLayers) {
  const Model& model = engine.model();
  // The inference first: its refusal names the layer where the need peaks.
  engine.checkMemory(1, captureLayers);
  const int64_t height = model.inputHeight(), width = model.inputWidth(), channels = model.inputChannels();
  const MemoryLimit limit = memoryLimit();
  // Saturating: a product beyond int64 is above any limit and still reads as a figure.
  const int64_t bytes = saturatingMul(
      saturatingMul(saturatingMul(saturatingMul(height, width), channels), int64_t{sizeof(float)}), pictures);
  if (bytes <= limit.bytes) return;
  throw Error(model.sourcePath + ": " + std::to_string(pictures) + " pictures at the model's input of " +
              std::to_string(channels) + " x " + std::to_string(height) + " x " + std::to_string(width) + " take " +
              formatBytes(static_cast<uint64_t>(bytes)) + "; the limit is " +
              formatBytes(static_cast<uint64_t>(limit.bytes)) + " (" + limit.origin + ")");
}

Picture pictureAtModelInput(const Engine& engine, const Picture& picture, bool captureLayers) {
  checkPicturesFit(engine, 1, captureLayers);
  const Model& model = engine.model();
  const int height = model.inputHeight(), width = model.inputWidth(), channels = model.inputChannels();
  Picture source = picture;
  if (channels == 1 && source.channels == 3) source = grayOf(source);
  if (channels == 3 && source.channels == 1) {
    source.channels = 3;
    source.pixels.reserve(source.pixels.size() * 3);
    source.pixels.insert(source.pixels.end(), picture.pixels.begin(), picture.pixels.end());
    source.pixels.insert(source.pixels.end(), picture.pixels.begin(), picture.pixels.end());
  }
  if (source.height == height && source.width == width) return source;
  const Preprocessing& rule = engine.preprocessing();
  switch (rule.framing) {
    case PictureFraming::CentreCrop:
      return centreCropped(source, height, width, rule.cropFraction);
    case PictureFraming::Stretch:
      return resized(source, height, width);
    case PictureFraming::Fit:
      break;
  }
  return resizedToFit(source, height, width);
}

DataSetPicture loadPictureForModel(const Engine& engine, const std::filesystem::path& path) {
  return loadPictureForDataSet(path, engine.preprocessing().inversion, engine.model().inputChannels());
}

namespace {

namespace fs = std::filesystem;

bool hasPictureExtension(const fs::path& file) {
  std::string extension = file.extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* known : {".png", ".jpg", ".jpeg", ".bmp", ".pgm", ".ppm", ".pnm", ".tif", ".tiff", ".webp"})
    if (extension == known) return true;
  return false;
}

// Sorted, so that the classes and the pictures come in the same order on every machine.
std::vector<fs::path> sortedEntries(const fs::path& folder, bool folders) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    std::error_code kind;
    if (folders ? entry.is_directory(kind) : entry.is_regular_file(kind)) entries.push_back(entry.path());
  }
  if (ec) throw Error(folder.string() + ": cannot list the folder (" + ec.message() + ")");
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace

bool isImageFolder(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return false;
  bool subfolder = false;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    std::error_code kind;
    if (entry.path().filename().string().find("-ubyte") != std::string::npos) return false;  // IDX files
    subfolder = subfolder || entry.is_directory(kind);
  }
  return subfolder && !ec;
}

ImageSet loadImageFolder(const Engine& engine, const fs::path& folder,
                         const std::vector<std::string>& modelClassNames) {
  const std::vector<fs::path> classFolders = sortedEntries(folder, true);
  if (classFolders.empty()) throw Error(folder.string() + ": no class subfolders (folder/CLASS/picture.jpg)");
  std::vector<std::string> classNames = modelClassNames;
  std::vector<std::pair<fs::path, int>> files;
  for (size_t c = 0; c < classFolders.size(); ++c) {
    const std::string name = classFolders[c].filename().string();
    int label = static_cast<int>(c);
    if (!modelClassNames.empty()) {
      const auto found = std::find(modelClassNames.begin(), modelClassNames.end(), name);
      if (found == modelClassNames.end())
        throw Error(classFolders[c].string() +
                    ": the subfolder names no class of the model (its names are its "
                    "card's or the --labels file's; \"" +
                    modelClassNames.front() + "\" is one)");
      label = static_cast<int>(found - modelClassNames.begin());
    } else {
      classNames.push_back(name);
    }
    for (const fs::path& file : sortedEntries(classFolders[c], false))
      if (hasPictureExtension(file)) files.emplace_back(file, label);
  }
  if (files.empty()) throw Error(folder.string() + ": no pictures in its class subfolders");
  checkPicturesFit(engine, static_cast<int64_t>(files.size()));
  std::vector<Picture> pictures;
  std::vector<int> labels;
  pictures.reserve(files.size());
  for (const auto& [file, label] : files) {
    pictures.push_back(pictureAtModelInput(engine, loadPictureForModel(engine, file).image));
    labels.push_back(label);
  }
  return ImageSet::fromImages(folder.string(), pictures, std::move(classNames), std::move(labels));
}

}  // namespace convscope
