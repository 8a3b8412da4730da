#include "ui/charts/roofline_points.h"

#include <algorithm>

#include "app/core/conv/variant_table.h"

namespace convscope::ui {

DeviceCeilings ceilingsOf(const DeviceFigures& figures) {
  DeviceCeilings c;
  c.device = QString::fromStdString(figures.name);
  const std::optional<DevicePeaks> peaks = devicePeaksOf(figures);
  if (!peaks) {
    c.source = QStringLiteral("no figures known for this device: points only");
    return c;
  }
  c.bytesPerSecond = peaks->bytesPerSecond;
  c.copyBytesPerSecond = peaks->copyBytesPerSecond;
  c.fp32FlopsPerSecond = peaks->fp32FlopsPerSecond;
  c.tf32FlopsPerSecond = peaks->tf32FlopsPerSecond;
  c.source = QString::fromStdString(peaks->source);
  return c;
}

DeviceCeilings ceilingsFor(const std::string& device) {
  if (!device.empty() && gpuInfo().usable && gpuInfo().name == device) {
    DeviceCeilings c = ceilingsOf(localDeviceFigures());
    if (c.known()) c.source = QStringLiteral("this machine's GPU, ") + c.source;
    return c;
  }
  DeviceCeilings c;
  c.device = QString::fromStdString(device);
  c.source = QStringLiteral("no ceilings known for this device (not this machine's GPU): points only");
  return c;
}

DeviceCeilings ceilingsFor(const BenchmarkReport& report) {
  // The figures the file recorded are those of the GPU it was measured on, wherever it is opened.
  if (report.deviceFigures) {
    DeviceCeilings c = ceilingsOf(*report.deviceFigures);
    if (c.device.isEmpty()) c.device = QString::fromStdString(report.device);
    if (c.bytesPerSecond > 0.0 || c.fp32FlopsPerSecond > 0.0) {
      c.source = QStringLiteral("roofs from the benchmark file's device_figures, ") + c.source;
      return c;
    }
  }
  return ceilingsFor(report.device);
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
