// Pictures (image files, drawings, dropped files) brought to the model's input size. Every path
// that resizes a picture to the model's input goes through here, so that the memory one picture
// takes at that size is estimated before anything is decoded or resized: a model whose input is
// 2^24 x 2^24 would otherwise turn an ordinary PNG into 2^48 floats and end in std::bad_alloc.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "app/core/data/image_file.h"
#include "app/core/data/image_set.h"
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

// True when `folder` holds pictures in class subfolders (PyTorch's ImageFolder layout:
// folder/tabby/1.jpg, folder/espresso/cup.png): at least one subfolder and no IDX file.
bool isImageFolder(const std::filesystem::path& folder);

// The pictures of an ImageFolder-style data set, each brought to the engine's model input by its
// preprocessing, labelled by its subfolder. With `modelClassNames` (a card's or --labels), a
// subfolder is the class of that name (ImageNet's "tabby" is class 281); a subfolder that names
// no class is refused, naming it. Without, the classes are the subfolders in sorted order, as
// ImageFolder numbers them. Files of other kinds (a README, .DS_Store) are skipped; a picture that
// cannot be decoded is refused naming it. The memory of the pictures at the model's input is
// checked (checkPicturesFit) before any is decoded.
ImageSet loadImageFolder(const Engine& engine, const std::filesystem::path& folder,
                         const std::vector<std::string>& modelClassNames = {});

}  // namespace convscope
