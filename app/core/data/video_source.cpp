#include "app/core/data/video_source.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "app/core/data/image_file.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"

#ifdef CONVSCOPE_HAVE_OPENCV
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#endif

namespace convscope {

namespace {

void checkChannels(const std::string& name, int channels) {
  if (channels != 1 && channels != 3)
    throw Error(name + ": frames are decoded to 1 or 3 channels, not " + std::to_string(channels));
}

}  // namespace

#ifdef CONVSCOPE_HAVE_OPENCV

struct VideoSource::Capture {
  cv::VideoCapture video;
  cv::Mat frame;  // the decoder's last frame, B, G, R
};

namespace {

// A video is read one frame at a time, so its file's size costs no memory: no limit but the
// file system's. (InputFile still checks that it is a regular file, not a FIFO or a device.)
constexpr uint64_t kAnyVideoFileSize = std::numeric_limits<uint64_t>::max();

std::string megapixelsOf(uint64_t pixels) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f megapixels", static_cast<double>(pixels) / 1e6);
  return text;
}

// What the decoder's properties say, where they say something: FFmpeg gives -2^63 or 0 for a
// frame count it does not know, and 0 or NaN for a missing frame rate.
std::optional<int64_t> knownCount(double value) {
  if (!std::isfinite(value) || value < 1 || value > 1e12) return std::nullopt;
  return static_cast<int64_t>(std::llround(value));
}
std::optional<double> knownRate(double value) {
  if (!std::isfinite(value) || value <= 0 || value > 1e6) return std::nullopt;
  return value;
}

}  // namespace

bool VideoSource::supported() {
  return true;
}

VideoSource::VideoSource(std::string name, bool camera, int channels)
    : capture_(std::make_unique<Capture>()), name_(std::move(name)), camera_(camera), channels_(channels) {}

VideoSource VideoSource::openFile(const std::filesystem::path& path, int channels) {
  checkChannels(path.string(), channels);
  std::string head;
  {
    // What is at the path first: "file not found", a folder, a FIFO are said as for any input.
    InputFile file(path, "a video file", kAnyVideoFileSize);
    if (file.size() == 0) throw Error(file.name() + ": an empty file, not a video");
    head.resize(64);
    head.resize(file.read(head.data(), head.size()));
  }
  const std::string name = path.string();
  // FFmpeg reads a still picture as a video of one frame; a picture renamed .mp4 is a mistake
  // worth saying, and the window and `classify --images` read pictures as pictures.
  if (const std::string format = stillPictureFormatOf(head); !format.empty())
    throw Error(name + ": a " + format + " picture, not a video (open it as an image)");

  VideoSource source(name, false, channels);
  cv::VideoCapture& video = source.capture_->video;
  try {
    // FFmpeg only: OpenCV's other backends would read a name with %d as a numbered picture series.
    video.open(name, cv::CAP_FFMPEG);
  } catch (const cv::Exception& e) {
    throw Error(name + ": cannot open the video (" + e.what() + ")");
  }
  if (!video.isOpened())
    throw Error(name + ": not a video file FFmpeg reads (no container or video stream it knows; truncated?)");
  source.frameCount_ = knownCount(video.get(cv::CAP_PROP_FRAME_COUNT));
  source.framesPerSecond_ = knownRate(video.get(cv::CAP_PROP_FPS));
  source.width_ = static_cast<int>(video.get(cv::CAP_PROP_FRAME_WIDTH));
  source.height_ = static_cast<int>(video.get(cv::CAP_PROP_FRAME_HEIGHT));
  // Before the first frame is decoded: a 100000 x 100000 frame would take 30 GB as 8-bit B, G, R.
  const uint64_t pixels = static_cast<uint64_t>(std::max(0, source.width_)) * std::max(0, source.height_);
  if (pixels > kMaxImagePixels)
    throw Error(name + ": its frames are " + std::to_string(source.width_) + "x" + std::to_string(source.height_) +
                " (" + megapixelsOf(pixels) + "); ConvScope decodes pictures of at most " +
                megapixelsOf(kMaxImagePixels) + " (kMaxImagePixels)");
  source.firstFrame_ = source.convertCurrent();
  if (!source.firstFrame_) throw Error(name + ": holds no frames (FFmpeg opened it, but it has no frame to decode)");
  return source;
}

VideoSource VideoSource::openCamera(int index, int channels) {
  const std::string name = "camera " + std::to_string(index);
  checkChannels(name, channels);
  if (index < 0) throw Error(name + ": camera numbers start at 0");
  VideoSource source(name, true, channels);
  cv::VideoCapture& video = source.capture_->video;
  try {
#ifdef __linux__
    // A Linux camera (a laptop's, a USB one) is a V4L2 device, /dev/videoN. Any backend would
    // also probe FireWire cameras through libdc1394, which lists the USB devices with libusb and
    // never frees the list (22,542 bytes in 5,007 allocations, seen by LeakSanitizer).
    video.open(index, cv::CAP_V4L2);
#else
    video.open(index, cv::CAP_ANY);
#endif
  } catch (const cv::Exception& e) {
    throw Error(name + ": cannot be opened (" + e.what() + ")");
  }
  if (!video.isOpened())
    throw Error(name + ": cannot be opened (no such camera, or it is in use or not allowed; on Linux: /dev/video" +
                std::to_string(index) + ")");
  source.framesPerSecond_ = knownRate(video.get(cv::CAP_PROP_FPS));
  source.width_ = static_cast<int>(video.get(cv::CAP_PROP_FRAME_WIDTH));
  source.height_ = static_cast<int>(video.get(cv::CAP_PROP_FRAME_HEIGHT));
  source.firstFrame_ = source.convertCurrent();
  if (!source.firstFrame_) throw Error(name + ": opened, but it gives no picture");
  return source;
}

std::optional<VideoFrame> VideoSource::convertCurrent() {
  cv::Mat& frame = capture_->frame;
  try {
    if (!capture_->video.read(frame) || frame.empty()) return std::nullopt;
  } catch (const cv::Exception& e) {
    throw Error(name_ + ": frame " + std::to_string(nextIndex_) + " cannot be decoded (" + e.what() + ")");
  }
  // The header's size was checked; a stream may change size midway, and the decoder's word counts.
  if (frame.total() > kMaxImagePixels)
    throw Error(name_ + ": frame " + std::to_string(nextIndex_) + " is " + std::to_string(frame.cols) + "x" +
                std::to_string(frame.rows) + ", more than the " + megapixelsOf(kMaxImagePixels) + " ConvScope decodes");
  VideoFrame result;
  result.index = nextIndex_++;
  if (framesPerSecond_ && !camera_)
    result.seconds = static_cast<double>(result.index) / *framesPerSecond_;
  else
    result.seconds = capture_->video.get(cv::CAP_PROP_POS_MSEC) / 1000.0;
  // As a picture file is decoded (IMREAD_GRAYSCALE converts colour with the same BT.601 weights).
  if (channels_ == 1 && frame.channels() == 3) cv::cvtColor(frame, frame, cv::COLOR_BGR2GRAY);
  if (channels_ == 1 && frame.channels() == 4) cv::cvtColor(frame, frame, cv::COLOR_BGRA2GRAY);
  if (channels_ == 3 && frame.channels() == 1) cv::cvtColor(frame, frame, cv::COLOR_GRAY2BGR);
  if (channels_ == 3 && frame.channels() == 4) cv::cvtColor(frame, frame, cv::COLOR_BGRA2BGR);
  result.picture = pictureOfDecoded(frame, channels_, false, name_ + ", frame " + std::to_string(result.index));
  return result;
}

std::optional<VideoFrame> VideoSource::next() {
  if (firstFrame_) return std::exchange(firstFrame_, std::nullopt);
  return convertCurrent();
}

int64_t VideoSource::skip(int64_t count) {
  int64_t skipped = 0;
  if (count > 0 && firstFrame_) {
    firstFrame_.reset();
    ++skipped;
  }
  try {
    // grab() decodes no picture for output: the frames are passed over without conversion.
    for (; skipped < count && capture_->video.grab(); ++skipped) ++nextIndex_;
  } catch (const cv::Exception& e) {
    throw Error(name_ + ": frame " + std::to_string(nextIndex_) + " cannot be read (" + e.what() + ")");
  }
  return skipped;
}

#else

struct VideoSource::Capture {};

bool VideoSource::supported() {
  return false;
}

VideoSource::VideoSource(std::string name, bool camera, int channels)
    : name_(std::move(name)), camera_(camera), channels_(channels) {}

VideoSource VideoSource::openFile(const std::filesystem::path& path, int channels) {
  checkChannels(path.string(), channels);
  // What is at the path comes first, as for image files: a missing file is said to be missing.
  const InputFile file(path, "a video file", std::numeric_limits<uint64_t>::max());
  throw Error(file.name() +
              ": this build of ConvScope has no OpenCV, so it reads no videos; rebuild with OpenCV "
              "(its videoio module)");
}

VideoSource VideoSource::openCamera(int index, int) {
  throw Error("camera " + std::to_string(index) +
              ": this build of ConvScope has no OpenCV, so it reads no videos or cameras; rebuild with OpenCV "
              "(its videoio module)");
}

std::optional<VideoFrame> VideoSource::convertCurrent() {
  return std::nullopt;
}

std::optional<VideoFrame> VideoSource::next() {
  return std::nullopt;
}

int64_t VideoSource::skip(int64_t) {
  return 0;
}

#endif

VideoSource::VideoSource(VideoSource&&) noexcept = default;
VideoSource& VideoSource::operator=(VideoSource&&) noexcept = default;
VideoSource::~VideoSource() = default;

}  // namespace convscope
