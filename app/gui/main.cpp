// convscope: the desktop window, or, with --screenshot / --plot, its headless renderings.
#include <QApplication>
#include <QDateTime>

#include <cstdio>
#include <cstring>

#include "app/core/util/memory_limit.h"
#include "app/gui/headless.h"
#include "app/gui/launch_options.h"
#include "app/gui/main_window.h"

namespace {

bool hasFlag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], flag) == 0 || std::strncmp(argv[i], flag, std::strlen(flag)) == 0) return true;
  return false;
}

// The offscreen platform's notes about itself are noise to someone who asked for a picture.
void quietOffscreenNotes(QtMsgType type, const QMessageLogContext&, const QString& message) {
  if (type == QtDebugMsg || type == QtInfoMsg) return;
  if (message.contains("propagateSizeHints") || message.contains("XDG_RUNTIME_DIR")) return;
  std::fprintf(stderr, "%s\n", qPrintable(message));
}

bool haveDisplay() {
  return !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
}

}  // namespace

int main(int argc, char** argv) {
  const qint64 start = QDateTime::currentMSecsSinceEpoch();
  const bool headless = hasFlag(argc, argv, "--screenshot") || hasFlag(argc, argv, "--plot") ||
                        hasFlag(argc, argv, "--help") || hasFlag(argc, argv, "-h") || hasFlag(argc, argv, "--version");
  const bool platformChosen = !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") || hasFlag(argc, argv, "-platform");
  if (!haveDisplay() && !platformChosen) {
    if (!headless) {
      std::fprintf(stderr,
                   "convscope: there is no display ($DISPLAY and $WAYLAND_DISPLAY are empty), so the window cannot "
                   "open.\n  On a desktop, run it there; over ssh, use 'ssh -X'; on a server, run it under a virtual "
                   "display:\n    xvfb-run -s '-screen 0 1600x1000x24' %s\n  or render it headless:\n    %s "
                   "--screenshot shot.png [--index N] [--tab %s]\n",
                   argv[0], argv[0], qPrintable(convscope::gui::MainWindow::tabNames().join('|')));
      return 1;
    }
    qputenv("QT_QPA_PLATFORM", "offscreen");  // the headless modes need no display
  }

  if (headless) qInstallMessageHandler(quietOffscreenNotes);
  convscope::keepFreedMemoryForReuse();  // every inference reuses the last one's memory
  QApplication app(argc, argv);
  QApplication::setOrganizationName("ConvScope");
  QApplication::setApplicationName("convscope");
  QApplication::setApplicationVersion(CONVSCOPE_VERSION);  // the project's, from CMake
  QApplication::setStyle("Fusion");                        // the same look on every desktop and in screenshots

  convscope::gui::LaunchOptions options;
  QString message;
  switch (convscope::gui::parseLaunchOptions(QApplication::arguments(), &options, &message)) {
    case convscope::gui::ParseResult::ExitOk:
      std::printf("%s", qPrintable(message));
      return 0;
    case convscope::gui::ParseResult::UsageError:
      std::fprintf(stderr, "convscope: %s\n(convscope --help lists the options)\n", qPrintable(message));
      return 2;
    case convscope::gui::ParseResult::Run:
      break;
  }
  if (!options.plot.isEmpty()) return convscope::gui::plotBenchmark(options);
  if (!options.screenshot.isEmpty()) return convscope::gui::takeScreenshot(options, start);

  convscope::gui::MainWindow window(convscope::gui::MainWindow::Options{});
  convscope::gui::applyLaunchOptions(window, options);  // errors show in the window
  window.show();
  return app.exec();
}
