#include "app/core/engine/picture_input.h"

#include <string>

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
  const int64_t bytes =
      saturatingMul(saturatingMul(saturatingMul(saturatingMul(height, width), channels), int64_t{sizeof(float)}),
                    pictures);
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

}  // namespace convscope
