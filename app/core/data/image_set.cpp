#include "app/core/data/image_set.h"

#include <algorithm>
#include <cstdlib>

#include "app/core/data/idx_file.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"
#include "app/core/util/omp_exceptions.h"

namespace convscope {
namespace {

// Images [0, count) resized to outHeight x outWidth as one N x 1 x H x W batch. Images are
// independent: the cores share them out (10,000 resized images are otherwise a noticeable part of
// a fast variant's classify). `imageAt(i, scratch)` gives image i's floats (in `scratch` if it
// must make them). The resize allocates its taps, so a failure is carried out of the parallel
// region.
template <typename ImageAt>
Tensor resizedBatch(int count, int height, int width, int outHeight, int outWidth, ImageAt imageAt) {
  Tensor out({count, 1, outHeight, outWidth});
  const size_t outPerImage = static_cast<size_t>(outHeight) * outWidth;
  OmpExceptions errors;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < count; ++i)
    errors.run([&] {
      std::vector<float> scratch;
      resizeBilinearHalfPixel(imageAt(i, scratch), height, width, out.data() + outPerImage * static_cast<size_t>(i),
                              outHeight, outWidth);
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
                   std::vector<std::string> classNames)
    : source_(std::move(source)),
      height_(height),
      width_(width),
      pixels_(std::move(pixels)),
      labels_(std::move(labels)),
      classNames_(std::move(classNames)) {
  if (pixels_.size() != labels_.size() * static_cast<size_t>(height_) * width_)
    throw Error(source_ + ": image data does not match " + std::to_string(labels_.size()) + " images of " +
                std::to_string(height_) + "x" + std::to_string(width_));
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
  return resizedBatch(count, height, width, outHeight, outWidth, [&](int i, std::vector<float>& image) {
    image.resize(inPerImage);
    const uint8_t* src = pixels + inPerImage * static_cast<size_t>(i);
    for (size_t p = 0; p < inPerImage; ++p) image[p] = static_cast<float>(src[p]) / 255.0f;
    return image.data();
  });
}

ImageSet ImageSet::fromImages(std::string source, const std::vector<GrayImage>& images,
                              std::vector<std::string> classNames) {
  if (images.empty()) throw Error(source + ": no images");
  const int height = images.front().height;
  const int width = images.front().width;
  std::vector<float> pixels;
  for (const GrayImage& image : images) {
    if (image.height != height || image.width != width)
      throw Error(source + ": images must share one size to form a set");
    pixels.insert(pixels.end(), image.pixels.begin(), image.pixels.end());
  }
  return ImageSet(std::move(source), height, width, std::move(pixels), std::vector<int>(images.size(), kNoLabel),
                  std::move(classNames));
}

bool ImageSet::hasLabels() const {
  return std::any_of(labels_.begin(), labels_.end(), [](int l) { return l != kNoLabel; });
}

GrayImage ImageSet::image(int index) const {
  if (index < 0 || index >= count())
    throw Error("image index " + std::to_string(index) + " is outside 0.." + std::to_string(count() - 1));
  const size_t pixelsPerImage = static_cast<size_t>(height_) * width_;
  const auto begin = pixels_.begin() + static_cast<std::ptrdiff_t>(pixelsPerImage * index);
  return GrayImage{height_, width_, std::vector<float>(begin, begin + static_cast<std::ptrdiff_t>(pixelsPerImage))};
}

Tensor ImageSet::batch(int first, int count, int height, int width) const {
  if (first < 0 || count < 1 || first + count > this->count())
    throw Error("images " + std::to_string(first) + ".." + std::to_string(first + count - 1) + " requested but " +
                source_ + " holds " + std::to_string(this->count()));
  const size_t inPerImage = static_cast<size_t>(height_) * width_;
  return resizedBatch(count, height_, width_, height, width, [&](int i, std::vector<float>&) {
    return pixels_.data() + inPerImage * static_cast<size_t>(first + i);
  });
}

}  // namespace convscope
