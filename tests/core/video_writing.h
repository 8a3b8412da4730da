// Videos the tests write themselves, with OpenCV's own MJPEG writer (cv::CAP_OPENCV_MJPEG, in an
// AVI): it is in every Debian OpenCV, needs no codec package, and keeps an odd frame size (FFmpeg's
// MJPEG encoder rounds 37x29 down to 36x28). The tests that include this link OpenCV's core,
// imgproc, imgcodecs and videoio themselves (tests/CMakeLists.txt), as the core keeps it private.
#pragma once

#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "app/core/data/image_set.h"

namespace convscope::testing {

// Writes `frames` (8-bit, all of one size; B, G, R or all gray) as an MJPEG AVI at
// `framesPerSecond` (a whole number: the writer stores it so).
inline void writeVideo(const std::filesystem::path& file, const std::vector<cv::Mat>& frames, double framesPerSecond) {
  ASSERT_FALSE(frames.empty());
  const bool colour = frames.front().channels() == 3;
  cv::VideoWriter writer(file.string(), cv::CAP_OPENCV_MJPEG, cv::VideoWriter::fourcc('M', 'J', 'P', 'G'),
                         framesPerSecond, frames.front().size(), colour);
  ASSERT_TRUE(writer.isOpened()) << "OpenCV cannot write " << file;
  // OpenCV's default quality (95): at 100 its encoder writes codes FFmpeg reports as errors.
  for (const cv::Mat& frame : frames) writer.write(frame);
}

// Frame k of the tests' moving picture: a smooth gray ramp, 3 levels a column and 2 a row,
// shifted by 8 levels a frame (so any two frames differ by at least 8 levels at every pixel),
// at most 3 * 36 + 2 * 28 + 8 * 11 = 252 for 37x29 and 12 frames: nothing clips. Frame
// `colourFrame` is in colour instead: R the ramp, G its mirror (255 - ramp), B a constant 60.
inline cv::Mat rampFrame(int k, int width, int height, int colourFrame = -1) {
  cv::Mat frame(height, width, CV_8UC3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const auto ramp = static_cast<uint8_t>(std::min(255, 3 * x + 2 * y + 8 * k));
      frame.at<cv::Vec3b>(y, x) =
          k == colourFrame ? cv::Vec3b(60, static_cast<uint8_t>(255 - ramp), ramp) : cv::Vec3b(ramp, ramp, ramp);
    }
  return frame;
}

// Test images first .. first + count - 1 of the set as 8-bit frames (x * 255, rounded), in three
// equal channels: OpenCV's MJPEG writer in gray mode (isColor false) writes frames that FFmpeg
// decodes with errors, several levels off; in colour the chroma is zero and survives exactly.
inline std::vector<cv::Mat> testImageFrames(const ImageSet& images, int first, int count) {
  std::vector<cv::Mat> frames;
  for (int i = first; i < first + count; ++i) {
    const Tensor one = images.batch(i, 1, images.height(), images.width());
    cv::Mat frame(images.height(), images.width(), CV_8UC1);
    for (int p = 0; p < images.height() * images.width(); ++p)
      frame.data[p] = static_cast<uint8_t>(std::lround(one.values()[static_cast<size_t>(p)] * 255.0f));
    cv::Mat colour;
    cv::cvtColor(frame, colour, cv::COLOR_GRAY2BGR);
    frames.push_back(colour);
  }
  return frames;
}

// The frames of a video decoded by FFmpeg directly (what VideoSource reads, without it), gray.
inline std::vector<cv::Mat> decodeGrayFrames(const std::filesystem::path& file) {
  std::vector<cv::Mat> frames;
  cv::VideoCapture video(file.string(), cv::CAP_FFMPEG);
  EXPECT_TRUE(video.isOpened()) << file;
  for (cv::Mat frame; video.read(frame);) {
    cv::Mat gray;
    cv::cvtColor(frame, gray, cv::COLOR_BGR2GRAY);
    frames.push_back(gray);
  }
  return frames;
}

}  // namespace convscope::testing
