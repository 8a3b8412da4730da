// No input crashes the window or leaves it showing a stale answer: a model whose graph is
// inconsistent, whichever way it is opened; an inference that fails; a picture file that takes
// long to decode; a test set that cannot be read. Malformed models are made here from the shipped
// one with the ONNX protobuf classes, so each test shows exactly what is wrong.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <QDropEvent>
#include <QElapsedTimer>
#include <QMimeData>
#include <QStatusBar>
#include <QTimer>

#include <fstream>
#include <functional>

#include "app/core/data/image_file.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"
#include "app/gui/explore_view.h"
#include "tests/ui/ui_test_support.h"
#include "ui/charts/prediction_panel.h"
#include "ui/common/error_banner.h"
#include "ui/common/recent_files.h"
#include "ui/input/dataset_browser.h"
#include "ui/input/input_panel.h"
#include "ui/maps/feature_map_view.h"
#include "ui/model/model_picker.h"

namespace convscope::testing {
namespace {

onnx::ModelProto shippedProto(const char* name) {
  onnx::ModelProto proto;
  std::ifstream in(modelPath(name).toStdString(), std::ios::binary);
  EXPECT_TRUE(proto.ParseFromIstream(&in)) << "cannot parse " << name;
  return proto;
}

QString writeProto(const QTemporaryDir& dir, const QString& name, const onnx::ModelProto& proto) {
  std::string bytes;
  EXPECT_TRUE(proto.SerializeToString(&bytes));
  return writeFile(dir, name, QByteArray(bytes.data(), static_cast<qsizetype>(bytes.size())));
}

// course-high with the second Tanh's output named like the graph's input: a node output reuses
// an existing tensor name. Shapes still propagate node by node (the loader accepts it), but the
// layer table, which reads every name after all nodes, gives the first Conv a 24-channel input.
QString modelWithReusedTensorName(const QTemporaryDir& dir) {
  onnx::ModelProto proto = shippedProto("course-high");
  onnx::GraphProto& graph = *proto.mutable_graph();
  const std::string input = graph.input(0).name();
  std::string secondTanhOutput;
  int tanhs = 0;
  for (const onnx::NodeProto& node : graph.node())
    if (node.op_type() == "Tanh" && ++tanhs == 2) secondTanhOutput = node.output(0);
  EXPECT_FALSE(secondTanhOutput.empty());
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (std::string& output : *node.mutable_output())
      if (output == secondTanhOutput) output = input;
    for (std::string& name : *node.mutable_input())
      if (name == secondTanhOutput) name = input;
  }
  return writeProto(dir, "reused-name.onnx", proto);
}

// course-high whose graph output is the first Conv's 1x12x42x42 maps: it loads (one input, one
// output, consistent shapes) but no inference can give class scores.
QString modelWhoseOutputIsAFeatureMap(const QTemporaryDir& dir) {
  onnx::ModelProto proto = shippedProto("course-high");
  onnx::GraphProto& graph = *proto.mutable_graph();
  std::string convOutput;
  for (const onnx::NodeProto& node : graph.node())
    if (node.op_type() == "Conv") {
      convOutput = node.output(0);
      break;
    }
  graph.mutable_output(0)->set_name(convOutput);
  graph.mutable_output(0)->clear_type();
  return writeProto(dir, "feature-map-output.onnx", proto);
}

void expectPreviousModelKeptAndProblemShown(gui::MainWindow& window, const std::shared_ptr<const Model>& before,
                                            const QString& fileName) {
  EXPECT_EQ(window.model(), before);
  const QString message = window.errorBanner()->message();
  EXPECT_TRUE(message.contains(fileName)) << message.toStdString();
  EXPECT_TRUE(message.contains("course-high stays in use")) << message.toStdString();
  EXPECT_TRUE(message.contains("reuses the name")) << "the problem, not only the file: " << message.toStdString();
  EXPECT_TRUE(window.modelPicker()->currentPath().endsWith("course-high.onnx"));
}

TEST(WindowRobustness, AModelReusingATensorNameIsRefusedOnEveryPathThatOpensModels) {
  QTemporaryDir dir;
  const QString path = modelWithReusedTensorName(dir);
  // What escaped before: the graph loads, but its layer table throws, from the picker's summary,
  // after the load's checks. (Should the loader one day refuse such a graph, the window must too.)
  std::shared_ptr<const Model> loaded;
  try {
    loaded = loadOnnxModel(path.toStdString());
  } catch (const Error&) {
  }
  if (loaded) {
    EXPECT_THROW(loaded->layers(), Error);
  }

  auto window = openWindow();
  const auto before = window->model();
  ASSERT_NE(before, nullptr);
  const std::vector<std::pair<const char*, std::function<void()>>> paths = {
      {"loadModel (Open dialog, settings)", [&] { EXPECT_FALSE(loadModelAndWait(*window, path)); }},
      {"model picker", [&] { emit window->modelPicker()->modelRequested(path); }},
      {"recent files", [&] { emit window->findChild<ui::RecentFiles*>()->fileChosen(path); }},
      {"openFile", [&] { EXPECT_TRUE(window->openFile(path)) << "the load starts; its failure comes later"; }},
      {"drag and drop",
       [&] {
         QMimeData data;
         data.setUrls({QUrl::fromLocalFile(path)});
         QDragEnterEvent enter(QPoint(400, 400), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
         QApplication::sendEvent(window.get(), &enter);
         ASSERT_TRUE(enter.isAccepted());
         QDropEvent drop(QPointF(400, 400), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
         QApplication::sendEvent(window.get(), &drop);
       }},
  };
  for (const auto& [name, open] : paths) {
    SCOPED_TRACE(name);
    window->errorBanner()->dismiss();
    open();
    ASSERT_TRUE(waitForInference(*window));  // the model loads as a job
    expectPreviousModelKeptAndProblemShown(*window, before, "reused-name.onnx");
  }
  // The shipped list of the picker: choosing another shipped model still works afterwards.
  emit window->modelPicker()->modelRequested(modelPath("lenet5"));
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_EQ(window->model()->name, "lenet5");
  EXPECT_EQ(window->inference()->lastOutcome()->modelName, "lenet5");
}

TEST(WindowRobustness, AFailedInferenceClearsThePredictionAndTheMapsAndSaysWhy) {
  QTemporaryDir dir;
  const QString path = modelWhoseOutputIsAFeatureMap(dir);
  auto window = openWindow();
  ASSERT_FALSE(window->view<gui::ExploreView>("explore")->prediction()->shownTopClassName().isEmpty());
  ASSERT_GT(window->view<gui::ExploreView>("explore")->maps()->layerCount(), 0);

  ASSERT_TRUE(loadModelAndWait(*window, path)) << window->lastError().toStdString();
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_EQ(window->inference()->lastOutcome(), nullptr);
  EXPECT_TRUE(window->view<gui::ExploreView>("explore")->prediction()->shownTopClassName().isEmpty())
      << "the old model's answer is gone";
  const QString headline = window->view<gui::ExploreView>("explore")->prediction()->headline();
  EXPECT_TRUE(headline.contains("No prediction")) << headline.toStdString();
  EXPECT_TRUE(headline.contains("output has shape")) << headline.toStdString();
  EXPECT_TRUE(window->view<gui::ExploreView>("explore")->prediction()->timesText().isEmpty());
  EXPECT_EQ(window->view<gui::ExploreView>("explore")->maps()->layerCount(), 0);
  EXPECT_TRUE(window->view<gui::ExploreView>("explore")->maps()->emptyMessage().startsWith("No feature maps"));
  EXPECT_TRUE(window->view<gui::ExploreView>("explore")->maps()->emptyMessage().contains("output has shape"))
      << window->view<gui::ExploreView>("explore")->maps()->emptyMessage().toStdString();
  EXPECT_TRUE(window->errorBanner()->message().contains("feature-map-output.onnx"))
      << window->errorBanner()->message().toStdString();
  if (const QString folder = qEnvironmentVariable("CONVSCOPE_UI_SHOTS"); !folder.isEmpty())
    window->grab().save(folder + "/failed-inference.png");

  // A model that works brings everything back and the banner goes.
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("course-high")));
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_FALSE(window->view<gui::ExploreView>("explore")->prediction()->shownTopClassName().isEmpty());
  EXPECT_GT(window->view<gui::ExploreView>("explore")->maps()->layerCount(), 0);
  EXPECT_TRUE(window->view<gui::ExploreView>("explore")->maps()->emptyMessage().isEmpty());
  EXPECT_TRUE(window->errorBanner()->message().isEmpty()) << window->errorBanner()->message().toStdString();
}

// A picture that takes a while to decode: gray noise, stored without compression.
QString largePicture(const QTemporaryDir& dir, const QString& name, int side) {
  QImage image(side, side, QImage::Format_Grayscale8);
  quint32 state = 12345;
  for (int y = 0; y < side; ++y) {
    uchar* row = image.scanLine(y);
    for (int x = 0; x < side; ++x) row[x] = static_cast<uchar>((state = state * 1664525u + 1013904223u) >> 24);
  }
  const QString path = dir.filePath(name);
  EXPECT_TRUE(image.save(path, "PNG", 100));
  return path;
}

TEST(WindowRobustness, PictureFilesAreDecodedOffTheGuiThreadAndTheLatestRequestWins) {
  if (!imageFilesSupported()) GTEST_SKIP() << "built with -DCONVSCOPE_WITH_OPENCV=OFF: no image files";
  QTemporaryDir dir;
  const QString large = largePicture(dir, "large.png", 4000);
  QImage small(40, 20, QImage::Format_Grayscale8);
  small.fill(0);
  const QString smallPath = dir.filePath("small.png");
  ASSERT_TRUE(small.save(smallPath));
  auto window = openWindow();

  // The event loop runs while the large file decodes: a timer keeps ticking.
  int ticks = 0, ticksWhileDecoding = 0;
  QTimer timer;
  QObject::connect(&timer, &QTimer::timeout, [&] {
    ++ticks;
    if (window->pictureLoading()) ++ticksWhileDecoding;
  });
  timer.start(5);
  QElapsedTimer clock;
  clock.start();
  ASSERT_TRUE(window->openImage(large));
  const qint64 returnedAfter = clock.elapsed();
  EXPECT_TRUE(window->pictureLoading()) << "openImage returned before the picture was decoded";
  EXPECT_EQ(ticks, 0) << "no event was processed inside openImage";
  ASSERT_TRUE(waitForInference(*window, 120000));
  const qint64 decodedAfter = clock.elapsed();
  EXPECT_GT(ticksWhileDecoding, 0) << "the window answered while decoding (" << decodedAfter << " ms)";
  EXPECT_LT(returnedAfter, decodedAfter);
  ASSERT_NE(window->inference()->lastOutcome(), nullptr);
  EXPECT_EQ(window->inference()->lastOutcome()->input.description.toStdString(), "large.png") << "the result arrives";
  EXPECT_EQ(window->inference()->lastOutcome()->input.image.width, 4000);

  // A later request supersedes an earlier one still decoding: the small file is shown, and the
  // large one, which finishes later, never replaces it.
  ASSERT_TRUE(window->openImage(large));
  ASSERT_TRUE(window->openImage(smallPath));
  ASSERT_TRUE(waitForInference(*window, 120000));
  QTest::qWait(static_cast<int>(std::clamp<qint64>(decodedAfter * 2, 100, 20000)));  // the large decode ends
  ASSERT_TRUE(waitForInference(*window, 120000));
  EXPECT_EQ(window->inference()->lastOutcome()->input.description.toStdString(), "small.png");
}

TEST(WindowRobustness, WhyTheTestSetFailedToLoadStaysVisible) {
  QTemporaryDir data;
  writeFile(data, "t10k-images-idx3-ubyte", QByteArray("\x08\x08\x08\x03 not an IDX file", 21));
  writeFile(data, "t10k-labels-idx1-ubyte", QByteArray("\x00\x00\x08\x01\x00\x00\x00\x00", 8));
  const QByteArray saved = qgetenv("CONVSCOPE_DATA");
  qputenv("CONVSCOPE_DATA", data.path().toUtf8());
  gui::MainWindow window(gui::MainWindow::Options::with(false, false));
  window.show();
  if (saved.isEmpty())
    qunsetenv("CONVSCOPE_DATA");
  else
    qputenv("CONVSCOPE_DATA", saved);
  ASSERT_TRUE(waitForInference(window));

  EXPECT_EQ(window.testSet(), nullptr);
  ASSERT_NE(window.model(), nullptr) << "the model loaded after the test set failed";
  // The banner still says why (loading the model did not dismiss it) ...
  const QString banner = window.errorBanner()->message();
  EXPECT_TRUE(banner.contains("t10k-images-idx3-ubyte")) << banner.toStdString();
  EXPECT_TRUE(banner.contains("not an IDX file")) << banner.toStdString();
  // ... and so does the test-set panel, after the banner is gone.
  window.errorBanner()->dismiss();
  const QString panel = window.inputPanel()->browser()->statusText();
  EXPECT_TRUE(panel.contains("t10k-images-idx3-ubyte")) << panel.toStdString();
  EXPECT_TRUE(panel.contains("not an IDX file")) << panel.toStdString();
}

}  // namespace
}  // namespace convscope::testing
