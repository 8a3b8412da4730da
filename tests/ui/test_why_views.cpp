// The views that show why: the Arithmetic tab (one conv output pixel computed term by term), the
// Weights tab (every filter as signed colours) and the Where-it-fails tab (the confusion matrix
// over the whole test set and the images behind it). Each is driven as a user would, and what it
// shows is checked against an independent computation: the engine's own captured layer output,
// the weights in the model file, and a classification of the test set run here with the same
// classify() the CLI uses.
#include <gtest/gtest.h>

#include <set>

#include <QTabWidget>

#include <QComboBox>

#include <QSpinBox>

#include <QRegularExpression>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "app/core/data/image_file.h"
#include "app/core/engine/classifier.h"
#include "app/core/engine/conv_pixel.h"
#include "app/gui/explore_view.h"
#include "tests/ui/ui_test_support.h"
#include "ui/common/presentation_mode.h"
#include "ui/explain/conv_arithmetic_view.h"
#include "ui/explain/conv_products_canvas.h"
#include "ui/explain/kernel_grid_widget.h"
#include "ui/explain/kernel_weights_view.h"
#include "ui/explain/pixel_picker_map.h"
#include "ui/failures/confusion_matrix_widget.h"
#include "ui/failures/confusion_view.h"
#include "ui/input/dataset_browser.h"
#include "ui/input/dataset_model.h"
#include "ui/input/input_panel.h"
#include "ui/jobs/test_set_evaluation_job.h"
#include "ui/maps/feature_map_view.h"
#include "ui/maps/layer_maps_widget.h"
#include "ui/maps/map_zoom_dialog.h"
#include "ui/model/variant_selector.h"

namespace convscope::testing {
namespace {

struct PresentationOff {
  ~PresentationOff() { ui::setPresentationMode(false); }
};

// The captured output of the conv layer the view shows, at the pixel it shows: what the Explore
// tab's map of that layer holds.
float engineOutputAt(gui::MainWindow& window, const ui::ConvArithmeticView& view) {
  const auto outcome = window.inference()->lastOutcome();
  const int node = convNodeIndices(*window.model())[static_cast<size_t>(view.convLayer())];
  const std::string& name = window.model()->nodes[static_cast<size_t>(node)].name;
  for (const LayerOutput& layer : outcome->layers)
    if (layer.node == name) {
      const ConvPixelBreakdown& b = *view.breakdown();
      const int height = static_cast<int>(layer.value.dim(2)), width = static_cast<int>(layer.value.dim(3));
      return layer.value[(int64_t{b.outChannel} * height + b.y) * width + b.x];
    }
  ADD_FAILURE() << "layer " << name << " was not captured";
  return NAN;
}

void expectArithmeticMatches(gui::MainWindow& window, int y, int x) {
  ui::ConvArithmeticView* view = window.view<ui::ConvArithmeticView>("arithmetic");
  SCOPED_TRACE("layer " + std::to_string(view->convLayer()) + " pixel y " + std::to_string(y) + ", x " +
               std::to_string(x));
  ASSERT_TRUE(view->breakdown().has_value()) << view->message().toStdString();
  EXPECT_EQ(view->breakdown()->y, y);
  EXPECT_EQ(view->breakdown()->x, x);
  const float expected = engineOutputAt(window, *view);
  EXPECT_NEAR(view->breakdown()->result(), expected, 1e-5);
  ASSERT_TRUE(view->layerValue().has_value());
  EXPECT_EQ(*view->layerValue(), expected);
  EXPECT_TRUE(view->equationText().contains(QString::number(view->breakdown()->result(), 'g', 8)))
      << view->equationText().toStdString();
}

// Animate says Stop while it runs; the controls beside the pixel label stay put as its numbers
// change; the hints name tabs the window has.
TEST(WhyViews, ArithmeticControlsSayWhatAClickDoesAndStayInPlace) {
  auto window = openWindow();
  ASSERT_TRUE(window->selectTab("arithmetic"));
  ui::ConvArithmeticView* view = window->view<ui::ConvArithmeticView>("arithmetic");
  QPushButton* animate = view->animateButton();
  EXPECT_EQ(animate->text(), "Animate");
  const int animateX = animate->x();
  view->selectConvLayer(0);
  view->selectPixel(0, 0);
  QCoreApplication::processEvents();
  const int filterX = view->filterChoice()->x(), layerWidth = view->layerChoice()->width();
  view->selectPixel(view->picker()->mapHeight() - 1, view->picker()->mapWidth() - 1);  // two-digit numbers
  QCoreApplication::processEvents();
  EXPECT_EQ(view->filterChoice()->x(), filterX);
  EXPECT_EQ(view->layerChoice()->width(), layerWidth) << "the layer choice jumps as the pixel label grows";
  QTest::mouseClick(animate, Qt::LeftButton);
  EXPECT_EQ(animate->text(), "Stop") << "a running animation offers to stop";
  QCoreApplication::processEvents();
  EXPECT_EQ(animate->x(), animateX);
  QTest::mouseClick(animate, Qt::LeftButton);
  EXPECT_EQ(animate->text(), "Animate");
  // Every tab a hint sends the user to exists.
  QStringList titles;
  for (QTabWidget* tabs : window->findChildren<QTabWidget*>())
    for (int i = 0; i < tabs->count(); ++i) titles << tabs->tabText(i).replace("&&", "&");
  view->setOutcome(nullptr);
  const QString hint = view->message() + view->equationText();
  const QRegularExpression named("the ([A-Z][^()]*?) tab");
  for (auto match = named.globalMatch(hint); match.hasNext();) {
    const QString tab = match.next().captured(1);
    EXPECT_TRUE(titles.contains(tab)) << "the hint names a tab that does not exist: " << tab.toStdString();
  }
}

TEST(WhyViews, ArithmeticOfAClickedPixelEqualsTheLayerOutputAndArrowKeysStepTheWindow) {
  auto window = openWindow();
  ASSERT_TRUE(window->selectTab("arithmetic"));
  ui::ConvArithmeticView* view = window->view<ui::ConvArithmeticView>("arithmetic");
  ASSERT_EQ(view->convLayerCount(), 2);  // course-high: two conv layers
  for (int layer = 0; layer < view->convLayerCount(); ++layer) {
    view->selectConvLayer(layer);
    view->selectFilter(layer == 0 ? 5 : 17);
    ui::PixelPickerMap* map = view->picker();
    const int h = map->mapHeight(), w = map->mapWidth();
    ASSERT_GT(h, 0);
    // Corners and edges, where the window reaches the input's border, and the middle.
    for (const auto& [y, x] : std::vector<std::pair<int, int>>{{0, 0}, {h - 1, w - 1}, {0, w - 1}, {h / 2, w / 3}}) {
      QTest::mouseClick(map, Qt::LeftButton, {}, map->pointOf(y, x));
      expectArithmeticMatches(*window, y, x);
    }
    QTest::keyClick(map, Qt::Key_Left);
    expectArithmeticMatches(*window, h / 2, w / 3 - 1);
    QTest::keyClick(map, Qt::Key_Down);
    expectArithmeticMatches(*window, h / 2 + 1, w / 3 - 1);
    for (int i = 0; i < w; ++i) QTest::keyClick(map, Qt::Key_Right);  // stops at the edge
    expectArithmeticMatches(*window, h / 2 + 1, w - 1);
  }
  // Conv 2 reads twelve channels: a row each, all of them in the (scrollable) breakdown.
  view->selectConvLayer(1);
  QCoreApplication::processEvents();
  ui::ConvProductsCanvas* canvas = view->canvas();
  EXPECT_GE(canvas->height(), 12 * 7 * canvas->cellSize());

  // The same value as the Explore tab's map reads out under the pointer.
  view->selectConvLayer(0);
  view->selectFilter(5);
  view->selectPixel(20, 13);
  window->selectTab("explore");
  ui::LayerMapsWidget* conv = window->view<gui::ExploreView>("explore")->maps()->layer(1);
  QTest::mouseMove(conv, conv->pointOf(5, 20, 13));
  EXPECT_TRUE(window->view<gui::ExploreView>("explore")->maps()->readout().contains(
      QString::number(*view->layerValue(), 'g', 3)))
      << window->view<gui::ExploreView>("explore")->maps()->readout().toStdString();
}

TEST(WhyViews, AClickOnAPixelOfAnEnlargedConvMapOpensItsArithmetic) {
  auto window = openWindow();
  ui::LayerMapsWidget* conv2 = nullptr;
  for (int i = 0; i < window->view<gui::ExploreView>("explore")->maps()->layerCount(); ++i)
    if (window->view<gui::ExploreView>("explore")->maps()->layer(i)->title().startsWith("conv 2"))
      conv2 = window->view<gui::ExploreView>("explore")->maps()->layer(i);
  ASSERT_NE(conv2, nullptr);
  QTest::mouseClick(conv2, Qt::LeftButton, {}, conv2->pointOf(9, 3, 14));  // enlarges filter 9
  ui::MapZoomDialog* zoom = window->view<gui::ExploreView>("explore")->maps()->zoomDialog();
  ASSERT_NE(zoom, nullptr);
  ui::LayerMapsWidget* enlarged = zoom->mapWidget();
  QTest::mouseClick(enlarged, Qt::LeftButton, {}, enlarged->pointOf(9, 0, 14));  // the top edge
  ui::ConvArithmeticView* view = window->view<ui::ConvArithmeticView>("arithmetic");
  EXPECT_TRUE(view->isVisible()) << "the Arithmetic tab is shown";
  EXPECT_EQ(view->convLayer(), 1);
  ASSERT_TRUE(view->breakdown().has_value());
  EXPECT_EQ(view->breakdown()->outChannel, 9);
  expectArithmeticMatches(*window, 0, 14);
  // A map that is no conv layer's (the pooling after it) offers nothing: the tab stays.
  window->selectTab("explore");
  ui::LayerMapsWidget* pool = window->view<gui::ExploreView>("explore")->maps()->layer(3);
  ASSERT_TRUE(pool->title().contains("pool")) << pool->title().toStdString();
  QTest::mouseClick(pool, Qt::LeftButton, {}, pool->pointOf(2, 1, 1));
  QTest::mouseClick(zoom->mapWidget(), Qt::LeftButton, {}, zoom->mapWidget()->pointOf(2, 1, 1));
  EXPECT_FALSE(view->isVisible());
  EXPECT_EQ(view->breakdown()->outChannel, 9);
}

TEST(WhyViews, ArithmeticOnAPaddedModelCountsThePaddingAndStillMatches) {
  auto window = openWindow();
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("lenet5")));
  ASSERT_TRUE(waitForInference(*window));
  ASSERT_TRUE(window->selectTab("arithmetic"));
  ui::ConvArithmeticView* view = window->view<ui::ConvArithmeticView>("arithmetic");
  ASSERT_GT(view->convLayerCount(), 0);
  bool sawPadding = false;
  for (int layer = 0; layer < view->convLayerCount(); ++layer) {
    view->selectConvLayer(layer);
    const int h = view->picker()->mapHeight(), w = view->picker()->mapWidth();
    for (const auto& [y, x] : std::vector<std::pair<int, int>>{{0, 0}, {h - 1, w - 1}, {h / 2, 0}, {h / 2, w / 2}}) {
      view->selectPixel(y, x);
      expectArithmeticMatches(*window, y, x);
      for (bool p : view->breakdown()->padding) sawPadding = sawPadding || p;
    }
  }
  // lenet5's first conv keeps 28 x 28 with pads 2: its corner windows hang over the padding.
  EXPECT_EQ(view->breakdown().has_value(), true);
  EXPECT_TRUE(sawPadding) << "no checked window covered padding: is lenet5's first conv still padded?";
}

TEST(WhyViews, AnimationStepsTheWindowAcrossTheMap) {
  auto window = openWindow();
  window->selectTab("arithmetic");
  ui::ConvArithmeticView* view = window->view<ui::ConvArithmeticView>("arithmetic");
  view->selectPixel(3, view->picker()->mapWidth() - 1);
  view->stepForward();  // wraps to the next row
  expectArithmeticMatches(*window, 4, 0);
  view->animateButton()->click();
  EXPECT_TRUE(QTest::qWaitFor([&] { return view->breakdown() && view->breakdown()->x >= 2; }, 5000));
  view->animateButton()->click();
  const int stoppedAt = view->breakdown()->x;
  QTest::qWait(500);
  EXPECT_EQ(view->breakdown()->x, stoppedAt) << "the animation goes on after it was stopped";
  expectArithmeticMatches(*window, 4, stoppedAt);
}

TEST(WhyViews, WeightsShowEveryFilterOfEveryConvLayerInItsSignedColour) {
  auto window = openWindow();
  window->selectTab("weights");
  for (const char* name : {"course-high", "lenet5"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(loadModelAndWait(*window, modelPath(name)));
    ui::KernelWeightsView* view = window->view<ui::KernelWeightsView>("weights");
    const std::vector<int> convs = convNodeIndices(*window->model());
    ASSERT_EQ(view->layerCount(), static_cast<int>(convs.size()));
    for (int i = 0; i < view->layerCount(); ++i) {
      const Node& node = window->model()->nodes[static_cast<size_t>(convs[static_cast<size_t>(i)])];
      const Tensor& w = window->model()->weights.at(node.inputs[1]);
      ui::KernelGridWidget* grid = view->layer(i);
      EXPECT_EQ(grid->filterCount(), w.dim(0));
      EXPECT_EQ(grid->inputChannelCount(), w.dim(1));
      float extent = 0.0f;
      for (float v : w.values()) extent = std::max(extent, std::abs(v));
      EXPECT_EQ(grid->extent(), extent);
      // Laid out at the size it asks for (queued after the model arrives), as on screen.
      EXPECT_TRUE(QTest::qWaitFor([&] { return grid->size() == grid->sizeHint(); }, 5000));
      const QImage picture = grid->grab().toImage();
      int checked = 0;
      for (int f = 0; f < grid->filterCount(); ++f)
        for (int c = 0; c < grid->inputChannelCount(); ++c)
          for (int ky = 0; ky < w.dim(2); ++ky)
            for (int kx = 0; kx < w.dim(3); ++kx) {
              const float v = w[((int64_t{f} * w.dim(1) + c) * w.dim(2) + ky) * w.dim(3) + kx];
              if (std::abs(v) < 0.15f * extent) continue;  // near white: the sign is not what the eye reads
              const QColor colour = picture.pixelColor(grid->pointOf(f, c, ky, kx) * picture.devicePixelRatio());
              if (v > 0)
                EXPECT_GT(colour.red(), colour.blue()) << "positive weight " << v << " not red";
              else
                EXPECT_GT(colour.blue(), colour.red()) << "negative weight " << v << " not blue";
              ++checked;
            }
      EXPECT_GT(checked, 10) << "extent " << extent;
      // The pointer reads the weight under it.
      QTest::mouseMove(grid, grid->pointOf(1, 0, 2, 3));
      const float v = w[((int64_t{1} * w.dim(1)) * w.dim(2) + 2) * w.dim(3) + 3];
      EXPECT_TRUE(view->readout().contains(QString::number(v, 'g', 5))) << view->readout().toStdString();
      EXPECT_TRUE(view->readout().contains("filter 1, input channel 0, kernel row 2, column 3"));
    }
  }
}

// Classifies the whole test set here, with the code the CLI's classify command runs.
ClassificationRun classifyAll(gui::MainWindow& window) {
  Engine engine(window.model(), window.variantSelector()->currentVariant().toStdString());
  return classify(engine, *window.testSet(), 0, window.testSet()->count());
}

// The matrix of the whole set (the view shows the matrix so far before it).
std::shared_ptr<const ConfusionMatrix> waitForMatrix(ui::ConfusionView& view) {
  EXPECT_TRUE(QTest::qWaitFor([&] { return view.evaluation() && view.evaluation()->complete; }, 100000))
      << view.statusText().toStdString();
  return view.matrix();
}

// With the slow CPU reference selected, the matrix is computed by the fastest variant of the same
// arithmetic, which the status names, and fills in chunk by chunk before it is whole.
TEST(WhyViews, WhereItFailsUsesTheFastestExactVariantAndFillsInAsItGoes) {
  auto window = openWindow();
  ASSERT_TRUE(window->selectVariant("cpu-reference"));
  const std::string fastest = ui::classifyingVariant("cpu-reference");
  ASSERT_NE(fastest, "cpu-reference") << "a faster FP32 variant exists on every machine (cpu-onednn)";
  EXPECT_EQ(findConvVariant(fastest).arithmetic, "FP32");
  EXPECT_EQ(ui::classifyingVariant("gpu-tensor-tf32"), "gpu-tensor-tf32") << "TF32 mistakes are its own";
  ui::ConfusionView* view = window->view<ui::ConfusionView>("confusion");
  ASSERT_TRUE(window->selectTab("confusion"));
  EXPECT_TRUE(view->statusText().contains(QString::fromStdString(fastest))) << view->statusText().toStdString();
  std::set<int> totalsSeen;
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        if (view->matrix()) totalsSeen.insert(view->matrix()->total());
        return view->evaluation() && view->evaluation()->complete;
      },
      100000));
  const int partialTotals = static_cast<int>(
      std::count_if(totalsSeen.begin(), totalsSeen.end(), [](int total) { return total > 0 && total < 10000; }));
  EXPECT_GE(partialTotals, 2) << "the matrix fills in as it goes";
  EXPECT_EQ(view->evaluation()->variant, "cpu-reference");
  EXPECT_EQ(view->evaluation()->classifiedWith, fastest);
  EXPECT_TRUE(view->statusText().contains(QString::fromStdString(fastest))) << view->statusText().toStdString();
  // The whole matrix is what that variant's classify() gives, image by image.
  Engine engine(window->model(), fastest);
  const ClassificationRun reference = classify(engine, *window->testSet(), 0, window->testSet()->count());
  ASSERT_EQ(view->matrix()->total(), 10000);
  EXPECT_EQ(view->matrix()->correct(), reference.correct);
  for (size_t i = 0; i < reference.images.size(); i += 97)
    EXPECT_EQ(view->evaluation()->run.images[i].predicted, reference.images[i].predicted) << "image " << i;
}

TEST(WhyViews, ConfusionMatrixCoversTheTestSetAndItsDiagonalIsTheClassifiersAccuracy) {
  auto window = openWindow();
  ASSERT_TRUE(window->selectTab("confusion"));  // showing the tab starts the evaluation
  ui::ConfusionView* view = window->view<ui::ConfusionView>("confusion");
  EXPECT_TRUE(view->running());
  const auto matrix = waitForMatrix(*view);
  ASSERT_NE(matrix, nullptr);
  ASSERT_EQ(window->testSet()->count(), 10000);
  int sum = 0, diagonal = 0;
  for (int t = 0; t < matrix->classes(); ++t)
    for (int p = 0; p < matrix->classes(); ++p) {
      sum += matrix->count(t, p);
      if (t == p) diagonal += matrix->count(t, p);
      EXPECT_EQ(view->matrixWidget()->cellText(t, p), QString::number(matrix->count(t, p)));
    }
  EXPECT_EQ(sum, 10000);
  const ClassificationRun reference = classifyAll(*window);
  EXPECT_EQ(reference.labelled, 10000);
  EXPECT_DOUBLE_EQ(diagonal / 10000.0, reference.accuracy());
  EXPECT_TRUE(view->statusText().contains(QString("%1 of 10000").arg(reference.correct)))
      << view->statusText().toStdString();
  // Each class's accuracy beside its row, counted here image by image.
  for (int t = 0; t < matrix->classes(); ++t) {
    int images = 0, right = 0;
    for (const ImageClassification& c : reference.images) {
      images += c.label == t;
      right += c.label == t && c.predicted == t;
    }
    EXPECT_EQ(view->matrixWidget()->accuracyText(t), QString("%1 %").arg(100.0 * right / images, 0, 'f', 1)) << t;
  }

  // Without a chosen cell: every mistake, the most confident first.
  EXPECT_EQ(static_cast<int>(view->listedImages().size()), std::min(2000, 10000 - reference.correct));
  EXPECT_TRUE(view->listTitle().contains(QString::number(10000 - reference.correct)));
  float previous = 2.0f;
  for (int index : view->listedImages()) {
    const ImageClassification& c = reference.images[static_cast<size_t>(index)];
    EXPECT_NE(c.predicted, c.label) << "#" << index;
    const float confidence = c.probabilities[static_cast<size_t>(c.predicted)];
    EXPECT_LE(confidence, previous + 1e-6f);
    previous = confidence;
  }

  // Choosing a mistake shows its ten probabilities, largest first.
  view->imageList()->setCurrentRow(0);
  {
    const ImageClassification& c = reference.images[static_cast<size_t>(view->listedImages()[0])];
    const QString top =
        QString("%1 %2 %")
            .arg(QString::fromStdString(window->testSet()->classNames()[static_cast<size_t>(c.predicted)]))
            .arg(100.0 * c.probabilities[static_cast<size_t>(c.predicted)], 0, 'f', 1);
    EXPECT_TRUE(view->probabilitiesText().contains(QString("#%1").arg(c.index)))
        << view->probabilitiesText().toStdString();
    EXPECT_EQ(view->probabilitiesText().indexOf(top), view->probabilitiesText().indexOf(": ") + 2)
        << view->probabilitiesText().toStdString() << " should start with " << top.toStdString();
  }

  // A click on the largest confusion lists exactly its images.
  int worstTrue = 0, worstPredicted = 1;
  for (int t = 0; t < matrix->classes(); ++t)
    for (int p = 0; p < matrix->classes(); ++p)
      if (t != p && matrix->count(t, p) > matrix->count(worstTrue, worstPredicted)) worstTrue = t, worstPredicted = p;
  QTest::mouseClick(view->matrixWidget(), Qt::LeftButton, {}, view->matrixWidget()->pointOf(worstTrue, worstPredicted));
  int expectedInCell = 0;
  for (const ImageClassification& c : reference.images)
    expectedInCell += c.label == worstTrue && c.predicted == worstPredicted;
  ASSERT_EQ(static_cast<int>(view->listedImages().size()), expectedInCell);
  ASSERT_GT(expectedInCell, 0);
  for (int index : view->listedImages()) {
    EXPECT_EQ(window->testSet()->label(index), worstTrue);
    EXPECT_EQ(reference.images[static_cast<size_t>(index)].predicted, worstPredicted);
  }

  // Choosing one opens it in the Explore tab, where the engine's class for it is the mistake.
  const int chosen = view->listedImages()[1];
  QListWidget* list = view->imageList();
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->item(1)).center());
  EXPECT_EQ(window->inputPanel()->browser()->currentImage(), chosen);
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_TRUE(window->view<gui::ExploreView>("explore")->maps()->isVisible());
  EXPECT_EQ(window->inference()->lastOutcome()->input.testIndex, chosen);
  EXPECT_EQ(window->inference()->lastOutcome()->topClass(), worstPredicted);
}

TEST(WhyViews, ConfusionEvaluationCanBeCancelledAndIsRedoneForANewModelOrVariant) {
  auto window = openWindow();
  ui::ConfusionView* view = window->view<ui::ConfusionView>("confusion");
  window->selectTab("confusion");
  ASSERT_TRUE(view->running());
  EXPECT_TRUE(view->progressBar()->isVisible());
  view->cancelButton()->click();
  EXPECT_TRUE(QTest::qWaitFor([&] { return !view->running(); }, 60000));
  EXPECT_EQ(view->matrix(), nullptr);
  EXPECT_TRUE(view->statusText().startsWith("Cancelled")) << view->statusText().toStdString();
  EXPECT_FALSE(view->progressBar()->isVisible());

  // A new model while the tab is shown: its own matrix, computed at once; a new variant while
  // that runs replaces it.
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("course-low")));
  EXPECT_TRUE(view->running());
  const QString variant = "cpu-im2col-gemm";
  ASSERT_NE(window->variantSelector()->currentVariant(), variant);
  ASSERT_TRUE(window->selectVariant(variant));
  EXPECT_TRUE(view->running());
  const auto matrix = waitForMatrix(*view);
  ASSERT_NE(matrix, nullptr);
  EXPECT_EQ(view->evaluation()->model, window->model());
  EXPECT_EQ(view->evaluation()->variant, variant.toStdString());
  EXPECT_EQ(matrix->total(), 10000);
  EXPECT_FALSE(view->running()) << "the superseded evaluation is still running";
  EXPECT_TRUE(view->statusText().startsWith("course-low")) << view->statusText().toStdString();
}

TEST(WhyViews, EachViewExportsToPngAndPdfAndGrowsInPresentationMode) {
  PresentationOff restore;
  auto window = openWindow();
  window->selectTab("arithmetic");
  QTemporaryDir dir;
  const int arithmeticFont = window->view<ui::ConvArithmeticView>("arithmetic")->canvas()->fontInfo().pixelSize();
  const int matrixFont = window->view<ui::ConfusionView>("confusion")->matrixWidget()->fontInfo().pixelSize();
  const int kernelCell = window->view<ui::KernelWeightsView>("weights")->layer(0)->cellSize();
  for (const QString& suffix : QStringList{"png", "pdf"}) {
    const QString arithmetic = dir.filePath("arithmetic." + suffix), weights = dir.filePath("weights." + suffix),
                  confusion = dir.filePath("confusion." + suffix);
    EXPECT_EQ(window->view<ui::ConvArithmeticView>("arithmetic")->exportTo(arithmetic), QString());
    EXPECT_EQ(window->view<ui::KernelWeightsView>("weights")->exportTo(weights), QString());
    EXPECT_EQ(window->view<ui::ConfusionView>("confusion")->exportTo(confusion), QString());
    for (const QString& path : {arithmetic, weights, confusion})
      EXPECT_GT(QFileInfo(path).size(), 1000) << path.toStdString();
  }
  const QImage png(dir.filePath("weights.png"));
  EXPECT_GT(distinctColours(png), 50);
  EXPECT_FALSE(window->view<ui::ConvArithmeticView>("arithmetic")->exportTo(dir.filePath("arithmetic.txt")).isEmpty());

  window->setPresentation(true);
  QCoreApplication::processEvents();
  EXPECT_GT(window->view<ui::KernelWeightsView>("weights")->layer(0)->cellSize(), kernelCell);
  // Larger figures everywhere, and the arithmetic's cells still large enough for their numbers.
  EXPECT_GT(window->view<ui::ConvArithmeticView>("arithmetic")->canvas()->fontInfo().pixelSize(), arithmeticFont);
  EXPECT_GT(window->view<ui::ConfusionView>("confusion")->matrixWidget()->fontInfo().pixelSize(), matrixFont);
  EXPECT_GE(window->view<ui::ConvArithmeticView>("arithmetic")->canvas()->cellSize(), 28);
}

TEST(WhyViews, HeadlessScreenshotsOfTheThreeTabs) {
  QTemporaryDir dir;
  for (const QString& tab : QStringList{"arithmetic", "weights", "confusion"}) {
    const QString path = dir.filePath(tab + ".png");
    const ProcessResult result =
        runProgram(CONVSCOPE_GUI_PATH, {"--screenshot", path, "--tab", tab, "--size", "1024x700"}, 600000);
    EXPECT_EQ(result.exitCode, 0) << result.output.toStdString();
    const QImage shot(path);
    EXPECT_EQ(shot.size(), QSize(1024, 700));
    EXPECT_GT(distinctColours(shot), 20) << tab.toStdString();
  }
}

// A folder of photos in class subfolders (PyTorch's ImageFolder layout) as the test set, opened
// as File > Open test set… opens it: with EfficientNet-Lite0 its subfolders are ImageNet classes,
// Where it fails counts the engine's own predictions and draws only the classes in play (not
// 1,000 rows), and the ten likeliest classes of a mistake are listed. A folder whose subfolder
// names no class of the model is refused, naming the subfolder, and the test set before stays;
// a model whose classes do not name the subfolders puts the default test set back.
TEST(WhyViews, PhotosInClassSubfoldersAreATestSetWithTheirClassesInPlay) {
  if (!imageFilesSupported()) GTEST_SKIP() << "built with -DCONVSCOPE_WITH_OPENCV=OFF: no image files";
  const char* photosDir = std::getenv("CONVSCOPE_PHOTOS_DIR");
  const QString photos = photosDir && *photosDir ? photosDir : "/usr/lib/python3/dist-packages/skimage/data";
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString folder = dir.filePath("photos");
  struct Photo {
    QString className, file;
  };
  for (const Photo& photo : {Photo{"tabby", "chelsea.png"}, Photo{"Egyptian cat", "chelsea.png"},
                             Photo{"espresso", "coffee.png"}, Photo{"espresso", "chelsea.png"}}) {
    ASSERT_TRUE(QDir().mkpath(folder + "/" + photo.className));
    const QString to = folder + "/" + photo.className + "/" + photo.file;
    ASSERT_TRUE(QFile::copy(photos + "/" + photo.file, to)) << to.toStdString();
  }
  auto window = openWindow();
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("efficientnet-lite0"), 120000)) << window->lastError().toStdString();
  window->openTestSet(folder);
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->loading() && window->testSet()->count() == 4; }, 120000))
      << window->lastError().toStdString();
  EXPECT_EQ(window->testSetFolder(), QFileInfo(folder).absoluteFilePath());
  const std::vector<std::string>& names = window->testSet()->classNames();
  ASSERT_EQ(names.size(), 1000u) << "the subfolders name ImageNet's classes, numbered as the model numbers them";
  const auto classOf = [&](const std::string& name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const int tabby = classOf("tabby"), egyptian = classOf("Egyptian cat"), espresso = classOf("espresso");
  EXPECT_EQ(tabby, 281);
  EXPECT_EQ(window->testSet()->label(0), egyptian) << "subfolders in sorted order, as ImageFolder reads them";
  // Thumbnails in colour: chelsea's ginger fur is redder than it is blue, on average.
  const QImage thumbnail = ui::DatasetModel::toQImage(window->testSet()->image(0));
  ASSERT_FALSE(thumbnail.isGrayscale());
  double red = 0, blue = 0;
  for (int y = 0; y < thumbnail.height(); ++y)
    for (int x = 0; x < thumbnail.width(); ++x)
      red += qRed(thumbnail.pixel(x, y)), blue += qBlue(thumbnail.pixel(x, y));
  EXPECT_GT(red, 1.1 * blue);

  ASSERT_TRUE(window->selectTab("confusion"));
  ui::ConfusionView* view = window->view<ui::ConfusionView>("confusion");
  const auto matrix = waitForMatrix(*view);
  ASSERT_NE(matrix, nullptr);
  ASSERT_EQ(matrix->classes(), 1000);
  EXPECT_EQ(matrix->total(), 4);
  // The engine's own predictions, photo by photo, independently of the view.
  Engine engine(window->model(), view->evaluation()->classifiedWith);
  engine.setPreprocessing(window->preprocessing());
  const ClassificationRun reference = classify(engine, *window->testSet(), 0, window->testSet()->count());
  std::set<int> inPlay = {tabby, egyptian, espresso};
  for (const ImageClassification& image : reference.images) {
    inPlay.insert(image.predicted);
    const ImageClassification& shown = view->evaluation()->run.images[static_cast<size_t>(image.index)];
    EXPECT_EQ(shown.predicted, image.predicted);
    // With the model's own preprocessing (its card's (x - 127) / 128), not the colour default.
    for (size_t c = 0; c < image.probabilities.size(); c += 37)
      ASSERT_NEAR(shown.probabilities[c], image.probabilities[c], 1e-5) << "class " << c;
  }
  EXPECT_EQ(matrix->correct(), reference.correct);
  const std::vector<int>& shown = view->matrixWidget()->shownClasses();
  EXPECT_EQ(std::set<int>(shown.begin(), shown.end()), inPlay) << "the classes in play, not 1,000";
  EXPECT_TRUE(std::is_sorted(shown.begin(), shown.end()));
  // Coffee is espresso (100 % of that row would need chelsea to be one too: she is not).
  EXPECT_EQ(view->matrixWidget()->cellText(espresso, espresso), "1");
  EXPECT_EQ(view->matrixWidget()->accuracyText(espresso), "50.0 %");
  EXPECT_NE(view->matrixWidget()->pointOf(espresso, espresso), QPoint(-1, -1));
  EXPECT_EQ(view->matrixWidget()->pointOf(0, 0), QPoint(-1, -1)) << "tench is not in play";
  view->showMisclassified();
  ASSERT_FALSE(view->listedImages().empty());
  view->imageList()->setCurrentRow(0);
  EXPECT_EQ(view->probabilitiesText().count(" %"), 10) << view->probabilitiesText().toStdString();

  // A subfolder that names no class: refused, naming it; the photos stay the test set.
  const QString wrong = dir.filePath("wrong");
  ASSERT_TRUE(QDir().mkpath(wrong + "/not a class"));
  ASSERT_TRUE(QFile::copy(photos + "/coffee.png", wrong + "/not a class/coffee.png"));
  window->openTestSet(wrong);
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->loading(); }, 60000));
  EXPECT_TRUE(window->lastError().contains("not a class")) << window->lastError().toStdString();
  EXPECT_EQ(window->testSet()->count(), 4);
  EXPECT_EQ(window->testSetFolder(), QFileInfo(folder).absoluteFilePath());

  // Away from Where it fails: it would classify the default test set's 10,000 pictures with
  // EfficientNet-Lite0 when that comes back below (minutes under the sanitizers).
  ASSERT_TRUE(window->selectTab("explore"));
  // lenet5 has no class names: the same photos, read again as it sees them (gray, 28 x 28).
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("lenet5"))) << window->lastError().toStdString();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->loading() && window->testSet()->channels() == 1; }, 120000))
      << window->lastError().toStdString();
  EXPECT_EQ(window->testSet()->count(), 4);
  EXPECT_EQ(window->testSet()->height(), 28);
  EXPECT_FALSE(window->lastError().contains("holds colour pictures")) << "nothing classified in the meantime";
  // For it, the folder whose subfolder names no ImageNet class is a test set (its subfolders are
  // its classes); EfficientNet-Lite0 cannot read it, and the default test set comes back.
  window->openTestSet(wrong);
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->loading() && window->testSet()->count() == 1; }, 60000))
      << window->lastError().toStdString();
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("efficientnet-lite0"), 120000)) << window->lastError().toStdString();
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window->loading() && window->testSet()->count() == 10000; }, 120000))
      << window->lastError().toStdString();
  EXPECT_TRUE(window->lastError().contains("does not fit the model")) << window->lastError().toStdString();
}

}  // namespace
}  // namespace convscope::testing
