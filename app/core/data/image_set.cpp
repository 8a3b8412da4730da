#include "app/core/data/image_set.h"

#include <algorithm>
#include <cstdlib>

#include "app/core/data/idx_file.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"
#include "app/core/util/omp_exceptions.h"

namespace convscope {
namespace {

// Images [0, count) of `channels` planes resized to outHeight x outWidth as one N x C x H x W
// batch, each value then mapped by `preprocessing`. Images are independent: the cores share them
// out (10,000 resized images are otherwise a noticeable part of a fast variant's classify).
// `imageAt(i, scratch)` gives image i's floats (in `scratch` if it must make them). The resize
// allocates its taps, so a failure is carried out of the parallel region.
template <typename ImageAt>
Tensor resizedBatch(int count, int channels, int height, int width, int outHeight, int outWidth,
                    const Preprocessing& preprocessing, ImageAt imageAt) {
  Tensor out({count, channels, outHeight, outWidth});
  const size_t inPlane = static_cast<size_t>(height) * width, outPlane = static_cast<size_t>(outHeight) * outWidth;
  OmpExceptions errors;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < count; ++i)
    errors.run([&] {
      std::vector<float> scratch;
      const float* image = imageAt(i, scratch);
      for (int c = 0; c < channels; ++c) {
        float* plane = out.data() + outPlane * (static_cast<size_t>(i) * channels + c);
        const int source = preprocessing.sourceChannel(c, channels);
        resizeBilinearHalfPixel(image + inPlane * static_cast<size_t>(source), height, width, plane, outHeight,
                                outWidth);
        for (size_t k = 0; k < outPlane; ++k) plane[k] = preprocessing.scaled(plane[k], c);
      }
    });
  errors.rethrow();
  return out;
}

namespace fs = std::filesystem;

// The names the MNIST family is distributed under, gzipped or not.
fs::path findIdxFile(const fs::path& folder, const std::string& prefix, const std::string& kind) {
  for (const std::string& name : {prefix + "-" + kind + "-idx" + (kind == "images" ? "3" : "1") + "-ubyte",
                                  prefix + "-" + kind + ".idx" + (kind == "images" ? "3" : "1") + "-ubyte"}) {
    for (const char* suffix : {"", ".gz"}) {
      const fs::path candidate = folder / (name + suffix);
      // Anything at the name (a folder, a FIFO, a link loop) is taken, for the reader to refuse
      // with its reason; fs::exists() would throw on a link loop.
      if (somethingExistsAt(candidate)) return candidate;
    }
  }
  throw Error(folder.string() + ": no " + prefix + " " + kind + " IDX file (expected " + prefix + "-" + kind + "-idx" +
              (kind == "images" ? "3" : "1") + "-ubyte or .gz)");
}

bool looksLikeDigits(const fs::path& folder) {
  std::error_code ec;
  std::string name = fs::absolute(folder, ec).lexically_normal().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name.find("mnist") != std::string::npos && name.find("fashion") == std::string::npos;
}

}  // namespace

fs::path defaultDataFolder() {
  if (const char* env = std::getenv("CONVSCOPE_DATA"); env && *env) return env;
  return "/usr/share/datasets/fashion-mnist";
}

const std::vector<std::string>& fashionMnistClassNames() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                 "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

const std::vector<std::string>& digitClassNames() {
  static const std::vector<std::string> names = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  return names;
}

ImageSet::ImageSet(std::string source, int height, int width, std::vector<float> pixels, std::vector<int> labels,
                   std::vector<std::string> classNames, int channels)
    : source_(std::move(source)),
      height_(height),
      width_(width),
      channels_(channels),
      pixels_(std::move(pixels)),
      labels_(std::move(labels)),
      classNames_(std::move(classNames)) {
  if (channels_ != 1 && channels_ != 3)
    throw Error(source_ + ": pictures have 1 or 3 channels, not " + std::to_string(channels_));
  if (pixels_.size() != labels_.size() * static_cast<size_t>(height_) * width_ * channels_)
    throw Error(source_ + ": image data does not match " + std::to_string(labels_.size()) + " images of " +
                std::to_string(height_) + "x" + std::to_string(width_) + "x" + std::to_string(channels_));
}

ImageSet ImageSet::loadIdxFolder(const fs::path& folder, Split split) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw Error(folder.string() +
                ": data folder not found (install the Debian package "
                "dataset-fashion-mnist, or give a folder of IDX files)");
  const std::string prefix = split == Split::Test ? "t10k" : "train";
  const fs::path imagesPath = findIdxFile(folder, prefix, "images");
  const fs::path labelsPath = findIdxFile(folder, prefix, "labels");
  IdxArray images = readIdxFile(imagesPath);
  const IdxArray labels = readIdxFile(labelsPath);
  if (images.dims.size() != 3)
    throw Error(imagesPath.string() + ": expected images of rank 3 (count, rows, columns), found rank " +
                std::to_string(images.dims.size()));
  if (labels.dims.size() != 1)
    throw Error(labelsPath.string() + ": expected labels of rank 1, found rank " + std::to_string(labels.dims.size()));
  if (images.dims[0] != labels.dims[0])
    throw Error(folder.string() + ": " + std::to_string(images.dims[0]) + " images but " +
                std::to_string(labels.dims[0]) + " labels");
  if (images.dims[1] > 4096 || images.dims[2] > 4096)
    throw Error(imagesPath.string() + ": images of " + std::to_string(images.dims[1]) + "x" +
                std::to_string(images.dims[2]) + " are too large for this tool");

  std::vector<std::string> classNames = looksLikeDigits(folder) ? digitClassNames() : fashionMnistClassNames();
  std::vector<int> labelValues(labels.values.begin(), labels.values.end());
  for (size_t i = 0; i < labelValues.size(); ++i)
    if (labelValues[i] >= static_cast<int>(classNames.size()))
      throw Error(labelsPath.string() + ": label " + std::to_string(labelValues[i]) + " of image " + std::to_string(i) +
                  " is outside the 10 classes");

  // x / 255 in float, as the training script does, so inputs match bit for bit.
  std::vector<float> pixels(images.values.size());
  std::transform(images.values.begin(), images.values.end(), pixels.begin(),
                 [](uint8_t v) { return static_cast<float>(v) / 255.0f; });
  ImageSet set(folder.string(), static_cast<int>(images.dims[1]), static_cast<int>(images.dims[2]), std::move(pixels),
               std::move(labelValues), std::move(classNames));
  set.bytes_ = std::move(images.values);
  return set;
}

ImageSet ImageSet::loadIdxImages(const fs::path& folder, Split split) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw Error(folder.string() +
                ": data folder not found (install the Debian package "
                "dataset-fashion-mnist, or give a folder of IDX files)");
  const fs::path imagesPath = findIdxFile(folder, split == Split::Test ? "t10k" : "train", "images");
  IdxArray images = readIdxFile(imagesPath);
  if (images.dims.size() != 3)
    throw Error(imagesPath.string() + ": expected images of rank 3 (count, rows, columns), found rank " +
                std::to_string(images.dims.size()));
  if (images.dims[1] > 4096 || images.dims[2] > 4096)
    throw Error(imagesPath.string() + ": images of " + std::to_string(images.dims[1]) + "x" +
                std::to_string(images.dims[2]) + " are too large for this tool");
  std::vector<float> pixels(images.values.size());
  std::transform(images.values.begin(), images.values.end(), pixels.begin(),
                 [](uint8_t v) { return static_cast<float>(v) / 255.0f; });
  ImageSet set(folder.string(), static_cast<int>(images.dims[1]), static_cast<int>(images.dims[2]), std::move(pixels),
               std::vector<int>(static_cast<size_t>(images.dims[0]), kNoLabel),
               looksLikeDigits(folder) ? digitClassNames() : fashionMnistClassNames());
  set.bytes_ = std::move(images.values);
  return set;
}

const uint8_t* ImageSet::bytes(int first) const {
  if (bytes_.empty()) throw Error(source_ + ": these images have no 8-bit form (only the IDX data set has)");
  if (first < 0 || first >= count())
    throw Error("image index " + std::to_string(first) + " is outside 0.." + std::to_string(count() - 1));
  return bytes_.data() + static_cast<size_t>(first) * height_ * width_;
}

Tensor batchFromBytes(const uint8_t* pixels, int count, int height, int width, int outHeight, int outWidth) {
  if (!pixels || count < 1 || height < 1 || width < 1 || outHeight < 1 || outWidth < 1)
    throw Error("8-bit images: " + std::to_string(count) + " of " + std::to_string(height) + "x" +
                std::to_string(width) + " cannot form a batch");
  const size_t inPerImage = static_cast<size_t>(height) * width;
  return resizedBatch(count, 1, height, width, outHeight, outWidth, Preprocessing{},
                      [&](int i, std::vector<float>& image) {
                        image.resize(inPerImage);
                        const uint8_t* src = pixels + inPerImage * static_cast<size_t>(i);
                        for (size_t p = 0; p < inPerImage; ++p) image[p] = static_cast<float>(src[p]) / 255.0f;
                        return image.data();
                      });
}

ImageSet ImageSet::fromImages(std::string source, const std::vector<Picture>& images,
                              std::vector<std::string> classNames, std::vector<int> labels) {
  if (images.empty()) throw Error(source + ": no images");
  if (!labels.empty() && labels.size() != images.size())
    throw Error(source + ": " + std::to_string(labels.size()) + " labels for " + std::to_string(images.size()) +
                " images");
  const int height = images.front().height;
  const int width = images.front().width;
  const int channels = images.front().channels;
  std::vector<float> pixels;
  for (const Picture& image : images) {
    if (image.height != height || image.width != width || image.channels != channels)
      throw Error(source + ": images must share one size and channel count to form a set");
    pixels.insert(pixels.end(), image.pixels.begin(), image.pixels.end());
  }
  if (labels.empty()) labels.assign(images.size(), kNoLabel);
  return ImageSet(std::move(source), height, width, std::move(pixels), std::move(labels), std::move(classNames),
                  channels);
}

bool ImageSet::hasLabels() const {
  return std::any_of(labels_.begin(), labels_.end(), [](int l) { return l != kNoLabel; });
}

Picture ImageSet::image(int index) const {
  if (index < 0 || index >= count())
    throw Error("image index " + std::to_string(index) + " is outside 0.." + std::to_string(count() - 1));
  const size_t valuesPerImage = static_cast<size_t>(height_) * width_ * channels_;
  const auto begin = pixels_.begin() + static_cast<std::ptrdiff_t>(valuesPerImage * index);
  return Picture{height_, width_, std::vector<float>(begin, begin + static_cast<std::ptrdiff_t>(valuesPerImage)),
                 channels_};
}

Tensor ImageSet::batch(int first, int count, int height, int width, const Preprocessing& preprocessing) const {
  if (first < 0 || count < 1 || first + count > this->count())
    throw Error("images " + std::to_string(first) + ".." + std::to_string(first + count - 1) + " requested but " +
                source_ + " holds " + std::to_string(this->count()));
  const size_t inPerImage = static_cast<size_t>(height_) * width_ * channels_;
  return resizedBatch(count, channels_, height_, width_, height, width, preprocessing, [&](int i, std::vector<float>&) {
    return pixels_.data() + inPerImage * static_cast<size_t>(first + i);
  });
}

}  // namespace convscope
