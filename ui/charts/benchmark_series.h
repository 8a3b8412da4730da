// The numbers the timing charts and table show, taken from a BenchmarkReport (the CLI's JSON):
// which variants, batch sizes and conv layers it holds, and each variant's op time per batch
// size for one conv layer or their sum. No widgets here, so tests check the numbers directly.
#pragma once

#include <QString>

#include <string>
#include <vector>

#include "app/core/engine/benchmark.h"

namespace convscope::ui {

constexpr int kAllConvLayers = -1;  // "layer" meaning the sum over every conv layer

struct VariantSeries {
  std::string variant;
  std::vector<double> batches;  // ascending
  std::vector<double> seconds;  // median op time at each batch
};

std::vector<std::string> variantsIn(const BenchmarkReport& report);    // in order of first appearance
std::vector<int> batchesIn(const BenchmarkReport& report);             // ascending, unique
std::vector<std::string> convLayersIn(const BenchmarkReport& report);  // node names of the first run

// A run known only by its conv layers' op-time sum (a class submission's result): it answers for
// kAllConvLayers, never for one layer, so a per-layer chart leaves it out rather than misplace it.
inline constexpr const char* kSummedConvLayersNode = "all conv layers (summed)";
BenchmarkRun summedRun(const std::string& variant, int batch, double seconds);

// The median op time of one conv layer of a run, or of all of them summed; false if it has no such layer.
bool runOpTime(const BenchmarkRun& run, int layer, double* seconds);
// The run of a variant at a batch size (the last one, if a file holds it twice), or null.
const BenchmarkRun* findRun(const BenchmarkReport& report, const std::string& variant, int batch);

std::vector<VariantSeries> opTimeSeries(const BenchmarkReport& report, int layer);

// The report's variants in course order: the registry's order (the order the course takes the
// optimizations in), then ids the registry does not know, as the report lists them.
std::vector<std::string> variantsInCourseOrder(const BenchmarkReport& report);

// How much faster each variant is at one batch size, in course order: over the baseline (the
// course's first GPU step, the table's first GPU row, where the report has it, else the first variant) and
// over the course step before it (the variant before it in course order). 0 where there is none.
struct Speedup {
  std::string variant;
  double seconds = 0.0;  // the op time compared (one conv layer, or their sum)
  double overBaseline = 0.0;
  double overPrevious = 0.0;
};
std::vector<Speedup> speedups(const BenchmarkReport& report, int layer, int batch, std::string* baseline);

// The registry's display name, or the id itself for a variant this build does not know.
QString variantDisplayName(const std::string& variantId);
// "conv 1 (/0/Conv)", or "all conv layers" for kAllConvLayers.
QString convLayerLabel(const BenchmarkReport& report, int layer);

}  // namespace convscope::ui
