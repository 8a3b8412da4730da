// The command line of `convscope`: what to open at start, and the two headless modes
//   convscope --screenshot FILE [--model M] [--image I | --index N] [--variant V] [--tab T]
//   convscope --plot BENCH.json --out FILE
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

namespace convscope::gui {

struct LaunchOptions {
  QString screenshot;  // render the window offscreen into this PNG and exit
  QString plot;        // render this benchmark JSON's timing chart ...
  QString out;         // ... into this PNG or PDF and exit
  QString model;
  QString image;
  QString data;    // a test set folder: IDX files, or photos in class subfolders
  int index = -1;  // test image
  QString variant;
  QString tab;
  QStringList benches;  // benchmark JSONs to open: each on the roofline, the last in the timing tab
  bool presentation = false;
  QSize size{1440, 900};
  QStringList files;  // positional: models, images or benchmarks to open
};

enum class ParseResult { Run, ExitOk, UsageError };

// `arguments` as QCoreApplication::arguments() gives them (program name first). On ExitOk
// (--help, --version) `message` holds the text to print; on UsageError, the problem.
ParseResult parseLaunchOptions(const QStringList& arguments, LaunchOptions* options, QString* message);

}  // namespace convscope::gui
