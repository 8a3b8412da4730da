// Helpers of the GUI tests: waiting for the window's background work, what the engine itself
// says about a test image, temporary files, and looking at rendered pictures. GPU tests skip with
// GPU_TEST_SKIP() (tests/core/test_support.h).
#pragma once

#include <gtest/gtest.h>

#include <QFile>
#include <QImage>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <memory>

#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/engine.h"
#include "app/gui/main_window.h"
#include "tests/core/test_support.h"  // GPU_TEST_SKIP
#include "ui/inference/inference_controller.h"

namespace convscope::testing {

inline QString modelPath(const char* name) {
  return QString::fromUtf8(CONVSCOPE_MODELS_DIR) + "/" + name + ".onnx";
}

// Until the model and the test set have loaded, a picture file being decoded has arrived, the
// newest inference request has been answered (result or error) and the widgets have taken it in:
// new widgets shown and laid out (both are queued events), as a user would see it.
inline bool waitForInference(gui::MainWindow& window, int timeoutMs = 30000) {
  const bool answered = QTest::qWaitFor(
      [&] { return !window.loading() && !window.pictureLoading() && !window.inference()->busy(); }, timeoutMs);
  for (int i = 0; i < 3; ++i) {
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
  }
  return answered;
}

// Loads a model as the window does (a job of its runner) and waits for the end of the load; true
// when the model loaded. The inference it starts may still be running.
inline bool loadModelAndWait(gui::MainWindow& window, const QString& path, int timeoutMs = 30000) {
  bool finished = false, loaded = false;
  const QMetaObject::Connection connection =
      QObject::connect(&window, &gui::MainWindow::modelLoadFinished, [&](bool ok) {
        if (window.modelLoading()) return;  // an earlier load, superseded by this one
        finished = true;
        loaded = ok;
      });
  window.loadModel(path);
  const bool ended = QTest::qWaitFor([&] { return finished; }, timeoutMs);
  QObject::disconnect(connection);
  EXPECT_TRUE(ended) << "the model load did not end: " << path.toStdString();
  return loaded;
}

// A window as the tests use it: no settings, no message boxes; the first prediction shown.
inline std::unique_ptr<gui::MainWindow> openWindow() {
  auto window = std::make_unique<gui::MainWindow>(gui::MainWindow::Options::with(false, false));
  window->resize(1440, 900);
  window->show();
  EXPECT_TRUE(waitForInference(*window));
  return window;
}

// The class the engine itself gives test image `index`, independently of the window.
inline int engineTopClass(const std::shared_ptr<const Model>& model, const ImageSet& images, int index) {
  Engine engine(model, defaultConvVariant());
  const InferenceResult result = engine.infer(images.batch(index, 1, model->inputHeight(), model->inputWidth()));
  const auto& p = result.probabilities.values();
  return static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin());
}

inline QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  const QString path = dir.filePath(name);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) ADD_FAILURE() << "cannot write " << path.toStdString();
  file.write(bytes);
  return path;
}

// How many different colours a picture has: a blank or one-colour render has 1 or 2.
inline int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 2)
    for (int x = 0; x < image.width(); x += 2) colours.insert(image.pixel(x, y));
  return static_cast<int>(colours.size());
}

struct ProcessResult {
  int exitCode = -1;
  QString output;  // stdout and stderr
};

inline ProcessResult runProgram(const QString& program, const QStringList& arguments, int timeoutMs = 60000) {
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert("QT_QPA_PLATFORM", "offscreen");
  process.setProcessEnvironment(environment);
  process.start(program, arguments);
  if (!process.waitForFinished(timeoutMs)) {
    process.kill();
    process.waitForFinished();
    return {-1, "timed out"};
  }
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromLocal8Bit(process.readAll())};
}

}  // namespace convscope::testing
