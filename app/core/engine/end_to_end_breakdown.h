// Where one run's end-to-end time goes, and the least time that step can take: what the Timing
// tab's Breakdown draws, from the benchmark JSON alone. No widgets here, so tests check the
// numbers directly.
//
// A run measured with its stages (BenchmarkRun::endToEndStages) gives them in order, then "gaps":
// the end-to-end median minus the stages' sum (host overhead, launch latency). The stages come
// from a separate, instrumented pass, so their sum can pass the unperturbed median; the gaps are
// then drawn as zero (clamped) and the breakdown says so. An older file has no stages: the
// breakdown shows what it can -- the conv layers' op times of the op-time runs, the rest as
// "other" -- and says that too; where the file has no end-to-end time either, the float
// inference's time stands in, and its upload (of floats) is a segment of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/core/conv/conv_problem.h"
#include "app/core/engine/benchmark.h"

namespace convscope {

struct BreakdownSegment {
  std::string name;      // the stage's name, "gaps", or (older files) "upload (floats)", a conv node, "other"
  std::string kind;      // as EndToEndStage::kind, or "gaps" / "other"
  double seconds = 0.0;  // a median; never negative
};

struct EndToEndBreakdown {
  std::vector<BreakdownSegment> segments;  // in the step's order; the last is "gaps" (or "other")
  double totalSeconds = 0.0;               // the end-to-end median (see totalIsInference)
  // The total minus the stages' sum before clamping: negative when the instrumented stages add up
  // to more than the unperturbed total.
  double measuredGapSeconds = 0.0;
  bool gapsClamped = false;
  bool measuredStages = false;    // false: rebuilt from an older file's op times
  bool totalIsInference = false;  // the file has no end-to-end time: the float inference's stands in
  double sumOfSegments() const;
};

EndToEndBreakdown endToEndBreakdown(const BenchmarkRun& run);

// One uint8 Fashion-MNIST picture, as the end-to-end path uploads it (scripts/end_to_end_table.py).
inline constexpr int64_t kEndToEndPictureBytes = 28 * 28;

// The least time an end-to-end step can take (scripts/end_to_end_table.py computes the same): the
// larger of the upload (the pictures over the pinned host-to-device bandwidth) and the conv bytes
// (what the conv stages must move, below, over the memory bandwidth). The upload overlaps the
// compute, so the larger is the floor, not their sum. A part whose bandwidth is unknown (0) is 0.
struct EndToEndFloor {
  double uploadSeconds = 0.0;
  double convBytesSeconds = 0.0;
  double seconds() const { return uploadSeconds > convBytesSeconds ? uploadSeconds : convBytesSeconds; }
};
// The bytes every conv layer must move at `batch` images (the layers' own batch is ignored) when
// each writes its full-size output: input read, weights read, output written once, 4-byte floats.
double convLayerBytes(const std::vector<ConvProblem>& layers, int batch);
EndToEndFloor endToEndFloor(const std::vector<ConvProblem>& layers, int batch, int64_t pictureBytes,
                            double pinnedBytesPerSecond, double memoryBytesPerSecond);
EndToEndFloor endToEndFloorOfBytes(double convBytes, int batch, int64_t pictureBytes, double pinnedBytesPerSecond,
                                   double memoryBytesPerSecond);

// The bytes one run's conv stages really move in an end-to-end step, at the run's batch: each
// stage's input read, its weights read and what it wrote (LayerBenchmark::outputElements: the
// pooled output where the variant fused the pooling, the scores where one kernel ran the whole
// network), 4-byte floats; a whole-network kernel reads the staged 8-bit pictures
// (`pictureBytes` each) instead of a float input. A stage whose file does not say what it wrote (an older file) counts
// its full conv output.
struct RunConvBytes {
  double bytes = 0.0;
  int stages = 0;               // conv stages counted
  int pooledStages = 0;         // stages that wrote less than their full conv output (a fused pooling)
  bool wholeNetwork = false;    // one kernel ran the network: pictures in, scores out
  bool outputsUnknown = false;  // some stage's file did not say what it wrote: its full output counted
};
RunConvBytes runConvBytes(const BenchmarkRun& run, int64_t pictureBytes);

// The network's conv layers, from the run that lists the most of them (a whole-network run lists
// its one kernel under its first layer); empty when no run has one.
std::vector<ConvProblem> convLayerShapes(const BenchmarkReport& report);

}  // namespace convscope
