#include "app/core/engine/end_to_end_breakdown.h"

#include <algorithm>

#include "app/core/conv/variant_table.h"

namespace convscope {

double EndToEndBreakdown::sumOfSegments() const {
  double sum = 0.0;
  for (const BreakdownSegment& segment : segments) sum += segment.seconds;
  return sum;
}

EndToEndBreakdown endToEndBreakdown(const BenchmarkRun& run) {
  EndToEndBreakdown breakdown;
  breakdown.measuredStages = !run.endToEndStages.empty();
  breakdown.totalIsInference = run.endToEnd.median <= 0.0;
  breakdown.totalSeconds = breakdown.totalIsInference ? run.inference.median : run.endToEnd.median;
  if (breakdown.measuredStages) {
    for (const EndToEndStage& stage : run.endToEndStages)
      breakdown.segments.push_back({stage.name, stage.kind, stage.time.median});
  } else {
    // What an older file knows: each conv layer's op time, and the op-time runs' upload of floats
    // (four times the bytes, from pageable memory). That upload is no part of the end-to-end step,
    // which uploads bytes from pinned memory: it is shown only where the float inference's time
    // stands in for the total, which it is part of.
    if (breakdown.totalIsInference && run.upload.median > 0.0)
      breakdown.segments.push_back({"upload (floats)", "upload", run.upload.median});
    for (const LayerBenchmark& layer : run.layers)
      breakdown.segments.push_back({layer.node, "conv", layer.opTime.median});
  }
  breakdown.measuredGapSeconds = breakdown.totalSeconds - breakdown.sumOfSegments();
  breakdown.gapsClamped = breakdown.measuredGapSeconds < 0.0;
  breakdown.segments.push_back({breakdown.measuredStages ? "gaps" : "other",
                                breakdown.measuredStages ? "gaps" : "other",
                                std::max(0.0, breakdown.measuredGapSeconds)});
  return breakdown;
}

double convLayerBytes(const std::vector<ConvProblem>& layers, int batch) {
  double bytes = 0.0;
  for (const ConvProblem& p : layers) {
    const double perImage = static_cast<double>(p.inChannels) * p.inHeight * p.inWidth +
                            static_cast<double>(p.outChannels) * p.outHeight() * p.outWidth();
    bytes += 4.0 * (batch * perImage + static_cast<double>(p.weightElements()));
  }
  return bytes;
}

EndToEndFloor endToEndFloorOfBytes(double convBytes, int batch, int64_t pictureBytes, double pinnedBytesPerSecond,
                                   double memoryBytesPerSecond) {
  EndToEndFloor floor;
  if (pinnedBytesPerSecond > 0.0)
    floor.uploadSeconds = static_cast<double>(batch) * static_cast<double>(pictureBytes) / pinnedBytesPerSecond;
  if (memoryBytesPerSecond > 0.0) floor.convBytesSeconds = convBytes / memoryBytesPerSecond;
  return floor;
}

EndToEndFloor endToEndFloor(const std::vector<ConvProblem>& layers, int batch, int64_t pictureBytes,
                            double pinnedBytesPerSecond, double memoryBytesPerSecond) {
  return endToEndFloorOfBytes(convLayerBytes(layers, batch), batch, pictureBytes, pinnedBytesPerSecond,
                              memoryBytesPerSecond);
}

RunConvBytes runConvBytes(const BenchmarkRun& run, int64_t pictureBytes) {
  RunConvBytes counted;
  bool network = false;
  for (const ConvVariant& v : convVariants())
    if (v.id == run.variant) network = static_cast<bool>(v.runNetwork);
  counted.wholeNetwork = network && run.layers.size() == 1;
  for (const LayerBenchmark& layer : run.layers) {
    const ConvProblem& p = layer.problem;
    const int64_t full = p.outputElements();
    const int64_t written = layer.outputElements > 0 ? layer.outputElements : full;
    counted.outputsUnknown = counted.outputsUnknown || layer.outputElements <= 0;
    counted.pooledStages += written < full;
    const double input = counted.wholeNetwork ? static_cast<double>(p.batch) * static_cast<double>(pictureBytes)
                                              : 4.0 * static_cast<double>(p.inputElements());
    counted.bytes += input + 4.0 * static_cast<double>(p.weightElements() + written);
    ++counted.stages;
  }
  return counted;
}

std::vector<ConvProblem> convLayerShapes(const BenchmarkReport& report) {
  const BenchmarkRun* most = nullptr;
  for (const BenchmarkRun& run : report.runs)
    if (!run.layers.empty() && (!most || run.layers.size() > most->layers.size())) most = &run;
  std::vector<ConvProblem> layers;
  if (most)
    for (const LayerBenchmark& layer : most->layers) layers.push_back(layer.problem);
  return layers;
}

}  // namespace convscope
