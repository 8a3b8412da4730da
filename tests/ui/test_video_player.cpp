// A video in the window: its frames classified one after another, each once and in order (the
// next taken only when the outcome of the one before has arrived), the status bar's frame count
// and rate, the end of the file, and stopping by Esc or by choosing another picture. The videos
// are the test's own (tests/core/video_writing.h). CONVSCOPE_SCREENSHOT_DIR=DIR saves the window
// playing one at 1024x700 as DIR/video-playing.png.
#include <QAction>
#include <QDir>
#include <QElapsedTimer>
#include <QStatusBar>

#include <regex>

#include "tests/core/video_writing.h"
#include "tests/ui/ui_test_support.h"
#include "ui/input/dataset_browser.h"
#include "ui/input/input_panel.h"
#include "ui/input/video_player.h"

namespace convscope::testing {
namespace {

QString writeRampVideo(const QTemporaryDir& dir, const QString& name, int frames) {
  std::vector<cv::Mat> written;
  for (int k = 0; k < frames; ++k) written.push_back(rampFrame(k % 12, 37, 29));
  const QString path = dir.filePath(name);
  writeVideo(path.toStdString(), written, 20.0);
  return path;
}

// The descriptions of the pictures whose outcomes the window received, in order.
struct OutcomeLog {
  explicit OutcomeLog(gui::MainWindow& window) {
    QObject::connect(
        window.inference(), &ui::InferenceController::outcomeReady, window.inference(),
        [this](std::shared_ptr<const ui::InferenceOutcome> outcome) { descriptions << outcome->input.description; });
  }
  QStringList descriptions;
};

double ratePrinted(const QString& status) {
  std::smatch m;
  const std::string text = status.toStdString();
  if (!std::regex_search(text, m, std::regex(R"(, (\d+\.\d) frames/s classified)"))) return -1.0;
  return std::stod(m[1]);
}

TEST(VideoPlayer, PlaysEveryFrameOnceInOrderAndStopsByItselfAtTheEnd) {
  auto window = openWindow();
  QTemporaryDir dir;
  const QString video = writeRampVideo(dir, "ramp.avi", 12);
  OutcomeLog log(*window);
  QStringList statuses;
  QObject::connect(window->videoPlayer(), &ui::VideoPlayer::statusChanged, window.get(),
                   [&](const QString& text) { statuses << text; });
  QElapsedTimer clock;
  clock.start();
  ASSERT_TRUE(window->openVideo(video)) << window->lastError().toStdString();
  EXPECT_TRUE(window->videoPlayer()->playing());
  EXPECT_TRUE(window->stopVideoAction()->isEnabled());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->videoPlayer()->playing(); }, 60000))
      << "still playing: " << window->statusBar()->currentMessage().toStdString();
  const double seconds = static_cast<double>(clock.nsecsElapsed()) / 1e9;
  ASSERT_TRUE(window->lastError().isEmpty()) << window->lastError().toStdString();

  // Every frame, once, in order: frames handed on faster than they were classified would have
  // replaced each other in the controller's queue, and some would be missing here.
  QStringList expected;
  for (int k = 1; k <= 12; ++k) expected << QString("ramp.avi, frame %1").arg(k);
  EXPECT_EQ(log.descriptions, expected) << log.descriptions.join(" | ").toStdString();
  EXPECT_EQ(window->videoPlayer()->framesClassified(), 12);
  // The status after each frame, then at the end, which it says.
  ASSERT_GE(statuses.size(), 12);
  EXPECT_TRUE(statuses.contains("Opening ramp.avi…"));
  EXPECT_TRUE(statuses.last().startsWith("Video ramp.avi: frame 12 of 12, ")) << statuses.last().toStdString();
  const QString last = window->statusBar()->currentMessage();
  EXPECT_TRUE(last.startsWith("Video ramp.avi: frame 12 of 12, ")) << last.toStdString();
  EXPECT_TRUE(last.endsWith("frames/s classified (the end of the video)")) << last.toStdString();
  // The rate: the frames over the time since the first was shown, so at least the frames over the
  // whole time the test waited (which also counts opening the file), within the printed rounding.
  const double rate = ratePrinted(last);
  EXPECT_GE(rate, 12 / seconds - 0.05) << last.toStdString() << " after " << seconds << " s";
  EXPECT_NEAR(rate, window->videoPlayer()->classifiedPerSecond(), 0.05 + 0.1 * rate);
  EXPECT_FALSE(window->stopVideoAction()->isEnabled()) << "nothing left to stop";
  // The test set's list says what is shown: the video's frames, not a test image.
  const QString note = window->inputPanel()->browser()->outsidePictureNote();
  EXPECT_EQ(note, "Shown: ramp.avi (a video's frames, not test images)") << note.toStdString();
  // The prediction shown is the last frame's.
  ASSERT_TRUE(window->inference()->lastOutcome());
  EXPECT_EQ(window->inference()->lastOutcome()->input.description, "ramp.avi, frame 12");
}

TEST(VideoPlayer, EscStopsItMidwayAndAnotherPictureStopsItToo) {
  auto window = openWindow();
  window->resize(1024, 700);
  QTemporaryDir dir;
  const QString video = writeRampVideo(dir, "long.avi", 400);
  OutcomeLog log(*window);
  ASSERT_TRUE(window->openVideo(video));
  ASSERT_TRUE(QTest::qWaitFor([&] { return window->videoPlayer()->framesClassified() >= 4; }, 60000));
  ASSERT_TRUE(window->videoPlayer()->playing());
  EXPECT_TRUE(window->statusBar()->currentMessage().startsWith("Video long.avi: frame "))
      << window->statusBar()->currentMessage().toStdString();
  EXPECT_TRUE(window->statusBar()->currentMessage().contains(" of 400, "))
      << window->statusBar()->currentMessage().toStdString();
  if (const QString folder = qEnvironmentVariable("CONVSCOPE_SCREENSHOT_DIR"); !folder.isEmpty()) {
    QCoreApplication::processEvents();
    EXPECT_TRUE(window->grab().save(QDir(folder).filePath("video-playing.png")));
  }
  QTest::keyClick(window.get(), Qt::Key_Escape);
  EXPECT_FALSE(window->videoPlayer()->playing()) << "Esc stops the video";
  const QString stopped = window->statusBar()->currentMessage();
  EXPECT_TRUE(stopped.startsWith("Video long.avi: frame ")) << stopped.toStdString();
  EXPECT_TRUE(stopped.endsWith("(stopped)")) << stopped.toStdString();
  // The frame being classified at the Esc may still arrive; nothing after it.
  const qsizetype atStop = log.descriptions.size();
  QTest::qWait(1500);
  EXPECT_LE(log.descriptions.size(), atStop + 1) << log.descriptions.join(" | ").toStdString();
  EXPECT_LT(log.descriptions.size(), 100) << "stopped long before the end";

  // Playing again, then a test image chosen: the video stops and the test image is shown.
  ASSERT_TRUE(window->openVideo(video));
  ASSERT_TRUE(QTest::qWaitFor([&] { return window->videoPlayer()->framesClassified() >= 2; }, 60000));
  ASSERT_TRUE(window->selectTestImage(3));
  EXPECT_FALSE(window->videoPlayer()->playing());
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return window->inference()->lastOutcome() && window->inference()->lastOutcome()->input.testIndex == 3; },
      30000));
  QTest::qWait(500);
  EXPECT_EQ(window->inference()->lastOutcome()->input.testIndex, 3) << "no frame came after the test image";

  // And another video opened while one plays replaces it.
  ASSERT_TRUE(window->openVideo(video));
  ASSERT_TRUE(QTest::qWaitFor([&] { return window->videoPlayer()->framesClassified() >= 2; }, 60000));
  const QString shorter = writeRampVideo(dir, "short.avi", 3);
  ASSERT_TRUE(window->openVideo(shorter));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->videoPlayer()->playing(); }, 60000));
  EXPECT_TRUE(window->statusBar()->currentMessage().startsWith("Video short.avi: frame 3 of 3, "))
      << window->statusBar()->currentMessage().toStdString();
}

TEST(VideoPlayer, WhatIsNoVideoIsShownNamingTheFile) {
  auto window = openWindow();
  QTemporaryDir dir;
  EXPECT_FALSE(window->openVideo(dir.filePath("missing.mp4")));
  EXPECT_TRUE(window->lastError().contains("missing.mp4: file not found")) << window->lastError().toStdString();
  const QString notes = writeFile(dir, "notes.avi", "just some text, not a video\n");
  ASSERT_TRUE(window->openVideo(notes));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->videoPlayer()->playing(); }, 30000));
  EXPECT_TRUE(window->lastError().contains(notes + ": not a video file")) << window->lastError().toStdString();
  window->openCamera(99);  // no machine the tests run on has a hundred cameras
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->videoPlayer()->playing(); }, 30000));
  EXPECT_TRUE(window->lastError().contains("camera 99: cannot be opened")) << window->lastError().toStdString();
  // Dropped or chosen from the recent files: a video's suffix opens it as a video.
  EXPECT_TRUE(gui::MainWindow::isVideoFile("clip.MP4"));
  EXPECT_FALSE(gui::MainWindow::isVideoFile("cat.png"));
}

}  // namespace
}  // namespace convscope::testing
