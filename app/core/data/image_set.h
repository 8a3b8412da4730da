// A labelled set of small grayscale images: the Fashion-MNIST (or MNIST) test set read from IDX
// files, or pictures the user opened. It also turns a range of its images into the network's
// NCHW float input batch at the model's input size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "app/core/data/gray_image.h"
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
  // `pixels` holds count * height * width values in [0, 1]; `labels` one entry per image.
  ImageSet(std::string source, int height, int width, std::vector<float> pixels, std::vector<int> labels,
           std::vector<std::string> classNames);

  // Reads <split>-images / <split>-labels IDX files (the usual MNIST names, .gz or not) from a
  // folder. Class names are Fashion-MNIST's unless the folder's name says plain MNIST.
  static ImageSet loadIdxFolder(const std::filesystem::path& folder, Split split = Split::Test);
  // The images only: the labels file is never opened, every label is kNoLabel. What the process
  // that runs a student's kernel reads, so that the answers are not in its memory.
  static ImageSet loadIdxImages(const std::filesystem::path& folder, Split split = Split::Test);

  // Pictures of one size already brought to [0, 1] gray, e.g. from image files; labels unknown.
  static ImageSet fromImages(std::string source, const std::vector<GrayImage>& images,
                             std::vector<std::string> classNames);

  const std::string& source() const { return source_; }
  int count() const { return static_cast<int>(labels_.size()); }
  int height() const { return height_; }
  int width() const { return width_; }
  bool hasLabels() const;
  int label(int index) const { return labels_.at(static_cast<size_t>(index)); }
  const std::vector<std::string>& classNames() const { return classNames_; }

  GrayImage image(int index) const;

  // Images [first, first + count) as an N x 1 x height x width batch, scaled to [0, 1] and
  // resized bilinearly (half-pixel centres) where the model's input size differs.
  Tensor batch(int first, int count, int height, int width) const;

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
  std::vector<float> pixels_;
  std::vector<uint8_t> bytes_;  // the stored bytes, where the set came from IDX files
  std::vector<int> labels_;
  std::vector<std::string> classNames_;
};

// 8-bit images (count x height x width) as the network's N x 1 x outHeight x outWidth input:
// x / 255, resized as ImageSet::batch resizes, so the same images give the same bits either way.
Tensor batchFromBytes(const uint8_t* pixels, int count, int height, int width, int outHeight, int outWidth);

}  // namespace convscope
