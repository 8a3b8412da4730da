// The roofline's numbers, from a benchmark report (the CLI's JSON): each run's conv layers as
// points (arithmetic intensity from the bytes the variant moves, achieved FLOP/s at the median
// op time) and the device's ceilings (peak memory bandwidth, FP32 and tensor-core peaks), with
// each point's floor (the larger of bytes over bandwidth and FLOPs over its arithmetic's peak)
// and how many times the floor it took. No widgets here, so tests check the numbers directly.
#pragma once

#include <QString>

#include <string>
#include <vector>

#include "app/core/device/gpu_platform.h"
#include "app/core/engine/benchmark.h"

namespace convscope::ui {

// A device's ceilings, computed from its figures (app/core/device/gpu_platform.h: the driver's
// memory clock, bus width, SM count and clock, compute capability, and a copy measured on it);
// no table of GPU names. Zero where unknown (then no roof is drawn and no floor computed).
struct DeviceCeilings {
  QString device;
  double bytesPerSecond = 0.0;      // peak memory bandwidth: the driver's figure, or the measured copy if more
  double copyBytesPerSecond = 0.0;  // the device-to-device copy measured on it (0: not measured)
  double fp32FlopsPerSecond = 0.0;  // SMs x SM clock x FP32 lanes x 2
  double tf32FlopsPerSecond = 0.0;  // SMs x SM clock x dense TF32 tensor-core FLOPs per SM per clock
  QString source;                   // where the figures come from, for the chart's note
  bool known() const { return bytesPerSecond > 0.0 && fp32FlopsPerSecond > 0.0; }
};
DeviceCeilings ceilingsOf(const DeviceFigures& figures);
// The ceilings of the device a benchmark named: this machine's GPU when `device` is its name
// (localDeviceFigures()); unknown for another machine's GPU (a file written before the benchmark
// JSON recorded "device_figures" names the device only).
DeviceCeilings ceilingsFor(const std::string& device);
// The ceilings of the device `report` was measured on: what every chart asks. From the figures the
// file recorded (BenchmarkReport::deviceFigures) where it has them, so a file opened on another
// machine keeps its GPU's roofs; else as ceilingsFor(report.device). `source` says which.
DeviceCeilings ceilingsFor(const BenchmarkReport& report);

// The peak a variant's products run at: FP32, TF32 (tensor cores) or 3xTF32 (three TF32 products
// per product: a third of the TF32 peak). Variants this build does not know count as FP32.
double peakFlopsFor(const std::string& variant, const DeviceCeilings& ceilings);

struct RooflinePoint {
  std::string variant;  // the variant that ran the layer (the run's, unless it fell back)
  std::string runVariant;
  int layer = 0;  // conv layer index in the run
  std::string node;
  int batch = 0;
  double flops = 0.0;           // the conv's, multiply-add = 2 (problem.flops)
  double bytes = 0.0;           // compulsory (input, weights, output written) + the variant's scratch traffic
  double seconds = 0.0;         // median op time
  double intensity = 0.0;       // flops / bytes, FLOP per byte
  double flopsPerSecond = 0.0;  // flops / seconds
  double floorSeconds = 0.0;    // 0 when the device's ceilings are unknown
  double timesFloor = 0.0;      // seconds / floorSeconds, 0 when unknown
};

// The compulsory bytes of a layer as the JSON's gbytes_per_s counts them: input, weights and
// the elements the stage wrote, 4 bytes each.
double compulsoryBytes(const LayerBenchmark& layer);

// Every layer of every run at `batch` (every batch when 0), in the report's order; layers
// without a positive op time are left out.
std::vector<RooflinePoint> rooflinePoints(const BenchmarkReport& report, const DeviceCeilings& ceilings, int batch = 0);

}  // namespace convscope::ui
