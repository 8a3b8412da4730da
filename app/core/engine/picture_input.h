// Pictures (image files, drawings, dropped files) brought to the model's input size. Every path
// that resizes a picture to the model's input goes through here, so that the memory one picture
// takes at that size is estimated before anything is decoded or resized: a model whose input is
// 2^24 x 2^24 would otherwise turn an ordinary PNG into 2^48 floats and end in std::bad_alloc.
#pragma once

#include <cstdint>
#include <filesystem>

#include "app/core/data/image_file.h"
#include "app/core/data/picture.h"
#include "app/core/engine/engine.h"

namespace convscope {

// Throws convscope::Error, before any picture is decoded or resized, when `pictures` pictures do
// not fit the memory limit (memoryLimit()) at the engine's model input: the inference of one
// picture (Engine::checkMemory, which names the model's file, the layer, the bytes and the limit),
// and the `pictures` resized pictures held at once (named with the model's file and the figures).
void checkPicturesFit(const Engine& engine, int64_t pictures, bool captureLayers = false);

// `picture` at the engine's model input size and channels, framed by the engine's preprocessing
// (fit, centre crop or stretch), once checkPicturesFit(engine, 1, captureLayers) has passed. A
// colour picture for a gray model becomes gray (grayOf); a gray one for a colour model is
// repeated in R, G and B, as a gray file decoded in colour is.
Picture pictureAtModelInput(const Engine& engine, const Picture& picture, bool captureLayers = false);

// The image file decoded in the engine's model's channels and inverted by its preprocessing's rule.
DataSetPicture loadPictureForModel(const Engine& engine, const std::filesystem::path& path);

}  // namespace convscope
