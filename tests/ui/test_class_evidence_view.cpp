// The "Why this class" tab as a teacher uses it: a course model's picture gets its occlusion map at
// once, the same map the core computes for the same picture, class and patch; choosing another
// class maps that one; a real photo through EfficientNet-Lite0 gets its exact class activation map
// at once and its occlusion map on request, which can be cancelled.
#include <gtest/gtest.h>

#include <QDir>
#include <QSignalSpy>

#include <cmath>

#include "app/core/data/image_file.h"
#include "app/core/engine/class_evidence.h"
#include "app/core/engine/classifier.h"
#include "tests/ui/ui_test_support.h"
#include "ui/evidence/class_evidence_view.h"
#include "ui/model/variant_selector.h"

namespace convscope::testing {
namespace {

// Until the view's occlusion run has ended (a map, a failure or a cancel).
bool waitForOcclusion(ui::ClassEvidenceView& view, int timeoutMs = 60000) {
  return QTest::qWaitFor([&] { return !view.occlusionRunning(); }, timeoutMs);
}

void saveScreenshot(QWidget& widget, const QString& name) {
  const QString folder = qEnvironmentVariable("CONVSCOPE_SCREENSHOT_DIR");
  if (!folder.isEmpty()) EXPECT_TRUE(widget.grab().save(QDir(folder).filePath(name)));
}

TEST(ClassEvidence, ACourseModelsPictureGetsTheCoresOcclusionMapAtOnceAndNoActivationMapWithTheReason) {
  auto window = openWindow();
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("lenet5")));
  ASSERT_TRUE(window->selectVariant("cpu-reference"));
  ASSERT_TRUE(window->selectTestImage(17));
  ASSERT_TRUE(waitForInference(*window));
  ASSERT_TRUE(window->selectTab("evidence"));
  auto* view = window->view<ui::ClassEvidenceView>("evidence");
  ASSERT_NE(view, nullptr);
  ASSERT_TRUE(waitForOcclusion(*view));
  EXPECT_TRUE(view->activationCaption().contains("no global average pooling"))
      << view->activationCaption().toStdString();
  ASSERT_TRUE(view->occlusionMap());
  const auto outcome = window->inference()->lastOutcome();

  // The same picture, class and patch through the core, on an engine of its own.
  const auto mapFromTheCore = [&](int classIndex) {
    Engine engine(window->model(), "cpu-reference");
    OcclusionRequest request;
    request.classIndex = classIndex;
    request.patch = defaultPatch(28, 28);
    request.stride = std::max(1, request.patch / 2);
    return occlusionSensitivity(engine, outcome->layers.front().value, request);
  };
  const int top = outcome->topClass();
  EXPECT_EQ(view->chosenClass(), top);
  const OcclusionMap expected = mapFromTheCore(top);
  const OcclusionMap& shown = *view->occlusionMap();
  EXPECT_FALSE(shown.cancelled);
  ASSERT_EQ(shown.drop.size(), expected.drop.size());
  for (size_t i = 0; i < shown.drop.size(); ++i) EXPECT_NEAR(shown.drop[i], expected.drop[i], 1e-6) << i;
  EXPECT_TRUE(view->occlusionCaption().contains(QString::fromStdString(std::to_string(shown.pictures) + " pictures")))
      << view->occlusionCaption().toStdString();
  EXPECT_EQ(view->occlusionPicture().size(), QSize(448, 448)) << "28 x 28 enlarged 16 times";

  // Another of the top classes: its own map, at once.
  ASSERT_GE(view->classChoices().size(), 5);
  const int second = topClasses(outcome->probabilities, 2).back();
  ASSERT_TRUE(view->chooseClass(second));
  ASSERT_TRUE(waitForOcclusion(*view));
  ASSERT_TRUE(view->occlusionMap());
  EXPECT_EQ(view->occlusionMap()->classIndex, second);
  const OcclusionMap expectedSecond = mapFromTheCore(second);
  for (size_t i = 0; i < expectedSecond.drop.size(); ++i)
    EXPECT_NEAR(view->occlusionMap()->drop[i], expectedSecond.drop[i], 1e-6) << i;

  window->resize(1024, 700);
  QTest::qWait(50);
  saveScreenshot(*window, "why-this-class-lenet5.png");
}

TEST(ClassEvidence, ChelseaGetsHerExactActivationMapAtOnceAndAnOcclusionRunCanBeCancelled) {
  if (!imageFilesSupported()) GTEST_SKIP() << "built with -DCONVSCOPE_WITH_OPENCV=OFF: no image files";
  const char* folder = std::getenv("CONVSCOPE_PHOTOS_DIR");
  const QString chelsea =
      QString(folder && *folder ? folder : "/usr/lib/python3/dist-packages/skimage/data") + "/chelsea.png";
  auto window = openWindow();
  ASSERT_TRUE(loadModelAndWait(*window, modelPath("efficientnet-lite0"))) << window->lastError().toStdString();
  ASSERT_TRUE(window->openImage(chelsea)) << window->lastError().toStdString();
  ASSERT_TRUE(waitForInference(*window, 120000));
  ASSERT_TRUE(window->selectTab("evidence"));
  auto* view = window->view<ui::ClassEvidenceView>("evidence");
  ASSERT_NE(view, nullptr);
  QCoreApplication::processEvents();

  // The activation map is there at once, and adds up to the logit the classifier computed.
  ASSERT_TRUE(view->activationMap());
  EXPECT_TRUE(view->classChoices().front().startsWith("tiger cat")) << view->classChoices().front().toStdString();
  const auto outcome = window->inference()->lastOutcome();
  const auto head = findActivationMapHead(*window->model());
  ASSERT_TRUE(head);
  for (const LayerOutput& layer : outcome->layers)
    if (layer.node == head->denseNode)
      EXPECT_NEAR(view->activationMap()->logit, layer.value.data()[view->chosenClass()], 1e-3);
  EXPECT_TRUE(view->activationCaption().contains(QString::number(view->activationMap()->logit, 'f', 4)))
      << view->activationCaption().toStdString();
  EXPECT_FALSE(view->activationPicture().isNull());

  // 224 x 224: the occlusion map waits to be asked for (seconds on a CPU), saying how many pictures.
  EXPECT_FALSE(view->occlusionRunning());
  EXPECT_TRUE(view->occlusionCaption().contains("169 pictures")) << view->occlusionCaption().toStdString();
  view->runOcclusion();
  EXPECT_TRUE(view->occlusionRunning());
  view->cancelOcclusion();
  ASSERT_TRUE(waitForOcclusion(*view, 120000));
  EXPECT_TRUE(!view->occlusionMap() || view->occlusionMap()->cancelled || view->occlusionMap()->batches.size() == 1)
      << "a cancel ends the run at its next batch";

  window->resize(1024, 700);
  QTest::qWait(50);
  saveScreenshot(*window, "why-this-class-chelsea.png");
}

}  // namespace
}  // namespace convscope::testing
