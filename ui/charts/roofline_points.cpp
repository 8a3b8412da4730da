#include "ui/charts/roofline_points.h"

#include <algorithm>

#include "app/core/conv/variant_table.h"

namespace convscope::ui {

DeviceCeilings ceilingsFor(const std::string& device) {
  DeviceCeilings c;
  c.device = QString::fromStdString(device);
  // docs/performance.md: copy bandwidth measured by scripts/device.sh on the lent H100; FLOP
  // peaks from the datasheet (132 SMs x 128 FP32 lanes x 2 x 1.98 GHz; TF32 dense).
  if (device.find("H100") != std::string::npos) {
    c.bytesPerSecond = 2924e9;
    c.fp32FlopsPerSecond = 66.9e12;
    c.tf32FlopsPerSecond = 494.7e12;
    c.source = QStringLiteral(
        "copy bandwidth measured on the lent H100, FLOP peaks from the datasheet "
        "(docs/performance.md)");
  } else {
    c.source = QStringLiteral("no ceilings known for this device: points only");
  }
  return c;
}

double peakFlopsFor(const std::string& variant, const DeviceCeilings& ceilings) {
  std::string arithmetic = "FP32";
  for (const ConvVariant& v : convVariants())
    if (v.id == variant) arithmetic = v.arithmetic;
  if (arithmetic == "TF32") return ceilings.tf32FlopsPerSecond;
  if (arithmetic == "3xTF32") return ceilings.tf32FlopsPerSecond / 3.0;
  return ceilings.fp32FlopsPerSecond;
}

double compulsoryBytes(const LayerBenchmark& layer) {
  const ConvProblem& p = layer.problem;
  const int64_t written = layer.outputElements > 0 ? layer.outputElements : p.outputElements();
  return 4.0 * static_cast<double>(p.inputElements() + p.weightElements() + written);
}

std::vector<RooflinePoint> rooflinePoints(const BenchmarkReport& report, const DeviceCeilings& ceilings, int batch) {
  std::vector<RooflinePoint> points;
  for (const BenchmarkRun& run : report.runs) {
    if (batch > 0 && run.batch != batch) continue;
    for (size_t l = 0; l < run.layers.size(); ++l) {
      const LayerBenchmark& layer = run.layers[l];
      if (layer.opTime.median <= 0.0) continue;
      RooflinePoint pt;
      pt.runVariant = run.variant;
      pt.variant = layer.ranVariant.empty() ? run.variant : layer.ranVariant;
      pt.layer = static_cast<int>(l);
      pt.node = layer.node;
      pt.batch = run.batch;
      pt.flops = static_cast<double>(layer.problem.flops());
      const double compulsory = compulsoryBytes(layer);
      double scratch = 0.0;
      for (const ConvVariant& v : convVariants())
        if (v.id == pt.variant && v.scratchBytes) scratch = static_cast<double>(v.scratchBytes(layer.problem));
      pt.bytes = compulsory + scratch;
      pt.seconds = layer.opTime.median;
      pt.intensity = pt.flops / pt.bytes;
      pt.flopsPerSecond = pt.flops / pt.seconds;
      const double peak = peakFlopsFor(pt.variant, ceilings);
      if (ceilings.known() && peak > 0.0) {
        // The floor counts compulsory bytes only: no variant can move less.
        pt.floorSeconds = std::max(compulsory / ceilings.bytesPerSecond, pt.flops / peak);
        pt.timesFloor = pt.seconds / pt.floorSeconds;
      }
      points.push_back(pt);
    }
  }
  return points;
}

}  // namespace convscope::ui
