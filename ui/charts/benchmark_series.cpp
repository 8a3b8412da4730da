#include "ui/charts/benchmark_series.h"

#include <QObject>

#include <algorithm>
#include <map>

#include "app/core/conv/variant_table.h"

namespace convscope::ui {

std::vector<std::string> variantsIn(const BenchmarkReport& report) {
  std::vector<std::string> variants;
  for (const BenchmarkRun& run : report.runs)
    if (std::find(variants.begin(), variants.end(), run.variant) == variants.end()) variants.push_back(run.variant);
  return variants;
}

std::vector<int> batchesIn(const BenchmarkReport& report) {
  std::vector<int> batches;
  for (const BenchmarkRun& run : report.runs) batches.push_back(run.batch);
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  return batches;
}

std::vector<std::string> convLayersIn(const BenchmarkReport& report) {
  for (const BenchmarkRun& run : report.runs)
    if (!run.layers.empty() && run.layers.front().node != kSummedConvLayersNode) {
      std::vector<std::string> names;
      for (const LayerBenchmark& layer : run.layers) names.push_back(layer.node);
      return names;
    }
  return {};
}

bool runOpTime(const BenchmarkRun& run, int layer, double* seconds) {
  if (layer == kAllConvLayers) {
    if (run.layers.empty()) return false;
    double sum = 0.0;
    for (const LayerBenchmark& l : run.layers) sum += l.opTime.median;
    *seconds = sum;
    return true;
  }
  if (layer < 0 || layer >= static_cast<int>(run.layers.size())) return false;
  if (run.layers.size() == 1 && run.layers.front().node == kSummedConvLayersNode) return false;
  *seconds = run.layers[static_cast<size_t>(layer)].opTime.median;
  return true;
}

BenchmarkRun summedRun(const std::string& variant, int batch, double seconds) {
  BenchmarkRun run;
  run.variant = variant;
  run.batch = batch;
  LayerBenchmark sum;
  sum.node = kSummedConvLayersNode;
  sum.ranVariant = variant;
  sum.opTime = {seconds, seconds, seconds};
  run.layers.push_back(std::move(sum));
  return run;
}

const BenchmarkRun* findRun(const BenchmarkReport& report, const std::string& variant, int batch) {
  const BenchmarkRun* found = nullptr;
  for (const BenchmarkRun& run : report.runs)
    if (run.variant == variant && run.batch == batch) found = &run;
  return found;
}

std::vector<VariantSeries> opTimeSeries(const BenchmarkReport& report, int layer) {
  std::vector<VariantSeries> series;
  for (const std::string& variant : variantsIn(report)) {
    VariantSeries s{variant, {}, {}};
    for (int batch : batchesIn(report)) {
      double seconds = 0.0;
      const BenchmarkRun* run = findRun(report, variant, batch);
      if (run && runOpTime(*run, layer, &seconds) && seconds > 0.0) {
        s.batches.push_back(batch);
        s.seconds.push_back(seconds);
      }
    }
    series.push_back(std::move(s));
  }
  return series;
}

std::vector<std::string> variantsInCourseOrder(const BenchmarkReport& report) {
  const std::vector<std::string> present = variantsIn(report);
  std::vector<std::string> ordered;
  for (const ConvVariant& v : convVariants())
    if (std::find(present.begin(), present.end(), v.id) != present.end()) ordered.push_back(v.id);
  for (const std::string& id : present)
    if (std::find(ordered.begin(), ordered.end(), id) == ordered.end()) ordered.push_back(id);
  return ordered;
}

std::vector<Speedup> speedups(const BenchmarkReport& report, int layer, int batch, std::string* baseline) {
  std::vector<Speedup> rows;
  for (const std::string& variant : variantsInCourseOrder(report)) {
    const BenchmarkRun* run = findRun(report, variant, batch);
    double seconds = 0.0;
    if (run && runOpTime(*run, layer, &seconds) && seconds > 0.0) rows.push_back({variant, seconds, 0.0, 0.0});
  }
  baseline->clear();
  if (rows.empty()) return rows;
  // The course's first GPU step where the report has it, else its first row.
  const ConvVariant* baselineRow = variantWithRole(VariantRole::kCourseBaseline);
  const std::string gpuBaseline = baselineRow ? baselineRow->id : std::string();
  const auto named = std::find_if(rows.begin(), rows.end(), [&](const Speedup& s) { return s.variant == gpuBaseline; });
  const Speedup& base = named != rows.end() ? *named : rows.front();
  *baseline = base.variant;
  const double baseSeconds = base.seconds;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].overBaseline = baseSeconds / rows[i].seconds;
    if (i > 0) rows[i].overPrevious = rows[i - 1].seconds / rows[i].seconds;
  }
  return rows;
}

QString variantDisplayName(const std::string& variantId) {
  for (const ConvVariant& v : convVariants())
    if (v.id == variantId) return QString::fromStdString(v.displayName);
  for (const ConvVariant* v : userConvVariants())  // a student's kernel: its file's name
    if (v->id == variantId) return QString::fromStdString(v->displayName);
  return QString::fromStdString(variantId);
}

QString convLayerLabel(const BenchmarkReport& report, int layer) {
  if (layer == kAllConvLayers) return QObject::tr("all conv layers");
  const std::vector<std::string> names = convLayersIn(report);
  const QString node = layer >= 0 && layer < static_cast<int>(names.size())
                           ? QString::fromStdString(names[static_cast<size_t>(layer)])
                           : QString();
  return QObject::tr("conv %1 (%2)").arg(layer + 1).arg(node);
}

}  // namespace convscope::ui
