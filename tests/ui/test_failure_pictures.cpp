// "Where it is wrong, as pictures": the three pictures of a failed check (FailurePictures) on a
// synthetic map whose pattern the test knows (a block of rows never written, a wrong left column,
// one NaN), and the "Your kernel" panel showing them only after a check that failed with a map.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QImage>
#include <QMouseEvent>
#include <QTest>

#include <cmath>
#include <limits>
#include <vector>

#include "app/core/conv/conv_failure_map.h"
#include "ui/common/presentation_mode.h"
#include "ui/jobs/job_runner.h"
#include "ui/kernel/failure_pictures.h"
#include "ui/kernel/user_kernel_panel.h"
#include "ui/maps/colour_legend.h"

namespace convscope::testing {
namespace {

using ui::FailurePictures;
using Picture = FailurePictures::Picture;

constexpr int kHeight = 20, kWidth = 20;
constexpr int kFirstUnwrittenRow = 8, kLastUnwrittenRow = 15;
constexpr int kLastWrongRow = 5;  // column 0 of rows 0-5 is off by 10
constexpr int kNanH = 3, kNanW = 5;

double expectedAt(int h, int w) {
  return std::sin(0.3 * h) + std::cos(0.2 * w);
}
bool unwritten(int h, int) {
  return h >= kFirstUnwrittenRow && h <= kLastUnwrittenRow;
}
bool nan(int h, int w) {
  return h == kNanH && w == kNanW;
}
bool wrong(int h, int w) {
  return w == 0 && h <= kLastWrongRow;
}

// What a kernel with that pattern leaves in the output, classified by the core as the check does.
ConvFailureMap patternedMap() {
  std::vector<double> expected, allowed;
  std::vector<float> actual;
  for (int h = 0; h < kHeight; ++h)
    for (int w = 0; w < kWidth; ++w) {
      expected.push_back(expectedAt(h, w));
      allowed.push_back(1e-3);
      actual.push_back(unwritten(h, w) ? unwrittenPoison()
                       : nan(h, w)     ? std::numeric_limits<float>::quiet_NaN()
                       : wrong(h, w)   ? static_cast<float>(expectedAt(h, w) + 10.0)
                                       : static_cast<float>(expectedAt(h, w)));
    }
  ConvProblem problem;
  problem.inHeight = kHeight;
  problem.inWidth = kWidth;
  problem.kernelHeight = problem.kernelWidth = 1;
  ConvFailureMap map = classifyOutputMap(problem, 0, 0, kHeight, kWidth, expected, allowed, actual);
  map.shapeBad = map.bad();  // the shape is this one map (batch 1, one output channel)
  map.shapeTotal = map.total();
  return map;
}

// "a-b, c" for the indices `flagged` holds, written out here rather than taken from the core.
QString rangesOf(const std::vector<bool>& flagged) {
  QStringList runs;
  bool all = true;
  for (size_t i = 0; i < flagged.size();) {
    if (!flagged[i]) {
      all = false;
      ++i;
      continue;
    }
    size_t end = i;
    while (end + 1 < flagged.size() && flagged[end + 1]) ++end;
    runs << (end == i ? QString::number(i) : QString("%1-%2").arg(i).arg(end));
    i = end + 1;
  }
  return all ? "all" : runs.isEmpty() ? "none" : runs.join(", ");
}

QImage shown(QWidget& widget) {
  QCoreApplication::processEvents();
  return widget.grab().toImage().convertToFormat(QImage::Format_RGB32);
}

QColor pixelAt(const QImage& image, const FailurePictures& pictures, Picture picture, int h, int w) {
  const std::optional<QPoint> centre = pictures.elementCentre(picture, h, w);
  EXPECT_TRUE(centre.has_value()) << h << "," << w;
  if (!centre) return {};
  EXPECT_TRUE(image.rect().contains(*centre)) << centre->x() << "," << centre->y();
  return image.pixelColor(*centre);
}

void hover(FailurePictures& pictures, QPoint at) {
  QWidget* target = pictures.childAt(at);
  ASSERT_NE(target, nullptr);
  const QPointF local = target->mapFrom(&pictures, at);
  QMouseEvent move(QEvent::MouseMove, local, target->mapToGlobal(local), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(target, &move);
}

struct ShownPictures {
  FailurePictures widget;
  explicit ShownPictures(QSize size) {
    widget.setFailureMap(patternedMap());
    widget.resize(size);
    widget.show();
    EXPECT_TRUE(QTest::qWaitForWindowExposed(&widget));
  }
};

TEST(FailurePictures, CountsAndRangesAreThoseOfThePattern) {
  int wrongCount = 0, unwrittenCount = 0, nanCount = 0;
  std::vector<bool> badRows(kHeight), badColumns(kWidth);
  for (int h = 0; h < kHeight; ++h)
    for (int w = 0; w < kWidth; ++w) {
      const bool bad = unwritten(h, w) || nan(h, w) || wrong(h, w);
      unwrittenCount += unwritten(h, w);
      nanCount += !unwritten(h, w) && nan(h, w);
      wrongCount += !unwritten(h, w) && !nan(h, w) && wrong(h, w);
      if (bad) badRows[h] = badColumns[w] = true;
    }
  ASSERT_EQ(unwrittenCount, 160);  // the pattern is what the test means it to be
  ASSERT_EQ(rangesOf(badRows), "0-5, 8-15");

  ShownPictures shown(QSize(900, 560));
  EXPECT_EQ(shown.widget.countsText(), QString("wrong %1 / never written %2 / NaN %3 / total %4")
                                           .arg(wrongCount)
                                           .arg(unwrittenCount)
                                           .arg(nanCount)
                                           .arg(kHeight * kWidth));
  EXPECT_EQ(shown.widget.rangesText(), QString("Rows %1 · columns %2").arg(rangesOf(badRows), rangesOf(badColumns)));
  // Worst first: the wrong numbers (off by 10), then the NaN, then the unwritten elements.
  const QStringList worst = shown.widget.worstText().split('\n');
  ASSERT_FALSE(worst.isEmpty());
  EXPECT_TRUE(worst.front().endsWith("(wrong)")) << worst.front().toStdString();
  EXPECT_TRUE(worst.front().contains("[w=0]")) << worst.front().toStdString();
}

TEST(FailurePictures, EachVerdictHasItsColourWhereItsElementIs) {
  ShownPictures shown(QSize(900, 560));
  const QImage image = ::convscope::testing::shown(shown.widget);
  const FailurePictures& pictures = shown.widget;
  const QColor okColour = FailurePictures::verdictColour(ElementVerdict::Ok);
  EXPECT_EQ(pixelAt(image, pictures, Picture::Verdicts, 18, 10), okColour);
  EXPECT_EQ(pixelAt(image, pictures, Picture::Verdicts, 10, 7),
            FailurePictures::verdictColour(ElementVerdict::NeverWritten));
  EXPECT_EQ(pixelAt(image, pictures, Picture::Verdicts, kNanH, kNanW),
            FailurePictures::verdictColour(ElementVerdict::NotANumber));
  EXPECT_EQ(pixelAt(image, pictures, Picture::Verdicts, 2, 0), FailurePictures::verdictColour(ElementVerdict::Wrong));
  EXPECT_NE(pixelAt(image, pictures, Picture::Verdicts, 10, 7), okColour);
  // The kernel's map holds no number where nothing was written.
  EXPECT_EQ(pixelAt(image, pictures, Picture::Actual, 10, 7), FailurePictures::noNumberColour());
  // One colour scale: where the kernel is right its map is the expected one, where it is off by
  // 10 it is not; the expected map has a colour (not the "no number" gray) everywhere.
  for (auto [h, w] : {std::pair{18, 10}, {0, 19}, {19, 3}})
    EXPECT_EQ(pixelAt(image, pictures, Picture::Actual, h, w), pixelAt(image, pictures, Picture::Expected, h, w));
  EXPECT_NE(pixelAt(image, pictures, Picture::Actual, 2, 0), pixelAt(image, pictures, Picture::Expected, 2, 0));
  EXPECT_NE(pixelAt(image, pictures, Picture::Expected, 10, 7), FailurePictures::noNumberColour());
  // An element is a square of several pixels, and the pictures do not overlap.
  const QPoint a = *pictures.elementCentre(Picture::Verdicts, 0, 0),
               b = *pictures.elementCentre(Picture::Verdicts, 1, 1);
  EXPECT_GE(b.x() - a.x(), 4);
  EXPECT_EQ(b.x() - a.x(), b.y() - a.y());
  EXPECT_LT(pictures.elementCentre(Picture::Expected, 0, kWidth - 1)->x(),
            pictures.elementCentre(Picture::Actual, 0, 0)->x());
  EXPECT_FALSE(pictures.elementCentre(Picture::Expected, kHeight, 0).has_value());
}

TEST(FailurePictures, PointingAtAnElementReadsItOut) {
  ShownPictures shown(QSize(900, 560));
  FailurePictures& pictures = shown.widget;
  hover(pictures, *pictures.elementCentre(Picture::Verdicts, 10, 7));
  EXPECT_EQ(pictures.readoutText(),
            QString("h 10, w 7: expected %1, got nothing · never written").arg(ui::formatValue(expectedAt(10, 7))));
  hover(pictures, *pictures.elementCentre(Picture::Expected, kNanH, kNanW));
  EXPECT_EQ(pictures.readoutText(),
            QString("h 3, w 5: expected %1, got NaN · NaN").arg(ui::formatValue(expectedAt(kNanH, kNanW))));
  hover(pictures, *pictures.elementCentre(Picture::Actual, 2, 0));
  EXPECT_EQ(pictures.readoutText(),
            QString("h 2, w 0: expected %1, got %2 · wrong")
                .arg(ui::formatValue(expectedAt(2, 0)), ui::formatValue(static_cast<float>(expectedAt(2, 0) + 10.0))));
  hover(pictures, *pictures.elementCentre(Picture::Actual, 19, 19));
  EXPECT_EQ(pictures.readoutText(),
            QString("h 19, w 19: expected %1, got %2 · ok")
                .arg(ui::formatValue(expectedAt(19, 19)), ui::formatValue(static_cast<float>(expectedAt(19, 19)))));
  // Between two pictures there is no element.
  const QPoint endOfFirst = *pictures.elementCentre(Picture::Expected, 0, kWidth - 1);
  const QPoint startOfSecond = *pictures.elementCentre(Picture::Actual, 0, 0);
  pictures.pointAt((endOfFirst + startOfSecond) / 2);
  EXPECT_TRUE(pictures.readoutText().isEmpty()) << pictures.readoutText().toStdString();
}

TEST(FailurePictures, FitsTheWindowInPresentationMode) {
  ui::setPresentationMode(true);
  {
    ShownPictures shown(QSize(1024, 700));
    const QImage image = ::convscope::testing::shown(shown.widget);
    const QPoint last = *shown.widget.elementCentre(Picture::Verdicts, kHeight - 1, kWidth - 1);
    EXPECT_LT(last.x(), shown.widget.width());
    EXPECT_LT(last.y(), shown.widget.height());
    EXPECT_EQ(pixelAt(image, shown.widget, Picture::Verdicts, 10, 7),
              FailurePictures::verdictColour(ElementVerdict::NeverWritten));
  }
  ui::setPresentationMode(false);
}

// The panel as the pipeline drives it: the check's result arrives as stepFinished.
TEST(FailurePictures, ThePanelShowsThemOnlyAfterACheckThatFailedWithAMap) {
  ui::JobRunner jobs;
  ui::UserKernelPanel panel(&jobs);
  panel.resize(1024, 700);
  panel.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
  EXPECT_FALSE(panel.failurePictures()->isVisible());

  ui::KernelStepResult failed;
  failed.step = ui::KernelStep::Check;
  failed.ok = false;
  failed.summary = "wrong at [n=0][m=0][h=0][w=0]";
  failed.failureMap = patternedMap();
  emit panel.pipeline()->stepFinished(failed);
  EXPECT_TRUE(panel.failurePictures()->isVisible());
  EXPECT_EQ(panel.failurePictures()->countsText(), "wrong 6 / never written 160 / NaN 1 / total 400");

  ui::KernelStepResult timedOut;
  timedOut.step = ui::KernelStep::Check;
  timedOut.ok = false;  // failed, but kept no map
  timedOut.summary = "time limit";
  emit panel.pipeline()->stepFinished(timedOut);
  EXPECT_FALSE(panel.failurePictures()->isVisible());

  emit panel.pipeline()->stepFinished(failed);
  ASSERT_TRUE(panel.failurePictures()->isVisible());
  ui::KernelStepResult passed;
  passed.step = ui::KernelStep::Check;
  passed.ok = true;
  passed.summary = "passed 12 random shapes";
  emit panel.pipeline()->stepFinished(passed);
  EXPECT_FALSE(panel.failurePictures()->isVisible());
}

// The picture in docs/your-kernel.md: CONVSCOPE_SCREENSHOT_DIR=docs/images writes it there.
TEST(FailurePictures, Screenshot) {
  const QString folder = qEnvironmentVariable("CONVSCOPE_SCREENSHOT_DIR");
  if (folder.isEmpty()) GTEST_SKIP() << "set CONVSCOPE_SCREENSHOT_DIR to write the screenshot";
  ShownPictures shown(QSize(760, 520));
  hover(shown.widget, *shown.widget.elementCentre(Picture::Verdicts, 10, 7));
  ASSERT_TRUE(::convscope::testing::shown(shown.widget).save(QDir(folder).filePath("your-kernel-wrong-pattern.png")));
  // The whole tab at the smallest window size, normal and in presentation mode, to look at.
  if (qEnvironmentVariableIsEmpty("CONVSCOPE_SCREENSHOT_PANEL")) return;
  for (bool presenting : {false, true}) {
    ui::setPresentationMode(presenting);
    ui::JobRunner jobs;
    ui::UserKernelPanel panel(&jobs);
    panel.resize(1024, 700);
    panel.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
    ui::KernelStepResult failed;
    failed.step = ui::KernelStep::Check;
    failed.summary = "wrong at [n=0][m=0][h=8][w=0]: expected 0.53, got nan";
    failed.failureMap = patternedMap();
    emit panel.pipeline()->stepFinished(failed);
    ASSERT_TRUE(::convscope::testing::shown(panel).save(
        QDir(folder).filePath(presenting ? "panel-presenting.png" : "panel.png")));
  }
  ui::setPresentationMode(false);
}

}  // namespace
}  // namespace convscope::testing
