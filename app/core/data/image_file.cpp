#include "app/core/data/image_file.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "app/core/util/error.h"
#include "app/core/util/input_file.h"

#ifdef CONVSCOPE_HAVE_OPENCV
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace convscope {

#ifdef CONVSCOPE_HAVE_OPENCV

namespace {

// Why the size is read here and not by OpenCV: imread/imdecode allocate the whole picture as
// soon as the decoder has read the header, and the only cap OpenCV has, the environment variable
// OPENCV_IO_MAX_IMAGE_PIXELS (default 2^30 pixels, 1 GB gray or 4.3 GB as float), is read once
// when the library loads and cannot be lowered from a running program. Its decoders' header
// readers are not public API. The header fields that give a picture's size are few and simple
// in every format ConvScope accepts, so they are parsed here from the file's bytes, and a file
// of any other format is refused rather than decoded blind.
struct ImageSize {
  std::string format;
  uint64_t width = 0;
  uint64_t height = 0;
};

class Bytes {
 public:
  explicit Bytes(const std::string& data) : data_(data) {}
  size_t size() const { return data_.size(); }
  bool has(size_t offset, size_t count) const { return offset <= data_.size() && count <= data_.size() - offset; }
  uint8_t at(size_t i) const { return static_cast<uint8_t>(data_[i]); }
  uint32_t big16(size_t i) const { return (uint32_t{at(i)} << 8) | at(i + 1); }
  uint32_t big32(size_t i) const { return (big16(i) << 16) | big16(i + 2); }
  uint32_t little16(size_t i) const { return (uint32_t{at(i + 1)} << 8) | at(i); }
  uint32_t little32(size_t i) const { return (little16(i + 2) << 16) | little16(i); }
  uint32_t little24(size_t i) const { return (uint32_t{at(i + 2)} << 16) | little16(i); }
  bool startsWith(const char* text, size_t offset = 0) const {
    const size_t n = std::strlen(text);
    return has(offset, n) && data_.compare(offset, n, text) == 0;
  }

 private:
  const std::string& data_;
};

std::optional<ImageSize> pngSize(const Bytes& b) {
  if (!b.startsWith("\x89PNG\r\n\x1a\n")) return std::nullopt;
  if (!b.has(8, 16) || !b.startsWith("IHDR", 12)) return ImageSize{"PNG", 0, 0};
  return ImageSize{"PNG", b.big32(16), b.big32(20)};
}

std::optional<ImageSize> jpegSize(const Bytes& b) {
  if (!b.has(0, 3) || b.at(0) != 0xFF || b.at(1) != 0xD8 || b.at(2) != 0xFF) return std::nullopt;
  size_t i = 2;
  while (b.has(i, 4)) {
    if (b.at(i) != 0xFF) break;
    const uint8_t marker = b.at(i + 1);
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {  // markers without a length
      i += 2;
      continue;
    }
    const uint32_t length = b.big16(i + 2);
    const bool frame = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (frame) {
      if (!b.has(i + 4, 5)) break;
      return ImageSize{"JPEG", b.big16(i + 7), b.big16(i + 5)};
    }
    if (marker == 0xDA || marker == 0xD9 || length < 2) break;  // scan data or end before a frame
    i += 2 + length;
  }
  return ImageSize{"JPEG", 0, 0};
}

std::optional<ImageSize> bmpSize(const Bytes& b) {
  if (!b.startsWith("BM")) return std::nullopt;
  if (!b.has(14, 12)) return ImageSize{"BMP", 0, 0};
  if (b.little32(14) == 12) return ImageSize{"BMP", b.little16(18), b.little16(20)};  // OS/2 header
  const int64_t width = static_cast<int32_t>(b.little32(18));
  const int64_t height = static_cast<int32_t>(b.little32(22));  // negative: stored top-down
  return ImageSize{"BMP", static_cast<uint64_t>(width < 0 ? -width : width),
                   static_cast<uint64_t>(height < 0 ? -height : height)};
}

// PBM, PGM, PPM (P1-P6) and PFM (PF, Pf): magic, then width and height as decimal text,
// separated by white space and comments. PAM (P7): WIDTH and HEIGHT lines.
std::optional<ImageSize> pnmSize(const std::string& data) {
  const Bytes b(data);
  if (!b.has(0, 2) || data[0] != 'P' || !std::strchr("1234567Ff", data[1]) || data[1] == '\0') return std::nullopt;
  const std::string format = data[1] == '7' ? "PAM" : (data[1] == 'F' || data[1] == 'f') ? "PFM" : "PNM";
  // A header is short; only the first 4 kB are looked at.
  const size_t end = std::min<size_t>(data.size(), 4096);
  size_t i = 2;
  const auto number = [&](uint64_t& value) {
    while (i < end) {
      if (data[i] == '#') {
        while (i < end && data[i] != '\n') ++i;
      } else if (std::isspace(static_cast<unsigned char>(data[i]))) {
        ++i;
      } else {
        break;
      }
    }
    if (i >= end || !std::isdigit(static_cast<unsigned char>(data[i]))) return false;
    value = 0;
    for (; i < end && std::isdigit(static_cast<unsigned char>(data[i])); ++i) {
      if (value > (uint64_t{1} << 40)) return false;
      value = value * 10 + static_cast<uint64_t>(data[i] - '0');
    }
    return true;
  };
  ImageSize size{format, 0, 0};
  if (data[1] != '7') {
    if (!number(size.width) || !number(size.height)) return ImageSize{format, 0, 0};
    return size;
  }
  // Every WIDTH and HEIGHT in the header counts, and the largest wins: a decoder that takes the
  // last of two (or one hidden where this parser would not look) must not decode more than the
  // size checked here. Stricter than any decoder, never laxer.
  const std::string header = data.substr(0, end);
  for (const auto& [key, field] : {std::pair{"WIDTH", &size.width}, std::pair{"HEIGHT", &size.height}}) {
    for (size_t at = header.find(key); at != std::string::npos; at = header.find(key, at + 1)) {
      i = at + std::strlen(key);
      uint64_t value = 0;
      if (number(value)) *field = std::max(*field, value);
    }
    if (*field == 0) return ImageSize{format, 0, 0};
  }
  return size;
}

// TIFF: the first image file directory's ImageWidth (256) and ImageLength (257) tags.
std::optional<ImageSize> tiffSize(const Bytes& b) {
  const bool little = b.has(0, 4) && b.at(0) == 'I' && b.at(1) == 'I' && b.at(2) == 42 && b.at(3) == 0;
  const bool big = b.has(0, 4) && b.at(0) == 'M' && b.at(1) == 'M' && b.at(2) == 0 && b.at(3) == 42;
  if (!little && !big) return std::nullopt;
  const auto u16 = [&](size_t i) { return little ? b.little16(i) : b.big16(i); };
  const auto u32 = [&](size_t i) { return little ? b.little32(i) : b.big32(i); };
  ImageSize size{"TIFF", 0, 0};
  if (!b.has(4, 4)) return size;
  const size_t ifd = u32(4);
  if (!b.has(ifd, 2)) return size;
  const uint32_t entries = u16(ifd);
  // libtiff reads ImageWidth and ImageLength from any integer type, keeps the first of two equal
  // tags and warns about the rest: every occurrence counts here, and the largest wins, so no
  // order or type of the tags makes the decoder see a larger picture than the one checked. A
  // negative signed value reads as the largest size; a type this parser does not read makes the
  // size unknown (refused).
  constexpr uint64_t kNegative = std::numeric_limits<uint32_t>::max();
  const auto valueAt = [&](size_t at, uint32_t type) -> std::optional<uint64_t> {
    const uint64_t byte = b.at(at), half = u16(at), word = u32(at);
    if (type == 1) return byte;                                   // BYTE
    if (type == 6) return byte & 0x80 ? kNegative : byte;         // SBYTE
    if (type == 3) return half;                                   // SHORT
    if (type == 8) return half & 0x8000 ? kNegative : half;       // SSHORT
    if (type == 4) return word;                                   // LONG
    if (type == 9) return word & 0x80000000u ? kNegative : word;  // SLONG
    return std::nullopt;
  };
  for (uint32_t e = 0; e < entries; ++e) {
    const size_t at = ifd + 2 + 12 * size_t{e};
    if (!b.has(at, 12)) break;
    const uint32_t tag = u16(at);
    if (tag != 256 && tag != 257) continue;
    const std::optional<uint64_t> value = valueAt(at + 8, u16(at + 2));
    if (!value) return ImageSize{"TIFF", 0, 0};
    uint64_t& field = tag == 256 ? size.width : size.height;
    field = std::max(field, *value);
  }
  return size;
}

std::optional<ImageSize> webpSize(const Bytes& b) {
  if (!b.startsWith("RIFF") || !b.startsWith("WEBP", 8)) return std::nullopt;
  ImageSize size{"WebP", 0, 0};
  if (b.startsWith("VP8X", 12) && b.has(24, 6)) {
    size.width = uint64_t{b.little24(24)} + 1;
    size.height = uint64_t{b.little24(27)} + 1;
  } else if (b.startsWith("VP8L", 12) && b.has(21, 4) && b.at(20) == 0x2F) {
    const uint32_t bits = b.little32(21);
    size.width = (bits & 0x3FFF) + 1;
    size.height = ((bits >> 14) & 0x3FFF) + 1;
  } else if (b.startsWith("VP8 ", 12) && b.has(26, 4)) {
    size.width = b.little16(26) & 0x3FFF;
    size.height = b.little16(28) & 0x3FFF;
  }
  return size;
}

ImageSize readImageSize(const std::string& data, const std::string& name) {
  const Bytes b(data);
  for (const auto& parse : {pngSize, jpegSize, bmpSize, tiffSize, webpSize})
    if (std::optional<ImageSize> size = parse(b)) return *size;
  if (std::optional<ImageSize> size = pnmSize(data)) return *size;
  throw Error(name + ": not an image file ConvScope reads (PNG, JPEG, BMP, PNM/PGM, TIFF or WebP)");
}

std::string megapixels(uint64_t pixels) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f megapixels", static_cast<double>(pixels) / 1e6);
  return text;
}

}  // namespace

bool imageFilesSupported() {
  return true;
}

std::string stillPictureFormatOf(const std::string& head) {
  const Bytes b(head);
  for (const auto& parse : {pngSize, jpegSize, bmpSize, tiffSize, webpSize})
    if (std::optional<ImageSize> size = parse(b)) return size->format;
  if (std::optional<ImageSize> size = pnmSize(head)) return size->format;
  return {};
}

Picture pictureOfDecoded(const cv::Mat& decoded, int channels, bool invert, const std::string& name) {
  if (decoded.channels() != channels)
    throw Error(name + ": decodes to " + std::to_string(decoded.channels()) + " channels, not " +
                std::to_string(channels));
  cv::Mat values = decoded;
  if (values.depth() != CV_8U && values.depth() != CV_16U && values.depth() != CV_32F) values.convertTo(values, CV_32F);
  const double scale = values.depth() == CV_16U ? 1.0 / 65535.0 : values.depth() == CV_8U ? 1.0 / 255.0 : 1.0;
  Picture image = blankPicture(values.rows, values.cols, channels);
  for (int y = 0; y < values.rows; ++y)
    for (int x = 0; x < values.cols; ++x)
      for (int c = 0; c < channels; ++c) {
        // OpenCV's channel 0 is blue: R, G, B planes take its channels 2, 1, 0.
        const int from = channels == 3 ? 2 - c : 0;
        const double raw = values.depth() == CV_8U    ? values.ptr<uint8_t>(y)[x * channels + from]
                           : values.depth() == CV_16U ? values.ptr<uint16_t>(y)[x * channels + from]
                                                      : values.ptr<float>(y)[x * channels + from];
        // 8-bit values as the data set's x / 255 in float, so a picture equals its IDX bytes.
        const float v = values.depth() == CV_8U ? static_cast<float>(raw) / 255.0f
                                                : std::min(1.0f, std::max(0.0f, static_cast<float>(raw * scale)));
        image.plane(c)[static_cast<size_t>(y) * values.cols + x] = invert ? 1.0f - v : v;
      }
  return image;
}

Picture loadImageFile(const std::filesystem::path& path, bool invert, int channels) {
  if (channels != 1 && channels != 3)
    throw Error(path.string() + ": pictures are decoded to 1 or 3 channels, not " + std::to_string(channels));
  InputFile file(path, "an image file", kMaxImageFileBytes);
  const std::string data = file.readAll();
  const std::string& name = file.name();
  const ImageSize size = readImageSize(data, name);
  if (size.width == 0 || size.height == 0)
    throw Error(name + ": a " + size.format + " file whose header gives no picture size (truncated or corrupt)");
  // Both are at most 2^32, so the product cannot overflow.
  const uint64_t pixels = size.width * size.height;
  if (pixels > kMaxImagePixels)
    throw Error(name + ": the " + size.format + " picture is " + std::to_string(size.width) + "x" +
                std::to_string(size.height) + " (" + megapixels(pixels) + "); ConvScope decodes pictures of at most " +
                megapixels(kMaxImagePixels) + " (kMaxImagePixels)");

  cv::Mat decoded;
  try {
    const cv::Mat buffer(1, static_cast<int>(data.size()), CV_8U, const_cast<char*>(data.data()));
    // IMREAD_COLOR gives B, G, R: from gray by repeating it, from CMYK JPEGs by libjpeg's
    // conversion, from RGBA by dropping the alpha.
    decoded = cv::imdecode(buffer, (channels == 1 ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR) | cv::IMREAD_ANYDEPTH);
  } catch (const cv::Exception& e) {
    throw Error(name + ": cannot decode image (" + e.what() + ")");
  }
  if (decoded.empty()) throw Error(name + ": a " + size.format + " file OpenCV cannot decode (truncated or corrupt)");
  // The header was checked; the decoder must agree (EXIF rotation may swap the sides).
  if (decoded.total() > kMaxImagePixels) throw Error(name + ": decodes to more pixels than its header says");
  return pictureOfDecoded(decoded, channels, invert, name);
}

#else

bool imageFilesSupported() {
  return false;
}

Picture loadImageFile(const std::filesystem::path& path, bool, int) {
  // What is at the path comes first: a folder named x.png is a folder, here too.
  const InputFile file(path, "an image file", kMaxImageFileBytes);
  throw Error(file.name() +
              ": this build of ConvScope has no OpenCV, so it cannot read image "
              "files; use IDX data (--data) or rebuild with OpenCV");
}

#endif

bool hasLightBackground(const Picture& image) {
  if (image.width == 0 || image.height == 0) return false;
  double border = 0.0;
  int count = 0;
  for (int c = 0; c < image.channels; ++c) {
    for (int x = 0; x < image.width; ++x) border += image.at(c, 0, x) + image.at(c, image.height - 1, x), count += 2;
    for (int y = 0; y < image.height; ++y) border += image.at(c, y, 0) + image.at(c, y, image.width - 1), count += 2;
  }
  return border / count > 0.5;
}

DataSetPicture invertedByRule(Picture picture, PictureInversion inversion) {
  DataSetPicture result;
  result.image = std::move(picture);
  result.inverted = inversion == PictureInversion::Always ||
                    (inversion == PictureInversion::Automatic && hasLightBackground(result.image));
  if (result.inverted)
    for (float& v : result.image.pixels) v = 1.0f - v;
  return result;
}

DataSetPicture loadPictureForDataSet(const std::filesystem::path& path, PictureInversion inversion, int channels) {
  return invertedByRule(loadImageFile(path, false, channels), inversion);
}

}  // namespace convscope
