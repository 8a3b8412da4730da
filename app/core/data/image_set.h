// A labelled set of pictures of one size, gray or colour (R, G, B planes), values in [0, 1]: the
// Fashion-MNIST (or MNIST) test set read from IDX files, or pictures the user opened. It also
// turns a range of its pictures into the network's NCHW float input batch at the model's input
// size, with the model's preprocessing of the values (preprocessing.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "app/core/data/picture.h"
#include "app/core/data/preprocessing.h"
#include "app/core/util/tensor.h"

namespace convscope {

enum class Split { Train, Test };

// Where the Debian package dataset-fashion-mnist installs the data; $CONVSCOPE_DATA overrides.
std::filesystem::path defaultDataFolder();

const std::vector<std::string>& fashionMnistClassNames();
const std::vector<std::string>& digitClassNames();

class ImageSet {
 public:
  static constexpr int kNoLabel = -1;

  ImageSet() = default;
  // `pixels` holds count * channels * height * width values in [0, 1]; `labels` one entry per image.
  ImageSet(std::string source, int height, int width, std::vector<float> pixels, std::vector<int> labels,
           std::vector<std::string> classNames, int channels = 1);

  // Reads <split>-images / <split>-labels IDX files (the usual MNIST names, .gz or not) from a
  // folder. Class names are Fashion-MNIST's unless the folder's name says plain MNIST.
  static ImageSet loadIdxFolder(const std::filesystem::path& folder, Split split = Split::Test);
  // The images only: the labels file is never opened, every label is kNoLabel. What the process
  // that runs a student's kernel reads, so that the answers are not in its memory.
  static ImageSet loadIdxImages(const std::filesystem::path& folder, Split split = Split::Test);

  // Pictures of one size and channel count already brought to [0, 1], e.g. from image files;
  // labels unknown unless given (one per picture).
  static ImageSet fromImages(std::string source, const std::vector<Picture>& images,
                             std::vector<std::string> classNames, std::vector<int> labels = {});

  const std::string& source() const { return source_; }
  int count() const { return static_cast<int>(labels_.size()); }
  int height() const { return height_; }
  int width() const { return width_; }
  int channels() const { return channels_; }
  bool hasLabels() const;
  int label(int index) const { return labels_.at(static_cast<size_t>(index)); }
  const std::vector<std::string>& classNames() const { return classNames_; }

  Picture image(int index) const;

  // Images [first, first + count) as an N x C x height x width batch, resized bilinearly
  // (half-pixel centres) where the model's input size differs, each value then mapped by
  // `preprocessing` (Preprocessing::scaled; the default leaves [0, 1] as it is). C is the set's
  // channel count.
  Tensor batch(int first, int count, int height, int width, const Preprocessing& preprocessing = {}) const;

  // The images as the IDX files store them, one byte a pixel (x / 255 gives the values above),
  // for the end-to-end path that sends only bytes to the GPU (Engine::inferBytes). Sets made
  // from image files or drawings have none: their values are not all multiples of 1/255.
  bool hasBytes() const { return !bytes_.empty(); }
  // Image `first` onwards; throws convscope::Error when the set has no bytes or `first` is outside.
  const uint8_t* bytes(int first = 0) const;

 private:
  std::string source_;
  int height_ = 0;
  int width_ = 0;
  int channels_ = 1;
  std::vector<float> pixels_;
  std::vector<uint8_t> bytes_;  // the stored bytes, where the set came from IDX files
  std::vector<int> labels_;
  std::vector<std::string> classNames_;
};

// 8-bit images (count x height x width) as the network's N x 1 x outHeight x outWidth input:
// x / 255, resized as ImageSet::batch resizes, so the same images give the same bits either way.
Tensor batchFromBytes(const uint8_t* pixels, int count, int height, int width, int outHeight, int outWidth);

}  // namespace convscope
