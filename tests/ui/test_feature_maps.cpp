// The feature-map view: the input as the model sees it first, then one map per channel for
// every layer the network computes, values readable under the pointer, a map enlarged on click,
// and the grid exported to PNG and PDF.
#include <gtest/gtest.h>

#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <vector>

#include "app/gui/explore_view.h"
#include "tests/ui/ui_test_support.h"
#include "ui/maps/colour_map.h"
#include "ui/maps/feature_map_view.h"
#include "ui/maps/layer_maps_widget.h"
#include "ui/maps/map_zoom_dialog.h"

namespace convscope::testing {
namespace {

void expectOneMapPerChannel(gui::MainWindow& window) {
  const auto outcome = window.inference()->lastOutcome();
  ASSERT_NE(outcome, nullptr);
  ui::FeatureMapView* view = window.view<gui::ExploreView>("explore")->maps();
  int shown = 0;
  for (size_t i = 0; i < outcome->layers.size(); ++i) {
    const LayerOutput& layer = outcome->layers[i];
    if (ui::FeatureMapView::isShapeOnly(layer.role)) continue;
    SCOPED_TRACE(layer.node + " " + layer.opType);
    ASSERT_LT(shown, view->layerCount());
    ui::LayerMapsWidget* widget = view->layer(shown++);
    EXPECT_EQ(widget->layerIndex(), static_cast<int>(i));
    const Shape& shape = layer.value.shape();
    if (shape.size() == 4) {
      EXPECT_EQ(widget->channelCount(), shape[1]);
      EXPECT_EQ(widget->mapHeight(), shape[2]);
      EXPECT_EQ(widget->mapWidth(), shape[3]);
      EXPECT_FALSE(widget->isVector());
    } else {
      EXPECT_EQ(widget->channelCount(), 1);  // a dense layer's vector: one map of cells
      EXPECT_TRUE(widget->isVector());
    }
    EXPECT_FALSE(widget->title().isEmpty());
  }
  EXPECT_EQ(shown, view->layerCount());
  EXPECT_EQ(outcome->layers[0].node, "input");
  EXPECT_TRUE(view->layer(0)->title().startsWith("Input"));
}

TEST(FeatureMaps, ShowOneMapPerChannelForEveryLayerOfEachModel) {
  auto window = openWindow();
  for (const char* name : {"course-high", "lenet5"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(loadModelAndWait(*window, modelPath(name)));
    ASSERT_TRUE(waitForInference(*window));
    expectOneMapPerChannel(*window);
  }
  // course-high: input, conv 12, tanh 12, pool 12, conv 24, tanh 24, pool 24, then dense layers.
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("course-high")));
  ASSERT_TRUE(waitForInference(*window));
  const std::vector<int> expected = {1, 12, 12, 12, 24, 24, 24};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(window->view<gui::ExploreView>("explore")->maps()->layer(static_cast<int>(i))->channelCount(),
              expected[i]);
}

TEST(FeatureMaps, HoverReadsTheValueChannelAndPositionAndAClickEnlarges) {
  auto window = openWindow();
  ui::LayerMapsWidget* conv = window->view<gui::ExploreView>("explore")->maps()->layer(1);
  const auto outcome = window->inference()->lastOutcome();
  const Tensor& value = outcome->layers[static_cast<size_t>(conv->layerIndex())].value;  // 1 x 12 x 42 x 42
  const int channel = 5, y = 20, x = 13;
  const QPoint point = conv->pointOf(channel, y, x);
  QTest::mouseMove(conv, point);
  const QString readout = window->view<gui::ExploreView>("explore")->maps()->readout();
  EXPECT_TRUE(readout.contains("channel 5 of 12")) << readout.toStdString();
  EXPECT_TRUE(readout.contains("x 13, y 20")) << readout.toStdString();
  const float expected = value[(int64_t{channel} * 42 + y) * 42 + x];
  EXPECT_TRUE(readout.contains(QString::number(expected, 'g', 3))) << readout.toStdString() << " vs " << expected;
  EXPECT_TRUE(readout.startsWith("conv 1 · channel")) << "the layer as its title names it: " << readout.toStdString();

  QTest::mouseClick(conv, Qt::LeftButton, Qt::NoModifier, point);
  ui::MapZoomDialog* zoom = window->view<gui::ExploreView>("explore")->maps()->zoomDialog();
  ASSERT_NE(zoom, nullptr);
  EXPECT_TRUE(zoom->isVisible());
  EXPECT_EQ(zoom->channel(), channel);
  EXPECT_EQ(zoom->mapWidget()->mapsShown(), 1);
  EXPECT_GT(zoom->mapWidget()->pointOf(channel, 41, 41).x(), 300) << "enlarged";
  if (const QString folder = qEnvironmentVariable("CONVSCOPE_UI_SHOTS"); !folder.isEmpty()) {
    QTest::mouseMove(zoom->mapWidget(), zoom->mapWidget()->pointOf(channel, 30, 21));
    zoom->grab().save(folder + "/enlarged-map.png");
  }
  // The enlarged map follows the next picture.
  ASSERT_TRUE(window->selectTestImage(3));
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_EQ(zoom->mapWidget()->describeAt(zoom->mapWidget()->pointOf(channel, 0, 0)).contains("channel 5"), true);
  zoom->close();
}

TEST(FeatureMaps, LayerTitlesAreWhatAStudentReadsWithTheOnnxNameInTheTooltip) {
  auto window = openWindow();
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("course-high")));
  ASSERT_TRUE(waitForInference(*window));
  const auto outcome = window->inference()->lastOutcome();
  ASSERT_NE(outcome, nullptr);
  // course-high for one image, shape-only layers (flatten) left out of the view.
  const QStringList expected = {"conv 1 · 12 filters 7×7 → 12×42×42",
                                "tanh 1 → 12×42×42",
                                "max-pool 1 · 12×42×42 → 12×21×21",
                                "conv 2 · 24 filters 7×7 → 24×15×15",
                                "tanh 2 → 24×15×15",
                                "max-pool 2 · 24×15×15 → 24×7×7",
                                "dense 1 · 1176 → 128",
                                "tanh 3 → 128",
                                "dense 2 · 128 → 10",
                                "softmax 1 → 10"};
  ui::FeatureMapView* view = window->view<gui::ExploreView>("explore")->maps();
  ASSERT_EQ(view->layerCount(), expected.size() + 1);
  for (int i = 0; i < expected.size(); ++i) {
    ui::LayerMapsWidget* widget = view->layer(i + 1);
    const LayerOutput& layer = outcome->layers[static_cast<size_t>(widget->layerIndex())];
    EXPECT_EQ(widget->title(), expected[i]);
    EXPECT_EQ(
        widget->onnxName(),
        QString("ONNX node %1 (%2)").arg(QString::fromStdString(layer.node), QString::fromStdString(layer.opType)));
  }
  EXPECT_TRUE(view->layer(0)->onnxName().isEmpty()) << "the input is no ONNX node";
}

// A student's CNN with the layers beyond the course (tests/data/exported/operators/student-cnn):
// one map per channel for each of them too, under titles that say what they are.
TEST(FeatureMaps, NewLayersOfAStudentsCnnHaveTheirMapsAndTitles) {
  auto window = openWindow();
  const QString path =
      QString::fromUtf8(CONVSCOPE_TEST_DATA_DIR) + "/exported/operators/student-cnn-torchscript-op13/model.onnx";
  ASSERT_TRUE(loadModelAndWait(*window, path));
  ASSERT_TRUE(waitForInference(*window));
  expectOneMapPerChannel(*window);
  QStringList titles;
  for (int i = 0; i < window->view<gui::ExploreView>("explore")->maps()->layerCount(); ++i)
    titles << window->view<gui::ExploreView>("explore")->maps()->layer(i)->title();
  for (const char* expected :
       {"leaky-relu 1 → 16×28×28", "batch-norm 1 → 16×28×28", "conv 2 · 16 filters 3×3, depthwise → 16×14×14",
        "conv 4 · 8 filters 3×3, dilation 2 → 8×14×14", "elu 1 → 8×14×14", "erf 1 → 8×14×14",
        "concat 1 · 2 inputs → 16×14×14", "resize 1 · 16×14×14 → 16×28×28", "global-avg-pool 1 · 32×7×7 → 32×1×1"})
    EXPECT_TRUE(titles.contains(QString::fromUtf8(expected)))
        << expected << " not among " << titles.join(" | ").toStdString();
  if (const QString folder = qEnvironmentVariable("CONVSCOPE_UI_SHOTS"); !folder.isEmpty())
    for (int i = 0; i < window->view<gui::ExploreView>("explore")->maps()->layerCount(); ++i) {
      ui::LayerMapsWidget* layer = window->view<gui::ExploreView>("explore")->maps()->layer(i);
      if (layer->title().contains("depthwise") || layer->title().startsWith("resize") ||
          layer->title().startsWith("concat"))
        layer->grab().save(folder + QString("/student-layer-%1.png").arg(i));
    }
}

TEST(FeatureMaps, ColourMapsAndTheirRanges) {
  const float values[] = {-2.0f, -1.0f, 0.0f, 0.5f};
  const ui::ValueRange plain = ui::displayRange(values, 4, ui::ColourMap::Viridis);
  EXPECT_FLOAT_EQ(plain.low, -2.0f);
  EXPECT_FLOAT_EQ(plain.high, 0.5f);
  const ui::ValueRange signedRange = ui::displayRange(values, 4, ui::ColourMap::Diverging);
  EXPECT_FLOAT_EQ(signedRange.low, -2.0f);
  EXPECT_FLOAT_EQ(signedRange.high, 2.0f);  // symmetric: white is zero
  const QImage image = ui::mapImage(values, 2, 2, signedRange, ui::ColourMap::Diverging);
  EXPECT_EQ(image.pixelIndex(0, 1), 128) << "zero maps to the middle of the table";
  EXPECT_EQ(image.pixelIndex(0, 0), 0);
  const float constant[] = {3.0f, 3.0f};
  const ui::ValueRange flat = ui::displayRange(constant, 2, ui::ColourMap::Gray);
  EXPECT_GT(flat.high, flat.low) << "a constant map must not divide by zero";
}

// The documented percentile, computed the slow way: sort a copy, pick by index.
ui::ValueRange bruteForcePercentiles(const std::vector<float>& values) {
  std::vector<float> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  if (n <= 200) return {sorted.front(), sorted.back()};
  return {sorted[n / 100], sorted[n - 1 - n / 100]};
}

TEST(FeatureMaps, DisplayRangeIsTheFirstToNinetyNinthPercentileOnSignedDataWithOutliers) {
  std::mt19937 random(7);
  for (const size_t count : {201u, 317u, 1001u, 4999u, 21169u}) {
    SCOPED_TRACE(count);
    // Mostly negative values, a skewed positive tail and a few huge outliers on both sides.
    std::normal_distribution<float> body(-2.0f, 3.0f);
    std::vector<float> values(count);
    for (float& v : values) v = body(random);
    for (size_t i = 0; i < count; i += 37) values[i] = 5.0f + static_cast<float>(i % 11);
    for (size_t i = 3; i < count; i += 97) values[i] = (i % 2 ? 1e4f : -1e4f);
    const ui::ValueRange expected = bruteForcePercentiles(values);
    const ui::ValueRange got = ui::displayRange(values.data(), values.size(), ui::ColourMap::Viridis);
    EXPECT_EQ(got.low, expected.low);
    EXPECT_EQ(got.high, expected.high);
    EXPECT_LT(got.low, 0.0f);
    const ui::ValueRange symmetric = ui::displayRange(values.data(), values.size(), ui::ColourMap::Diverging);
    const float extent = std::max(std::abs(expected.low), std::abs(expected.high));
    EXPECT_EQ(symmetric.low, -extent);
    EXPECT_EQ(symmetric.high, extent);
  }
}

TEST(FeatureMaps, ConvLegendOfCourseHighOnImageZeroSpansItsNegativeValues) {
  auto window = openWindow();
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("course-high")));
  ASSERT_TRUE(window->selectTestImage(0));
  ASSERT_TRUE(waitForInference(*window));
  ui::LayerMapsWidget* conv = window->view<gui::ExploreView>("explore")->maps()->layer(1);
  const auto outcome = window->inference()->lastOutcome();
  ASSERT_NE(outcome, nullptr);
  const Tensor& value = outcome->layers[static_cast<size_t>(conv->layerIndex())].value;
  ASSERT_EQ(outcome->layers[static_cast<size_t>(conv->layerIndex())].opType, "Conv");
  const std::vector<float> values(value.data(), value.data() + value.size());
  const ui::ValueRange expected = bruteForcePercentiles(values);
  EXPECT_LT(conv->range().low, 0.0f) << "the conv maps have negative values; the legend must show them";
  EXPECT_EQ(conv->range().low, expected.low);
  EXPECT_EQ(conv->range().high, expected.high);
  // At most 1 % of the values lie below the lower bound (they share the end colour).
  const auto below = std::count_if(values.begin(), values.end(), [&](float v) { return v < conv->range().low; });
  EXPECT_LE(below, static_cast<long>(values.size() / 100));
}

TEST(FeatureMaps, ExportTheWholeGridToPngAndPdf) {
  auto window = openWindow();
  QTemporaryDir dir;
  const QString png = dir.filePath("maps.png"), pdf = dir.filePath("maps.pdf");
  EXPECT_EQ(window->view<gui::ExploreView>("explore")->maps()->exportTo(png), QString());
  EXPECT_EQ(window->view<gui::ExploreView>("explore")->maps()->exportTo(pdf), QString());
  const QImage image(png);
  ASSERT_FALSE(image.isNull());
  EXPECT_GT(image.height(), window->view<gui::ExploreView>("explore")->maps()->layer(0)->height() * 4)
      << "all layers, not only the visible ones";
  EXPECT_GT(distinctColours(image), 50);
  QFile file(pdf);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_TRUE(file.read(5).startsWith("%PDF"));
  EXPECT_FALSE(window->view<gui::ExploreView>("explore")->maps()->exportTo(dir.filePath("maps.bmp")).isEmpty())
      << "unsupported suffix";
}

// A real network's scale: EfficientNet-Lite0's 190-odd layers of up to 1,280 maps open on each
// layer's most active maps (checked against the means computed here from the captured values), a
// bounded number of them drawn, so the images' memory stays small beside the values themselves;
// any layer can be gone to and any map enlarged, drawn in the grid or not.
TEST(FeatureMaps, EfficientNetLite0sThousandsOfMapsOpenOnTheMostActiveInBoundedMemory) {
  auto window = openWindow();
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("efficientnet-lite0"))) << window->lastError().toStdString();
  ASSERT_TRUE(window->selectVariant("cpu-onednn"));
  ASSERT_TRUE(window->selectTestImage(3));  // a gray picture, in three equal channels
  ASSERT_TRUE(waitForInference(*window, 120000));
  const auto outcome = window->inference()->lastOutcome();
  ASSERT_NE(outcome, nullptr);
  ui::FeatureMapView* view = window->view<gui::ExploreView>("explore")->maps();
  EXPECT_EQ(view->mapOrder(), ui::MapOrder::MeanFirst);
  EXPECT_EQ(view->mapLimit(), ui::FeatureMapView::kDefaultMapLimit);
  // The input, 49 convs, 33 ReLU6s (Clip), 9 residual sums, the pooling, the classifier and the
  // softmax: every layer but the Flatten, which only reshapes.
  ASSERT_EQ(view->layerCount(), 95);

  int head = -1, depthwiseTitles = 0;
  for (int i = 0; i < view->layerCount(); ++i) {
    if (view->layer(i)->channelCount() == 1280 && view->layer(i)->mapHeight() == 7) head = i;
    depthwiseTitles += view->layer(i)->title().contains("depthwise");
  }
  EXPECT_EQ(depthwiseTitles, 16);
  ASSERT_GE(head, 0);
  ui::LayerMapsWidget* widget = view->layer(head);
  EXPECT_EQ(widget->mapsShown(), 64);
  EXPECT_TRUE(widget->title().contains("the 64 most active of 1280 maps")) << widget->title().toStdString();
  // The 64 largest means, largest first, from the captured values.
  const Tensor& value = outcome->layers[static_cast<size_t>(widget->layerIndex())].value;
  std::vector<std::pair<double, int>> means;
  for (int c = 0; c < 1280; ++c) {
    double sum = 0.0;
    for (int i = 0; i < 49; ++i) sum += value.data()[c * 49 + i];
    means.push_back({-sum / 49.0, c});
  }
  std::stable_sort(means.begin(), means.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (int slot = 0; slot < 64; ++slot)
    EXPECT_EQ(widget->shownChannels()[static_cast<size_t>(slot)], means[static_cast<size_t>(slot)].second) << slot;

  // Memory: the images drawn, 64 a layer, against every map drawn and against the values.
  qint64 valueBytes = 0;
  for (const LayerOutput& layer : outcome->layers) valueBytes += layer.value.size() * 4;
  const qint64 bounded = view->imageBytes();
  view->setArrangement(ui::MapOrder::MeanFirst, 0);
  const qint64 everything = view->imageBytes();
  std::cout << "EfficientNet-Lite0's maps: values " << valueBytes / 1e6 << " MB; images, 64 a layer " << bounded / 1e6
            << " MB, every map " << everything / 1e6 << " MB\n";
  EXPECT_LT(bounded, everything / 2);
  EXPECT_LT(bounded, valueBytes / 4);
  EXPECT_EQ(widget->mapsShown(), 1280);

  // The largest value first, 16 a layer.
  view->setArrangement(ui::MapOrder::MaxFirst, 16);
  ASSERT_EQ(widget->mapsShown(), 16);
  const auto largest = [&](int c) { return *std::max_element(value.data() + c * 49, value.data() + c * 49 + 49); };
  for (int slot = 1; slot < 16; ++slot)
    EXPECT_GE(largest(widget->shownChannels()[static_cast<size_t>(slot - 1)]),
              largest(widget->shownChannels()[static_cast<size_t>(slot)]));
  EXPECT_EQ(widget->pointOf(1279 == widget->shownChannels()[0] ? 0 : 1279, 0, 0).x(), -1)
      << "a map not drawn has no place";

  // Gone to, and a map that is not drawn enlarged by its number.
  view->showLayer(head);
  QCoreApplication::processEvents();
  EXPECT_FALSE(widget->visibleRegion().isEmpty()) << "the layer is scrolled into view";
  const int hidden = means.back().second;  // the least active: never among the 16
  ASSERT_TRUE(view->showChannel(head, hidden));
  ASSERT_NE(view->zoomDialog(), nullptr);
  EXPECT_TRUE(view->zoomDialog()->mapWidget()->title().contains(QString("channel %1 of 1280").arg(hidden)))
      << view->zoomDialog()->mapWidget()->title().toStdString();
  EXPECT_FALSE(view->showChannel(head, 1280));
}

}  // namespace
}  // namespace convscope::testing
