#include "app/gui/headless.h"

#include <QApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPixmap>
#include <QThread>

#include <cstdio>

#include "app/gui/main_window.h"
#include "ui/charts/timing_line_chart.h"
#include "ui/common/export.h"
#include "ui/inference/inference_controller.h"
#include "ui/jobs/job_runner.h"
#include "ui/jobs/kernel_inspection_job.h"
#include "ui/kernel/user_kernel_panel.h"

namespace convscope::gui {
namespace {

void printError(const QString& message) {
  std::fprintf(stderr, "convscope: %s\n", qPrintable(message));
}

// The Your kernel tab still compiling or inspecting a student's kernel.
bool kernelRunning(const MainWindow& window) {
  const auto* kernel = window.view<ui::UserKernelPanel>("kernel");
  return kernel && (kernel->pipeline()->running() || kernel->inspection()->running());
}

// Lets queued work finish: inference results, layouts, the charts' queued replots.
void settle(MainWindow& window, int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  while ((window.loading() || window.inference()->busy() || kernelRunning(window)) && timer.elapsed() < timeoutMs) {
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(2);
  }
  for (int i = 0; i < 5; ++i) QApplication::processEvents(QEventLoop::AllEvents, 20);
}

// Jobs other than the picture's inference: the Where-it-fails tab classifies the whole test set
// when it is shown, which takes longer than one picture.
void waitForJobs(MainWindow& window, int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  while (!window.jobs()->idle() && timer.elapsed() < timeoutMs) {
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(5);
  }
  for (int i = 0; i < 5; ++i) QApplication::processEvents(QEventLoop::AllEvents, 20);
}

// The model and the test set load as jobs: waits for both. False when the model failed to load
// (lastError() says why).
bool waitForLoads(MainWindow& window) {
  bool modelFailed = false;
  const QMetaObject::Connection failure =
      QObject::connect(&window, &MainWindow::modelLoadFinished, [&](bool loaded) { modelFailed = !loaded; });
  QElapsedTimer timer;
  timer.start();
  while (window.loading() && timer.elapsed() < 120000) {
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(2);
  }
  QObject::disconnect(failure);
  return !modelFailed && !window.loading();
}

// Image files are decoded on a worker: waits for the picture and returns the error it brought,
// if any.
QString waitForPicture(MainWindow& window) {
  const QString before = window.lastError();
  QElapsedTimer timer;
  timer.start();
  while (window.pictureLoading() && timer.elapsed() < 120000) {
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(2);
  }
  if (window.pictureLoading()) return QObject::tr("timed out decoding the picture");
  return window.lastError() != before ? window.lastError() : QString();
}

}  // namespace

QString applyLaunchOptions(MainWindow& window, const LaunchOptions& options) {
  // A model asked for here supersedes the one of the start; without one, the window starts
  // without a model if the shipped one is missing, as it would on screen.
  if (!options.model.isEmpty()) window.loadModel(options.model);
  if (!waitForLoads(window) && !options.model.isEmpty()) return window.lastError();
  if (!options.data.isEmpty()) {  // after the model: photos are read as it sees them
    window.openTestSet(options.data);
    waitForLoads(window);
    if (window.testSetFolder() != QFileInfo(options.data).absoluteFilePath()) return window.lastError();
  }
  if (!options.variant.isEmpty() && !window.selectVariant(options.variant)) return window.lastError();
  for (const QString& bench : options.benches)
    if (!window.openBenchmark(bench)) return window.lastError();
  for (const QString& file : options.files) {
    if (!window.openFile(file) || !waitForLoads(window)) return window.lastError();
    if (const QString error = waitForPicture(window); !error.isEmpty()) return error;
  }
  if (options.index >= 0 && !window.selectTestImage(options.index)) return window.lastError();
  if (!options.tab.isEmpty()) window.selectTab(options.tab);
  if (!options.image.isEmpty() && !window.openImage(options.image)) return window.lastError();
  if (const QString error = waitForPicture(window); !error.isEmpty()) return error;
  if (options.presentation) window.setPresentation(true);
  return {};
}

int takeScreenshot(const LaunchOptions& options, qint64 startMilliseconds) {
  MainWindow window(MainWindow::Options::with(false, false));  // no settings; --size is the screen
  qint64 firstPrediction = -1;
  QObject::connect(&window, &MainWindow::firstPredictionShown, &window,
                   [&] { firstPrediction = QDateTime::currentMSecsSinceEpoch() - startMilliseconds; });
  if (const QString error = applyLaunchOptions(window, options); !error.isEmpty()) {
    printError(error);
    return 1;
  }
  window.setAttribute(Qt::WA_DontShowOnScreen);
  window.resize(options.size);
  window.show();
  settle(window, 30000);
  waitForJobs(window, 300000);
  const QString inferenceError =
      window.inference()->busy() ? QString("the inference did not finish in 30 s") : QString();
  const QPixmap shot = window.grab();
  if (!shot.save(options.screenshot, "PNG")) {
    printError(options.screenshot + ": could not write the PNG");
    return 1;
  }
  std::printf("convscope: wrote %s (%dx%d)", qPrintable(options.screenshot), shot.width(), shot.height());
  if (firstPrediction >= 0)
    std::printf("; first prediction shown %lld ms after start", static_cast<long long>(firstPrediction));
  std::printf("\n");
  if (!inferenceError.isEmpty()) {
    printError(inferenceError);
    return 1;
  }
  return 0;
}

int plotBenchmark(const LaunchOptions& options) {
  auto report = std::make_shared<BenchmarkReport>();
  try {
    *report = readBenchmarkJson(options.plot.toStdString());
  } catch (const std::exception& e) {
    printError(QString::fromStdString(e.what()));
    return 1;
  }
  if (report->runs.empty()) {
    printError(options.plot + ": the benchmark holds no runs to plot");
    return 1;
  }
  ui::TimingLineChart chart;
  chart.setReport(report);
  if (const QString error = ui::exportPlot(chart, options.out, 1100, 650); !error.isEmpty()) {
    printError(error);
    return 1;
  }
  std::printf("convscope: wrote %s (%zu variants, %zu runs)\n", qPrintable(options.out), chart.variants().size(),
              report->runs.size());
  return 0;
}

}  // namespace convscope::gui
