#include "data/image_file.h"

#include "util/error.h"

#ifdef CONVSCOPE_HAVE_OPENCV
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace convscope {

#ifdef CONVSCOPE_HAVE_OPENCV

bool imageFilesSupported() { return true; }

GrayImage loadImageFile(const std::filesystem::path& path, bool invert) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(path.string() + ": file not found");
  cv::Mat decoded;
  try {
    decoded = cv::imread(path.string(), cv::IMREAD_GRAYSCALE | cv::IMREAD_ANYDEPTH);
  } catch (const cv::Exception& e) {
    throw Error(path.string() + ": cannot decode image (" + e.what() + ")");
  }
  if (decoded.empty())
    throw Error(path.string() + ": not an image OpenCV can read (PNG, JPEG, BMP, TIFF, PGM ...)");
  cv::Mat gray;
  const double scale = decoded.depth() == CV_16U ? 1.0 / 65535.0 : decoded.depth() == CV_8U ? 1.0 / 255.0 : 1.0;
  decoded.convertTo(gray, CV_32F, scale);
  GrayImage image{gray.rows, gray.cols, std::vector<float>(static_cast<size_t>(gray.total()))};
  for (int y = 0; y < gray.rows; ++y)
    for (int x = 0; x < gray.cols; ++x) {
      const float v = std::min(1.0f, std::max(0.0f, gray.at<float>(y, x)));
      image.pixels[static_cast<size_t>(y) * gray.cols + x] = invert ? 1.0f - v : v;
    }
  return image;
}

#else

bool imageFilesSupported() { return false; }

GrayImage loadImageFile(const std::filesystem::path& path, bool) {
  throw Error(path.string() + ": this build of ConvScope has no OpenCV, so it cannot read image "
              "files; use IDX data (--data) or rebuild with OpenCV");
}

#endif

}  // namespace convscope
