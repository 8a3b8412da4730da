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
  const int64_t height = model.inputHeight(), width = model.inputWidth();
  const MemoryLimit limit = memoryLimit();
  // Saturating: a product beyond int64 is above any limit and still reads as a figure.
  const int64_t bytes =
      saturatingMul(saturatingMul(saturatingMul(height, width), static_cast<int64_t>(sizeof(float))), pictures);
  if (bytes <= limit.bytes) return;
  throw Error(model.sourcePath + ": " + std::to_string(pictures) + " pictures at the model's input of " +
              std::to_string(height) + " x " + std::to_string(width) + " take " +
              formatBytes(static_cast<uint64_t>(bytes)) + "; the limit is " +
              formatBytes(static_cast<uint64_t>(limit.bytes)) + " (" + limit.origin + ")");
}

GrayImage pictureAtModelInput(const Engine& engine, const GrayImage& picture, bool captureLayers) {
  checkPicturesFit(engine, 1, captureLayers);
  const Model& model = engine.model();
  const int height = model.inputHeight(), width = model.inputWidth();
  if (picture.height == height && picture.width == width) return picture;
  return resizedToFit(picture, height, width);
}

}  // namespace convscope
