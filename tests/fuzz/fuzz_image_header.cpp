// libFuzzer target: arbitrary bytes as an image file. The size is read from the header by
// ConvScope's own parsers (PNG, JPEG, BMP, PNM, TIFF, WebP) before OpenCV decodes anything; they
// must never read out of bounds, and no input may make the decoder allocate more than
// -rss_limit_mb. loadImageFile and loadPictureForDataSet (which also judges the border: light or
// dark) must return or throw convscope::Error.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/core/data/image_file.h"
#include "app/core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = [] {
    const int created = memfd_create("fuzz-image", 0);
    if (created < 0) std::abort();
    return created;
  }();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  try {
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    const convscope::Picture image = convscope::loadImageFile(path, false);
    if (static_cast<uint64_t>(image.width) * image.height > convscope::kMaxImagePixels) std::abort();
    const convscope::DataSetPicture picture =
        convscope::loadPictureForDataSet(path, convscope::PictureInversion::Automatic);
    if (picture.inverted != convscope::hasLightBackground(image)) std::abort();
  } catch (const convscope::Error&) {
  }
  return 0;
}
