// A live picture source: a video file or a camera, read frame by frame through OpenCV's
// VideoCapture (FFmpeg for files, the system's camera backend for a camera index). Each frame
// becomes a Picture as an image file does (pictureOfDecoded: gray for a 1-channel model, R, G, B
// for a 3-channel one, values in [0, 1]), so what follows -- the inversion rule, the framing to
// the model's input, the model's values -- is the path of `classify --images` and the window's
// opened pictures. One frame is decoded at a time; a frame larger than kMaxImagePixels is refused
// before the first one is decoded, as loadImageFile refuses such a picture.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "app/core/data/picture.h"

namespace convscope {

struct VideoFrame {
  Picture picture;
  int64_t index = 0;     // 0 for the first frame of the file or of the camera's stream
  double seconds = 0.0;  // where it lies in the video: index / frame rate, else the decoder's time stamp
};

class VideoSource {
 public:
  // True when this build reads videos (it has OpenCV's videoio).
  static bool supported();

  // Opens a video file and decodes its first frame. Throws convscope::Error naming the file and
  // the problem: missing or not a regular file, empty, a still picture (PNG, JPEG, ...) under a
  // video's name, not a video FFmpeg reads, frames larger than kMaxImagePixels, no frames, or a
  // build without videos. `channels` is 1 (gray) or 3 (R, G, B).
  static VideoSource openFile(const std::filesystem::path& path, int channels);
  // Opens camera `index` (0: the first, /dev/video0 on Linux) and reads its first frame. Throws
  // convscope::Error naming the camera when it cannot be opened or gives no frame.
  static VideoSource openCamera(int index, int channels);

  VideoSource(VideoSource&&) noexcept;
  VideoSource& operator=(VideoSource&&) noexcept;
  ~VideoSource();

  // "chelsea.mp4" (the path as given) or "camera 0": what messages and outputs call it.
  const std::string& name() const { return name_; }
  bool isCamera() const { return camera_; }
  int width() const { return width_; }
  int height() const { return height_; }
  int channels() const { return channels_; }
  // What the file's header says, where it says it (a camera, and some containers, do not).
  std::optional<int64_t> frameCount() const { return frameCount_; }
  std::optional<double> framesPerSecond() const { return framesPerSecond_; }

  // The next frame, or nothing at the end of the video (a camera: when it stops giving frames).
  // Throws convscope::Error naming the source when a frame cannot be decoded or is larger than
  // the first one's size allowed.
  std::optional<VideoFrame> next();
  // Passes over up to `count` frames without converting them (the codec still decodes what the
  // next frame depends on); returns how many there were before the end.
  int64_t skip(int64_t count);

 private:
  struct Capture;  // OpenCV's VideoCapture, out of this header
  VideoSource(std::string name, bool camera, int channels);
  std::optional<VideoFrame> convertCurrent();

  std::unique_ptr<Capture> capture_;
  std::string name_;
  bool camera_ = false;
  int channels_ = 1;
  int width_ = 0, height_ = 0;
  std::optional<int64_t> frameCount_;
  std::optional<double> framesPerSecond_;
  int64_t nextIndex_ = 0;                 // the index of the frame next() returns
  std::optional<VideoFrame> firstFrame_;  // decoded when opened (to refuse a video without frames)
};

}  // namespace convscope
