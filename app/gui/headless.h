// What `convscope` does without a person in front of it: apply the command line to a window,
// render the window into a PNG (--screenshot), or render a benchmark's timing chart (--plot).
#pragma once

#include <QString>

#include "app/gui/launch_options.h"

namespace convscope::gui {

class MainWindow;

// Opens what the options name (model, variant, picture, benchmark, tab, presentation mode) in
// `window`; the first thing that failed, or an empty string.
QString applyLaunchOptions(MainWindow& window, const LaunchOptions& options);

// Exit codes: 0 written, 1 failed (the message is on stderr).
int takeScreenshot(const LaunchOptions& options, qint64 startMilliseconds);
int plotBenchmark(const LaunchOptions& options);

}  // namespace convscope::gui
