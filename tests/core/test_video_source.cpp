// VideoSource on videos the test writes itself (tests/core/video_writing.h): what the file says
// (frame count, rate, size), each frame's pixels against the written frame, the refusals, each
// naming the file, and a video of test images classified as the images themselves are.
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include <cmath>
#include <fstream>
#include <optional>
#include <vector>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_file.h"
#include "app/core/data/image_set.h"
#include "app/core/data/video_source.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/picture_input.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "tests/core/test_support.h"
#include "tests/core/video_writing.h"

namespace convscope {
namespace {

using testing::expectError;
using testing::rampFrame;
using testing::TempDir;
using testing::writeVideo;

constexpr int kWidth = 37, kHeight = 29, kFrames = 12, kColourFrame = 5;
constexpr double kRate = 20.0;  // OpenCV's MJPEG writer stores whole frames per second

// How far a frame read back may lie from the written one: the mean absolute difference over its
// pixels, in 8-bit levels. MJPEG (quality 95) loses little on a smooth gray ramp: measured, 0.3
// levels a pixel. 2 levels leaves room for another libjpeg or FFmpeg and still tells frames apart:
// neighbouring frames differ by 8 levels at every pixel (WrongFrameIsOutsideTheTolerance checks
// it on the decoded frames).
constexpr double kMeanLevelTolerance = 2.0;
// The colour frame loses more: 4:2:0 keeps one chroma value per 2x2 pixels, and FFmpeg's decoder
// spreads it over the four without interpolating, so a chroma ramp as steep as this frame's (R up
// and G down 3 levels a column) errs by up to about half a 2-pixel step: measured 5.7 levels on R,
// 2.8 on G, 4.1 on B. 8 levels; a channel read from the wrong plane (R for B: the ramp against a
// constant 60) lies 40 levels and more off on average.
constexpr double kColourFrameLevelTolerance = 8.0;

double meanLevelDifference(const Picture& picture, int channel, const cv::Mat& written, int writtenChannel) {
  double sum = 0.0;
  for (int y = 0; y < picture.height; ++y)
    for (int x = 0; x < picture.width; ++x)
      sum += std::abs(picture.at(channel, y, x) * 255.0 - written.at<cv::Vec3b>(y, x)[writtenChannel]);
  return sum / (picture.height * picture.width);
}

std::vector<cv::Mat> rampFrames() {
  std::vector<cv::Mat> frames;
  for (int k = 0; k < kFrames; ++k) frames.push_back(rampFrame(k, kWidth, kHeight, kColourFrame));
  return frames;
}

TEST(VideoSource, ReadsBackFrameCountRateSizeAndEveryFrameAsWritten) {
  TempDir dir;
  const auto file = dir.path() / "ramp.avi";
  const std::vector<cv::Mat> written = rampFrames();
  writeVideo(file, written, kRate);
  VideoSource video = VideoSource::openFile(file, 3);
  ASSERT_TRUE(video.frameCount().has_value());
  EXPECT_EQ(*video.frameCount(), kFrames);
  ASSERT_TRUE(video.framesPerSecond().has_value());
  EXPECT_NEAR(*video.framesPerSecond(), kRate, 1e-6);
  EXPECT_EQ(video.width(), kWidth);
  EXPECT_EQ(video.height(), kHeight);
  int read = 0;
  while (std::optional<VideoFrame> frame = video.next()) {
    const int k = read++;
    ASSERT_LT(k, kFrames) << "more frames than written";
    EXPECT_EQ(frame->index, k);
    EXPECT_NEAR(frame->seconds, k / kRate, 1e-9);
    ASSERT_EQ(frame->picture.width, kWidth);
    ASSERT_EQ(frame->picture.height, kHeight);
    ASSERT_EQ(frame->picture.channels, 3);
    // Planes R, G, B against OpenCV's channels 2, 1, 0.
    const double tolerance = k == kColourFrame ? kColourFrameLevelTolerance : kMeanLevelTolerance;
    for (int c = 0; c < 3; ++c) {
      EXPECT_LE(meanLevelDifference(frame->picture, c, written[static_cast<size_t>(k)], 2 - c), tolerance)
          << "frame " << k << ", channel " << c;
      if (k == kColourFrame)  // R, G and B in their places: each far from the others' written values
        for (int other = 0; other < 3; ++other)
          if (other != c)
            EXPECT_GT(meanLevelDifference(frame->picture, c, written[static_cast<size_t>(k)], 2 - other), 3 * tolerance)
                << "channel " << c << " against written channel " << other;
    }
  }
  EXPECT_EQ(read, kFrames);
}

TEST(VideoSource, WrongFrameIsOutsideTheTolerance) {
  // The tolerance above must catch a frame read in the wrong place: each decoded frame against
  // the written frame after it lies far outside it.
  TempDir dir;
  const auto file = dir.path() / "ramp.avi";
  const std::vector<cv::Mat> written = rampFrames();
  writeVideo(file, written, kRate);
  VideoSource video = VideoSource::openFile(file, 3);
  for (int k = 0; k + 1 < kFrames; ++k) {
    const std::optional<VideoFrame> frame = video.next();
    ASSERT_TRUE(frame);
    if (k == kColourFrame || k + 1 == kColourFrame) continue;  // gray against colour: no ramp shift
    const double difference = meanLevelDifference(frame->picture, 0, written[static_cast<size_t>(k) + 1], 2);
    EXPECT_GT(difference, 3 * kMeanLevelTolerance) << "frame " << k << " against frame " << k + 1;
  }
}

TEST(VideoSource, ColourFrameKeepsItsChannelsAndTurnsGrayByBt601ForAGrayModel) {
  TempDir dir;
  const auto file = dir.path() / "ramp.avi";
  const std::vector<cv::Mat> written = rampFrames();
  writeVideo(file, written, kRate);
  VideoSource gray = VideoSource::openFile(file, 1);
  EXPECT_EQ(gray.skip(kColourFrame), kColourFrame);
  const std::optional<VideoFrame> frame = gray.next();
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->index, kColourFrame);
  ASSERT_EQ(frame->picture.channels, 1);
  // 0.299 R + 0.587 G + 0.114 B of what was written, computed here in double.
  const cv::Mat& colour = written[kColourFrame];
  double sum = 0.0, swappedSum = 0.0;
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      const cv::Vec3b bgr = colour.at<cv::Vec3b>(y, x);
      const double expected = 0.299 * bgr[2] + 0.587 * bgr[1] + 0.114 * bgr[0];
      const double swapped = 0.299 * bgr[0] + 0.587 * bgr[1] + 0.114 * bgr[2];  // R and B taken the wrong way
      sum += std::abs(frame->picture.at(y, x) * 255.0 - expected);
      swappedSum += std::abs(frame->picture.at(y, x) * 255.0 - swapped);
    }
  // Gray is JPEG's luma, kept at full resolution: the gray frames' tolerance holds.
  EXPECT_LE(sum / (kWidth * kHeight), kMeanLevelTolerance);
  EXPECT_GT(swappedSum / (kWidth * kHeight), 3 * kMeanLevelTolerance) << "the weights must tell R from B";
}

TEST(VideoSource, RefusesWhatIsNoVideoNamingTheFile) {
  TempDir dir;
  expectError([&] { VideoSource::openFile(dir.path() / "missing.avi", 1); }, {"missing.avi", "file not found"});
  const auto text = dir.path() / "notes.avi";
  std::ofstream(text) << "just some text, not a video\n";
  expectError([&] { VideoSource::openFile(text, 1); }, {"notes.avi", "not a video file"});
  const auto empty = dir.path() / "empty.avi";
  std::ofstream{empty};
  expectError([&] { VideoSource::openFile(empty, 1); }, {"empty.avi", "empty file"});
  const auto picture = dir.path() / "picture.mp4";
  ASSERT_TRUE(cv::imwrite((dir.path() / "picture.png").string(), rampFrame(0, kWidth, kHeight)));
  std::filesystem::rename(dir.path() / "picture.png", picture);
  expectError([&] { VideoSource::openFile(picture, 1); }, {"picture.mp4", "a PNG picture, not a video"});
  expectError([&] { VideoSource::openFile(dir.path(), 1); }, {dir.path().string()});  // a folder
  expectError([&] { VideoSource::openFile(text, 2); }, {"notes.avi", "1 or 3 channels"});
}

TEST(VideoSource, RefusesAVideoWithoutFrames) {
  TempDir dir;
  const auto file = dir.path() / "no-frames.avi";
  {
    cv::VideoWriter writer(file.string(), cv::CAP_OPENCV_MJPEG, cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), kRate,
                           cv::Size(kWidth, kHeight), true);
    ASSERT_TRUE(writer.isOpened());
  }  // closed without a frame: an AVI header and an empty movie
  expectError([&] { VideoSource::openFile(file, 1); }, {"no-frames.avi", "no frames"});
}

TEST(VideoSource, RefusesFramesLargerThanThePictureLimitBeforeDecodingOne) {
  // A header that claims 8000 x 8000 frames (64 megapixels, above the 50 of kMaxImagePixels, below
  // the size FFmpeg refuses itself): refused from the header, before a frame is decoded.
  TempDir dir;
  const auto file = dir.path() / "huge.avi";
  {
    cv::VideoWriter writer(file.string(), cv::CAP_OPENCV_MJPEG, cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), kRate,
                           cv::Size(8000, 8000), false);
    ASSERT_TRUE(writer.isOpened());
  }
  expectError([&] { VideoSource::openFile(file, 1); }, {"huge.avi", "8000x8000", "kMaxImagePixels"});
}

TEST(VideoSource, CameraThatCannotOpenIsNamed) {
  // No machine the tests run on has 100 cameras.
  expectError([] { VideoSource::openCamera(99, 1); }, {"camera 99", "cannot be opened"});
  expectError([] { VideoSource::openCamera(-1, 1); }, {"camera -1"});
}

// The first test images written as frames, read by VideoSource and classified through the path
// an image file takes once decoded: the probabilities equal those of the same decoded frames
// brought to the model without VideoSource, and the class is the test image's own where MJPEG's
// small loss cannot move it.
TEST(VideoSource, FramesOfTestImagesClassifyAsTheDecodedFramesAndTheImagesDo) {
  const ImageSet images = ImageSet::loadIdxFolder(defaultDataFolder());
  constexpr int kImages = 10;
  TempDir dir;
  const auto file = dir.path() / "test-images.avi";
  writeVideo(file, testing::testImageFrames(images, 0, kImages), 10.0);
  const std::vector<cv::Mat> decoded = testing::decodeGrayFrames(file);
  ASSERT_EQ(decoded.size(), static_cast<size_t>(kImages));

  const auto model = loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/course-high.onnx");
  Engine engine(model, defaultConvVariant());
  engine.setPreprocessing(preprocessingFor(*model, std::nullopt));
  const auto probabilitiesOf = [&](const Picture& picture) {
    const Picture framed = pictureAtModelInput(engine, invertedByRule(picture, engine.preprocessing().inversion).image);
    return classify(engine, ImageSet::fromImages("frame", {framed}, {}), 0, 1, 1).images.front().probabilities;
  };

  VideoSource video = VideoSource::openFile(file, 1);
  for (int k = 0; k < kImages; ++k) {
    const std::optional<VideoFrame> frame = video.next();
    ASSERT_TRUE(frame) << "frame " << k;
    // The same bytes as FFmpeg's frame read directly, to the bit (x / 255 in float).
    Picture direct = blankPicture(images.height(), images.width(), 1);
    for (int p = 0; p < images.height() * images.width(); ++p)
      direct.pixels[static_cast<size_t>(p)] = decoded[static_cast<size_t>(k)].data[p] / 255.0f;
    ASSERT_EQ(frame->picture.pixels, direct.pixels) << "frame " << k;
    const std::vector<float> fromVideo = probabilitiesOf(frame->picture);
    const std::vector<float> fromDecoded = probabilitiesOf(direct);
    // Equal inputs through the same calls: equal to the last bit.
    EXPECT_EQ(fromVideo, fromDecoded) << "frame " << k;

    // Against the test image itself: MJPEG moves pixels by a level or two. Where the image's own
    // answer is clear (its top class at least 0.3 above the next), the frame's must be the same.
    const ClassificationRun original = classify(engine, images, k, 1, 1);
    const std::vector<float>& p = original.images.front().probabilities;
    const std::vector<int> order = topClasses(p, 2);
    const float margin = p[static_cast<size_t>(order[0])] - p[static_cast<size_t>(order[1])];
    if (margin >= 0.3f) EXPECT_EQ(topClasses(fromVideo, 1).front(), order[0]) << "frame " << k;
  }
  EXPECT_FALSE(video.next()) << "one frame per image, no more";
}

}  // namespace
}  // namespace convscope
