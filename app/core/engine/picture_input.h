// Pictures (image files, drawings, dropped files) brought to the model's input size. Every path
// that resizes a picture to the model's input goes through here, so that the memory one picture
// takes at that size is estimated before anything is decoded or resized: a model whose input is
// 2^24 x 2^24 would otherwise turn an ordinary PNG into 2^48 floats and end in std::bad_alloc.
#pragma once

#include <cstdint>

#include "app/core/data/gray_image.h"
#include "app/core/engine/engine.h"

namespace convscope {

// Throws convscope::Error, before any picture is decoded or resized, when `pictures` pictures do
// not fit the memory limit (memoryLimit()) at the engine's model input: the inference of one
// picture (Engine::checkMemory, which names the model's file, the layer, the bytes and the limit),
// and the `pictures` resized pictures held at once (named with the model's file and the figures).
void checkPicturesFit(const Engine& engine, int64_t pictures, bool captureLayers = false);

// `picture` at the engine's model input size, its aspect ratio kept (resizedToFit), once
// checkPicturesFit(engine, 1, captureLayers) has passed.
GrayImage pictureAtModelInput(const Engine& engine, const GrayImage& picture, bool captureLayers = false);

}  // namespace convscope
