// convscope-cli classify --video on videos the test writes itself (tests/core/video_writing.h):
// one line per frame, the frames per second, --every and --frames, the same probabilities as
// --images gives the video's decoded frames, and every bad input refused with a non-zero exit.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <opencv2/imgcodecs.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/data/image_set.h"
#include "tests/cli/cli_runner.h"
#include "tests/core/test_support.h"
#include "tests/core/video_writing.h"

namespace {

using convscope::testing::TempDir;

using Outcome = convscope::testing::CliOutcome;
using convscope::testing::runCli;

const std::string kModel = std::string(CONVSCOPE_MODELS_DIR) + "/course-high.onnx";

std::filesystem::path writeRampVideo(const TempDir& dir, int frames, double rate) {
  std::vector<cv::Mat> written;
  for (int k = 0; k < frames; ++k) written.push_back(convscope::testing::rampFrame(k % 12, 37, 29));
  const auto file = dir.path() / "ramp.avi";
  convscope::testing::writeVideo(file, written, rate);
  return file;
}

std::vector<std::string> frameLines(const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("frame ", 0) == 0) lines.push_back(line);
  return lines;
}

TEST(CliVideo, ClassifiesEveryFrameThenSaysTheRateClassifiedAndTheVideosOwn) {
  TempDir dir;
  const auto video = writeRampVideo(dir, 12, 25.0);
  const Outcome r = runCli("classify --model '" + kModel + "' --video '" + video.string() + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::vector<std::string> lines = frameLines(r.output);
  ASSERT_EQ(lines.size(), 12u) << r.output;
  // frame k at k / 25 s, a class name, its probability.
  const std::regex line(R"(frame (\d+) \((\d+\.\d\d) s\): (.+) (\d+\.\d)%.*)");
  for (size_t k = 0; k < lines.size(); ++k) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[k], m, line)) << lines[k];
    EXPECT_EQ(std::stoi(m[1]), static_cast<int>(k));
    EXPECT_NEAR(std::stod(m[2]), k / 25.0, 0.006) << lines[k];
    const auto& names = convscope::fashionMnistClassNames();
    EXPECT_NE(std::find(names.begin(), names.end(), m[3].str()), names.end()) << lines[k];
  }
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(Classified 12 frames in \d+\.\d\d s: \d+\.\d frames/s)")))
      << r.output;
  EXPECT_NE(r.output.find("The video's own frame rate: 25.00 frames/s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("37x29, 12 frames, 25.00 frames/s"), std::string::npos) << r.output;
}

TEST(CliVideo, EveryAndFramesPickTheFrames) {
  TempDir dir;
  const auto video = writeRampVideo(dir, 20, 10.0);
  const Outcome r = runCli("classify --model '" + kModel + "' --video '" + video.string() + "' --every 3 --frames 4");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::vector<std::string> lines = frameLines(r.output);
  ASSERT_EQ(lines.size(), 4u) << r.output;
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_EQ(lines[i].rfind("frame " + std::to_string(3 * i) + " (", 0), 0u) << lines[i];
  EXPECT_NE(r.output.find("Classified 4 frames"), std::string::npos) << r.output;
  // To the end: frames 0, 7, 14 of 20.
  const Outcome all = runCli("classify --model '" + kModel + "' --video '" + video.string() + "' --every 7");
  ASSERT_EQ(all.exitCode, 0) << all.output;
  ASSERT_EQ(frameLines(all.output).size(), 3u) << all.output;
  EXPECT_EQ(frameLines(all.output)[2].rfind("frame 14 (1.40 s)", 0), 0u) << all.output;
}

// Test images written as a video: each frame's ten probabilities as --images gives them for the
// same frames decoded by FFmpeg directly and saved as lossless PNGs. The inputs are the same
// bytes through the same preprocessing, so only the batch differs (--images classifies the ten in
// one batch, --video one at a time, and a BLAS may sum in another order for another batch size):
// a difference in the last bits of a float, at most one step of the printed 0.01 %, never more.
TEST(CliVideo, FramesOfTestImagesGetTheProbabilitiesImagesGiveTheirDecodedFrames) {
  const convscope::ImageSet images = convscope::ImageSet::loadIdxFolder(convscope::defaultDataFolder());
  constexpr int kImages = 10;
  TempDir dir;
  const auto video = dir.path() / "test-images.avi";
  convscope::testing::writeVideo(video, convscope::testing::testImageFrames(images, 0, kImages), 10.0);
  std::string pictures;
  std::vector<std::string> pictureFiles;
  const std::vector<cv::Mat> decoded = convscope::testing::decodeGrayFrames(video);
  ASSERT_EQ(decoded.size(), static_cast<size_t>(kImages));
  for (int k = 0; k < kImages; ++k) {
    pictureFiles.push_back((dir.path() / ("frame-" + std::to_string(k) + ".png")).string());
    ASSERT_TRUE(cv::imwrite(pictureFiles.back(), decoded[static_cast<size_t>(k)]));
    pictures += " '" + pictureFiles.back() + "'";
  }
  const Outcome fromVideo = runCli("classify --model '" + kModel + "' --top 10 --video '" + video.string() + "'");
  const Outcome fromImages = runCli("classify --model '" + kModel + "' --top 10 --images" + pictures);
  ASSERT_EQ(fromVideo.exitCode, 0) << fromVideo.output;
  ASSERT_EQ(fromImages.exitCode, 0) << fromImages.output;

  // Each picture's "  3. Pullover 0.12%" lines, in the order the outputs give them.
  const auto probabilities = [](const std::string& output, const std::string& header) {
    std::vector<std::map<std::string, double>> pictures;
    std::istringstream in(output);
    const std::regex entry(R"(  \d+\. (.+) (\d+\.\d\d)%.*)");
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (line.rfind(header, 0) == 0)
        pictures.emplace_back();
      else if (!pictures.empty() && std::regex_match(line, m, entry))
        pictures.back()[m[1]] = std::stod(m[2]);
    }
    return pictures;
  };
  const auto video10 = probabilities(fromVideo.output, "frame ");
  const auto images10 = probabilities(fromImages.output, dir.path().string());
  ASSERT_EQ(video10.size(), static_cast<size_t>(kImages)) << fromVideo.output;
  ASSERT_EQ(images10.size(), static_cast<size_t>(kImages)) << fromImages.output;
  const std::vector<std::string> lines = frameLines(fromVideo.output);
  for (int k = 0; k < kImages; ++k) {
    ASSERT_EQ(video10[static_cast<size_t>(k)].size(), 10u) << "frame " << k;
    for (const auto& [name, percent] : images10[static_cast<size_t>(k)]) {
      ASSERT_TRUE(video10[static_cast<size_t>(k)].count(name)) << name;
      EXPECT_NEAR(video10[static_cast<size_t>(k)].at(name), percent, 0.0101) << "frame " << k << ", " << name;
    }
    // The frame's line names the frame and the class --images gives its picture first.
    std::string top;
    for (const auto& [name, percent] : images10[static_cast<size_t>(k)])
      if (top.empty() || percent > images10[static_cast<size_t>(k)].at(top)) top = name;
    EXPECT_EQ(lines[static_cast<size_t>(k)].rfind("frame " + std::to_string(k) + " (", 0), 0u);
    EXPECT_NE(lines[static_cast<size_t>(k)].find("): " + top + " "), std::string::npos)
        << lines[static_cast<size_t>(k)] << " against " << top;
  }
}

TEST(CliVideo, RefusesBadOptionsAndFilesNamingTheProblem) {
  TempDir dir;
  const auto video = writeRampVideo(dir, 3, 10.0);
  const std::string classify = "classify --model '" + kModel + "' --video '" + video.string() + "' ";
  for (const auto& [arguments, expected] : std::vector<std::pair<std::string, std::string>>{
           {classify + "--every 0", "option '--every' needs a whole number of at least 1, got '0'"},
           {classify + "--every two", "option '--every' needs a whole number of at least 1, got 'two'"},
           {classify + "--frames -3", "option '--frames' needs a whole number of at least 1, got '-3'"},
           {classify + "--frames 1.5", "option '--frames' needs a whole number of at least 1, got '1.5'"},
           {classify + "--count 3", "--video and --count do not go together"},
           {classify + "--images '" + video.string() + "'", "--video and --images do not go together"},
           {"classify --every 2", "--every goes with --video FILE"},
           {"classify --video '" + (dir.path() / "missing.mp4").string() + "'", "missing.mp4: file not found"},
       }) {
    const Outcome r = runCli(arguments);
    EXPECT_NE(r.exitCode, 0) << arguments;
    EXPECT_NE(r.output.find(expected), std::string::npos) << arguments << "\n" << r.output;
    EXPECT_EQ(r.output.find("Loading model"), std::string::npos) << "refused before anything loads: " << arguments;
  }
  const auto text = dir.path() / "notes.avi";
  std::ofstream(text) << "just some text\n";
  const Outcome notVideo = runCli("classify --model '" + kModel + "' --video '" + text.string() + "'");
  EXPECT_NE(notVideo.exitCode, 0);
  EXPECT_NE(notVideo.output.find(text.string() + ": not a video file"), std::string::npos) << notVideo.output;
}

TEST(CliVideo, HelpDescribesVideo) {
  const Outcome r = runCli("classify --help");
  ASSERT_EQ(r.exitCode, 0);
  for (const char* option : {"--video FILE", "--every N", "--frames N"})
    EXPECT_NE(r.output.find(option), std::string::npos) << option;
}

}  // namespace
