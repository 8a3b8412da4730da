#include "app/gui/launch_options.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QRegularExpression>

#include "app/core/conv/variant_table.h"
#include "app/gui/main_window.h"

namespace convscope::gui {

ParseResult parseLaunchOptions(const QStringList& arguments, LaunchOptions* options, QString* message) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "ConvScope: what every layer of a small CNN makes of a picture, and what each CUDA convolution variant\n"
      "does to its op time. Without options it opens the window.");
  const QCommandLineOption help({"h", "help"}, "Show this help.");
  const QCommandLineOption version("version", "Show the version.");
  const QCommandLineOption screenshot("screenshot", "Render the window offscreen into FILE (PNG) and exit.", "FILE");
  const QCommandLineOption plot("plot", "Render the timing chart of a benchmark JSON (see --out) and exit.",
                                "BENCH.json");
  const QCommandLineOption out("out", "Where --plot writes: FILE.png or FILE.pdf.", "FILE");
  const QCommandLineOption model("model", "The ONNX model to load (default: course-high).", "M");
  const QCommandLineOption image("image", "An image file to classify.", "I");
  const QCommandLineOption data(
      "data", "The test set: a folder of IDX files, or of photos in class subfolders (folder/tabby/1.jpg).", "DIR");
  const QCommandLineOption index("index", "The test image to classify (0-9999).", "N");
  const QCommandLineOption variant("variant", "The kernel variant (see 'convscope-cli variants').", "V");
  const QCommandLineOption tab("tab", "The tab to show: " + MainWindow::tabNames().join(", ") + ".", "T");
  const QCommandLineOption bench(
      "bench", "A benchmark JSON to open in the timing tab and on the roofline; repeat it to compare machines.",
      "BENCH.json");
  const QCommandLineOption presentation("presentation", "Start in presentation mode (large fonts, high contrast).");
  const QCommandLineOption size("size", "Window size for --screenshot (default 1440x900).", "WxH");
  for (const auto& option :
       {help, version, screenshot, plot, out, model, image, data, index, variant, tab, bench, presentation, size})
    parser.addOption(option);
  parser.addPositionalArgument(
      "files",
      "Models (.onnx), images, benchmark JSON files, your own kernels (.cu) or a class's results folder (convscope-cli "
      "grade --out) to open.",
      "[files...]");

  if (!parser.parse(arguments)) {
    *message = parser.errorText();
    return ParseResult::UsageError;
  }
  if (parser.isSet(help)) {
    *message = parser.helpText();
    return ParseResult::ExitOk;
  }
  if (parser.isSet(version)) {
    *message = QCoreApplication::applicationName() + " " + QCoreApplication::applicationVersion() + "\n";
    return ParseResult::ExitOk;
  }
  options->screenshot = parser.value(screenshot);
  options->plot = parser.value(plot);
  options->out = parser.value(out);
  options->model = parser.value(model);
  options->image = parser.value(image);
  options->data = parser.value(data);
  options->variant = parser.value(variant);
  options->tab = parser.value(tab).toLower();
  options->benches = parser.values(bench);
  options->presentation = parser.isSet(presentation);
  options->files = parser.positionalArguments();

  if (parser.isSet(plot) != parser.isSet(out)) {
    *message = "--plot and --out go together: convscope --plot BENCH.json --out FILE.png";
    return ParseResult::UsageError;
  }
  if (parser.isSet(plot) && parser.isSet(screenshot)) {
    *message = "--plot and --screenshot cannot be combined";
    return ParseResult::UsageError;
  }
  if (parser.isSet(image) && parser.isSet(index)) {
    *message = "--image and --index cannot be combined: choose one picture";
    return ParseResult::UsageError;
  }
  if (parser.isSet(index)) {
    bool ok = false;
    options->index = parser.value(index).toInt(&ok);
    if (!ok || options->index < 0) {
      *message = "--index: '" + parser.value(index) + "' is not a test image number (0, 1, 2, ...)";
      return ParseResult::UsageError;
    }
  }
  if (parser.isSet(tab) && !MainWindow::tabNames().contains(options->tab)) {
    *message = "--tab: '" + parser.value(tab) + "' is not a tab; choose one of " + MainWindow::tabNames().join(", ");
    return ParseResult::UsageError;
  }
  if (parser.isSet(variant)) {
    try {
      const ConvVariant& v = findConvVariant(options->variant.toStdString());
      if (const std::string reason = v.unavailableReason(); !reason.empty()) {
        *message = "--variant: '" + options->variant + "' cannot run here: " + QString::fromStdString(reason);
        return ParseResult::UsageError;
      }
    } catch (const std::exception& e) {
      *message = "--variant: " + QString::fromStdString(e.what());
      return ParseResult::UsageError;
    }
  }
  if (parser.isSet(size)) {
    const QRegularExpressionMatch match = QRegularExpression("^(\\d+)x(\\d+)$").match(parser.value(size));
    const int width = match.hasMatch() ? match.captured(1).toInt() : 0;
    const int height = match.hasMatch() ? match.captured(2).toInt() : 0;
    if (width < 320 || height < 240 || width > 8000 || height > 8000) {
      *message = "--size: '" + parser.value(size) + "' is not WIDTHxHEIGHT between 320x240 and 8000x8000";
      return ParseResult::UsageError;
    }
    options->size = QSize(width, height);
  }
  return ParseResult::Run;
}

}  // namespace convscope::gui
