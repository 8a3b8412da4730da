// Drawing: strokes made with the mouse on the canvas are framed like a data-set picture and
// classified while the pen moves; undo and clear work; a burst of pen movements is coalesced
// rather than queued.
#include <gtest/gtest.h>

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QTimer>

#include <cstdio>

#include "app/core/model/onnx_loader.h"
#include "app/gui/explore_view.h"
#include "tests/core/plasma_fractal.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/prediction_panel.h"
#include "ui/input/drawing_canvas.h"
#include "ui/input/drawing_panel.h"
#include "ui/input/drawing_preprocessing.h"
#include "ui/input/input_panel.h"

namespace convscope::testing {
namespace {

// A stroke through `points` (canvas fractions 0..1), as a mouse would make it.
void stroke(ui::DrawingCanvas* canvas, const std::vector<QPointF>& points) {
  const auto at = [&](const QPointF& p) {
    const int side = std::min(canvas->width(), canvas->height());
    const QPoint corner((canvas->width() - side) / 2, (canvas->height() - side) / 2);
    return corner + QPoint(static_cast<int>(p.x() * side), static_cast<int>(p.y() * side));
  };
  QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, at(points.front()));
  for (size_t i = 1; i < points.size(); ++i) {
    // Intermediate positions, as a real pen reports them.
    for (int step = 1; step <= 4; ++step) {
      const QPointF p = points[i - 1] + (points[i] - points[i - 1]) * (step / 4.0);
      QTest::mouseMove(canvas, at(p));
    }
  }
  QTest::mouseRelease(canvas, Qt::LeftButton, Qt::NoModifier, at(points.back()));
}

void saveShotIfAsked(gui::MainWindow& window, const char* name) {
  // CONVSCOPE_UI_SHOTS=folder keeps a picture of the window (for the README's screenshots).
  const QString folder = qEnvironmentVariable("CONVSCOPE_UI_SHOTS");
  if (!folder.isEmpty()) window.grab().save(QDir(folder).filePath(name));
}

TEST(Drawing, StrokesOnTheCanvasAreClassifiedAsTheyAreDrawn) {
  auto window = openWindow();
  ASSERT_TRUE(window->selectTab("draw"));
  ui::DrawingCanvas* canvas = window->inputPanel()->drawing()->canvas();
  ASSERT_TRUE(canvas->isVisible());
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_EQ(window->inference()->lastOutcome(), nullptr) << "an empty canvas is not classified";
  EXPECT_TRUE(window->view<gui::ExploreView>("explore")->prediction()->headline().contains("Draw"))
      << window->view<gui::ExploreView>("explore")->prediction()->headline().toStdString();

  // Trousers: two thick legs, then the waistband.
  window->inputPanel()->drawing()->setBrushSize(44);
  stroke(canvas, {{0.4, 0.1}, {0.33, 0.92}});
  ASSERT_TRUE(waitForInference(*window));
  const auto first = window->inference()->lastOutcome();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->input.description, "Drawing");
  EXPECT_EQ(first->input.label, ImageSet::kNoLabel);
  EXPECT_FALSE(window->view<gui::ExploreView>("explore")->prediction()->shownTopClassName().isEmpty());

  stroke(canvas, {{0.6, 0.1}, {0.67, 0.92}});
  stroke(canvas, {{0.4, 0.1}, {0.6, 0.1}});
  ASSERT_TRUE(waitForInference(*window));
  const auto second = window->inference()->lastOutcome();
  ASSERT_NE(second, first);
  EXPECT_NE(second->probabilities, first->probabilities) << "the prediction follows the drawing";
  // The picture the model saw is the canvas, framed: a 28x28 data-set frame, resized to 48x48.
  const Picture framed = window->inputPanel()->drawing()->framedPicture();
  EXPECT_EQ(second->input.image.pixels, framed.pixels);
  EXPECT_EQ(second->layers[0].value.shape(), (Shape{1, 1, 48, 48}));
  saveShotIfAsked(*window, "drawing.png");

  // Undo takes back the last stroke; clear empties the canvas and the prediction.
  window->inputPanel()->drawing()->canvas()->undo();
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_NE(window->inference()->lastOutcome()->input.image.pixels, framed.pixels);
  canvas->clear();
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_TRUE(canvas->isEmpty());
  EXPECT_EQ(window->inference()->lastOutcome(), nullptr);
  EXPECT_TRUE(window->view<gui::ExploreView>("explore")->prediction()->headline().contains("Draw"));
}

// The default brush is as thick as the data set's garments are at the size one draws them: a pair
// of trousers drawn as two legs, one stroke each, and a waistband, is read as trousers, whether
// drawn over most of the canvas or over half of it. (With a brush of 6, course-high reads the
// thin legs as a bag or a dress.)
TEST(Drawing, TrousersDrawnWithTheDefaultBrushAreClassifiedAsTrousers) {
  auto window = openWindow();
  ASSERT_EQ(window->model()->name, "course-high");
  ASSERT_TRUE(window->selectTab("draw"));
  ui::DrawingCanvas* canvas = window->inputPanel()->drawing()->canvas();
  ASSERT_EQ(canvas->brushSize(), ui::DrawingCanvas::kDefaultBrush);
  ASSERT_EQ(window->inputPanel()->drawing()->brushSize(), ui::DrawingCanvas::kDefaultBrush) << "the slider agrees";
  const int trouser = 1;  // Fashion-MNIST's class 1
  ASSERT_EQ(window->classNames()[trouser], "Trouser");
  for (const double half : {0.39, 0.25}) {  // half the height of the drawing, as a canvas fraction
    SCOPED_TRACE(half);
    canvas->clear();
    const double top = 0.5 - half, bottom = 0.5 + half, spread = half * 0.2;
    stroke(canvas, {{0.5 - spread, top}, {0.5 - 2 * spread, bottom}});  // left leg
    stroke(canvas, {{0.5 + spread, top}, {0.5 + 2 * spread, bottom}});  // right leg
    stroke(canvas, {{0.5 - spread, top}, {0.5 + spread, top}});         // waistband
    ASSERT_TRUE(waitForInference(*window));
    const auto outcome = window->inference()->lastOutcome();
    ASSERT_NE(outcome, nullptr);
    EXPECT_EQ(outcome->topClass(), trouser)
        << "shown: " << window->view<gui::ExploreView>("explore")->prediction()->headline().toStdString();
  }
  saveShotIfAsked(*window, "drawing-trousers.png");
}

// Issue 30, item 7: a picture unlike anything the model was measured on (the walkthrough's plasma
// fractal, "Trouser 95.5 %") gets a confident bar chart, and now a hint in words under it; a
// picture of the test set itself gets none, and a drawing is told where it lies.
TEST(PictureHints, APlasmaFractalIsSaidToBeUnlikeTheTestSetAndATestPictureIsNot) {
  auto window = openWindow();
  ASSERT_NE(window->testSet(), nullptr);
  ui::InputImage plasma;
  plasma.image = plasmaFractal(65, 1);
  plasma.description = "plasma.png";
  window->inference()->classify(plasma);
  ASSERT_TRUE(waitForInference(*window, 60000));
  auto outcome = window->inference()->lastOutcome();
  ASSERT_NE(outcome, nullptr);
  ASSERT_TRUE(outcome->dataSetDistance.has_value());
  EXPECT_TRUE(outcome->dataSetDistance->unlike()) << outcome->dataSetDistance->shareCloser;
  const QString shown = window->view<gui::ExploreView>("explore")->prediction()->headline();
  EXPECT_TRUE(shown.contains("Unlike the test set's pictures")) << shown.toStdString();
  EXPECT_TRUE(shown.contains("its answer means little")) << shown.toStdString();
  saveShotIfAsked(*window, "plasma-unlike-the-test-set.png");

  ui::InputImage test;
  test.image = window->testSet()->image(4321);
  test.label = window->testSet()->label(4321);
  test.testIndex = 4321;
  test.description = "Test image #4321";
  window->inference()->classify(test);
  ASSERT_TRUE(waitForInference(*window, 60000));
  outcome = window->inference()->lastOutcome();
  EXPECT_FALSE(outcome->dataSetDistance.has_value()) << "the set's own pictures need no hint";
  EXPECT_FALSE(window->view<gui::ExploreView>("explore")->prediction()->headline().contains("test set's pictures"));

  // The same picture as a user's (no label): like the test set.
  test.label = ImageSet::kNoLabel;
  test.description = "a garment";
  window->inference()->classify(test);
  ASSERT_TRUE(waitForInference(*window, 60000));
  outcome = window->inference()->lastOutcome();
  ASSERT_TRUE(outcome->dataSetDistance.has_value());
  EXPECT_FALSE(outcome->dataSetDistance->unusual()) << outcome->dataSetDistance->shareCloser;
  EXPECT_TRUE(
      window->view<gui::ExploreView>("explore")->prediction()->headline().contains("Like the test set's pictures"))
      << window->view<gui::ExploreView>("explore")->prediction()->headline().toStdString();
}

// Op times measured while the machine was loaded say so: by the load average, and by a total far
// above the recent pictures' (the walkthrough saw 0.03 to 7.9 ms a layer with no word).
TEST(PictureHints, OpTimesMeasuredUnderLoadSaySo) {
  ui::PredictionPanel panel;
  panel.setClassNames({"a", "b"});
  const auto outcomeTaking = [](double seconds, double load) {
    auto o = std::make_shared<ui::InferenceOutcome>();
    o->modelName = "m";
    o->variant = "cpu-reference";
    o->deviceName = "CPU";
    o->probabilities = {0.3f, 0.7f};
    o->timedRuns = 5;
    o->cores = 2;
    o->loadAverage = load;
    ConvLayerTime t;
    t.node = "/0/Conv";
    t.variant = "cpu-reference";
    t.seconds = seconds;
    o->convTimes = {t};
    return o;
  };
  for (int i = 0; i < 4; ++i) {
    panel.setOutcome(outcomeTaking(0.00003, 0.5));
    EXPECT_FALSE(panel.timesText().contains("Measured")) << panel.timesText().toStdString();
  }
  panel.setOutcome(outcomeTaking(0.0079, 0.5));
  EXPECT_TRUE(panel.timesText().contains("263.3× the median of the last 4 pictures"))
      << panel.timesText().toStdString();
  panel.setOutcome(outcomeTaking(0.00003, 3.4));
  EXPECT_TRUE(panel.timesText().contains("under load (load average 3.4 on 2 cores)"))
      << panel.timesText().toStdString();
  EXPECT_FALSE(panel.timesText().contains("median of the last")) << panel.timesText().toStdString();
}

TEST(Drawing, APenMovingFastEndsOnTheLatestPicture) {
  auto window = openWindow();
  ASSERT_TRUE(window->selectTab("draw"));
  ui::DrawingCanvas* canvas = window->inputPanel()->drawing()->canvas();
  // 60 pen movements delivered at once, without the event loop running in between.
  QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, QPoint(60, 60));
  for (int i = 0; i < 60; ++i) {
    const QPointF point(60 + 3 * i, 60 + 2 * i);
    QMouseEvent move(QEvent::MouseMove, point, canvas->mapToGlobal(point), Qt::NoButton, Qt::LeftButton,
                     Qt::NoModifier);
    QApplication::sendEvent(canvas, &move);
  }
  QTest::mouseRelease(canvas, Qt::LeftButton, Qt::NoModifier, QPoint(240, 180));
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_EQ(window->inference()->lastOutcome()->input.image.pixels,
            window->inputPanel()->drawing()->framedPicture().pixels)
      << "the last result shown is for the last picture";
  RecordProperty("worker_ms_per_update", std::to_string(window->inference()->lastOutcome()->seconds * 1e3));
}

// Every pen movement reaches the screen as a new prediction. The latency is printed and recorded
// (19 ms median on the 2-core development machine) but not asserted: timings belong in
// benchmarks, and a loaded CI machine would make such a check fail for reasons of its own.
TEST(Drawing, EveryPenMovementUpdatesThePredictionOnScreen) {
  auto window = openWindow();
  ASSERT_TRUE(window->selectTab("draw"));
  ui::DrawingCanvas* canvas = window->inputPanel()->drawing()->canvas();
  // From a pen movement to its prediction and feature maps painted on screen: the canvas update,
  // the framing, the inference on the worker, and a synchronous repaint of the whole window.
  QElapsedTimer clock;
  std::vector<double> milliseconds;
  bool shown = false;
  QObject::connect(window->inference(), &ui::InferenceController::outcomeReady, window.get(), [&] {
    window->centralWidget()->repaint();
    milliseconds.push_back(clock.nsecsElapsed() / 1e6);
    shown = true;
  });
  QTimer wakeUp;  // so the wait below can look at its deadline even if nothing else happens
  wakeUp.start(100);
  QTest::mousePress(canvas, Qt::LeftButton, Qt::NoModifier, QPoint(80, 60));
  ASSERT_TRUE(waitForInference(*window));
  milliseconds.clear();  // that was the press; time the movements
  for (int i = 0; i < 25; ++i) {
    shown = false;
    clock.start();
    const QPointF point(80 + 6 * i, 60 + 7 * i);
    QMouseEvent move(QEvent::MouseMove, point, canvas->mapToGlobal(point), Qt::NoButton, Qt::LeftButton,
                     Qt::NoModifier);
    QApplication::sendEvent(canvas, &move);
    // Sleep until the next event arrives (QTest::qWaitFor would add its own 10 ms naps).
    QDeadlineTimer deadline(10000);
    while (!shown && !deadline.hasExpired()) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    ASSERT_TRUE(shown);
  }
  QTest::mouseRelease(canvas, Qt::LeftButton, Qt::NoModifier, QPoint(230, 235));
  std::sort(milliseconds.begin(), milliseconds.end());
  const double median = milliseconds[milliseconds.size() / 2];
  RecordProperty("median_update_ms", std::to_string(median));
  std::printf("pen movement to prediction and maps on screen: median %.1f ms, max %.1f ms\n", median,
              milliseconds.back());
  EXPECT_EQ(milliseconds.size(), 25u) << "one update on screen per pen movement";
}

TEST(InferenceController, CoalescesRequestsThatArriveWhileOneRuns) {
  ui::JobRunner jobs;
  ui::InferenceController controller(&jobs);
  controller.setModel(loadOnnxModel(modelPath("course-high").toStdString()));
  controller.setVariant("cpu-reference");
  int outcomes = 0;
  QObject::connect(&controller, &ui::InferenceController::outcomeReady, &controller, [&] { ++outcomes; });
  constexpr int kRequests = 200;
  for (int i = 0; i < kRequests; ++i) {
    ui::InputImage input;
    input.image = Picture{28, 28, std::vector<float>(28 * 28, static_cast<float>(i) / kRequests)};
    input.testIndex = i;
    controller.classify(input);  // far faster than an inference: most replace a waiting request
  }
  EXPECT_TRUE(controller.busy());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !controller.busy(); }, 30000));
  EXPECT_GE(outcomes, 1);
  EXPECT_LT(outcomes, kRequests / 4) << "waiting requests are replaced, not queued";
  ASSERT_NE(controller.lastOutcome(), nullptr);
  EXPECT_EQ(controller.lastOutcome()->input.testIndex, kRequests - 1) << "the newest request is always done";

  // Clearing the input drops what is still on its way.
  controller.classify(controller.lastOutcome()->input);
  controller.clearInput();
  EXPECT_FALSE(controller.busy());
  QTest::qWait(100);
  EXPECT_EQ(controller.lastOutcome(), nullptr);
}

TEST(DrawingPreprocessing, CentresTheStrokesAndScalesThemToFillTheFrame) {
  QImage drawing(280, 280, QImage::Format_RGB32);
  drawing.fill(Qt::black);
  // A small white bar (40 wide, 20 high) in the top-left corner.
  for (int y = 10; y < 30; ++y)
    for (int x = 20; x < 60; ++x) drawing.setPixel(x, y, qRgb(255, 255, 255));
  EXPECT_EQ(ui::inkBounds(drawing.convertToFormat(QImage::Format_Grayscale8)), QRect(20, 10, 40, 20));
  const Picture framed = ui::frameDrawing(drawing, 28);
  ASSERT_EQ(framed.height, 28);
  ASSERT_EQ(framed.width, 28);
  // The longer side spans the whole frame; the shorter one is centred: rows 7..20 lit.
  EXPECT_GT(framed.at(14, 0), 0.9f);
  EXPECT_GT(framed.at(14, 27), 0.9f);
  EXPECT_GT(framed.at(8, 14), 0.9f);
  EXPECT_LT(framed.at(2, 14), 0.05f);
  EXPECT_LT(framed.at(25, 14), 0.05f);
  float top = 0, bottom = 0;
  for (int x = 0; x < 28; ++x) top += framed.at(7, x), bottom += framed.at(20, x);
  EXPECT_GT(top, 20.0f);
  EXPECT_NEAR(top, bottom, 0.5f) << "vertically centred";

  QImage empty(100, 100, QImage::Format_RGB32);
  empty.fill(Qt::black);
  const Picture blank = ui::frameDrawing(empty, 28);
  EXPECT_TRUE(std::all_of(blank.pixels.begin(), blank.pixels.end(), [](float v) { return v == 0.0f; }));
}

}  // namespace
}  // namespace convscope::testing
