// The GPU as the core knows it, without naming CUDA: what device there is (or why none can be
// used) and how to make the engine's Device on it; and what that device can do at most (its peak
// memory bandwidth and FLOP rates), computed from the figures its driver reports and a copy
// measured on it -- never from a table of GPU names. gpu/ installs the CUDA platform when a
// program links it; without it (a build without CUDA, or a program that does not link gpu/)
// there is no GPU and every query says why.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "app/core/device/device.h"
#include "app/core/device/kernel_handle.h"

namespace convscope {

struct GpuInfo {
  bool usable = false;
  std::string unusableReason;  // set when !usable: "this build has no CUDA", "no CUDA device found"
  std::string name;            // "NVIDIA H100 80GB HBM3"
  std::string uuid;            // the driver's "GPU-xxxxxxxx-..." (what nvidia-smi shows); "" when unknown
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessors = 0;
  int smClockMHz = 0;                    // the SMs' peak clock (cudaDevAttrClockRate)
  int memoryClockMHz = 0;                // the memory's peak clock (cudaDevAttrMemoryClockRate)
  int memoryBusWidthBits = 0;            // cudaDevAttrGlobalMemoryBusWidth
  int64_t sharedBytesPerBlockOptin = 0;  // shared memory a block may have after opting in
  double memoryGiB = 0.0;
  std::string driverVersion;  // "13.0"
  std::string runtimeVersion;
  std::string cudnnVersion;  // "9.13.0", or "" when the build has no cuDNN
};

// What the CUDA runtime reports for one kernel at one block size (cudaFuncGetAttributes,
// cudaOccupancyMaxActiveBlocksPerMultiprocessor): the GPU mapping view's measured figures.
struct KernelOccupancy {
  int registersPerThread = 0;
  int blocksPerSm = 0;
  double occupancy = 0.0;  // active warps over the multiprocessor's maximum
};

struct GpuPlatform {
  std::function<GpuInfo()> query;                       // called once
  std::function<std::unique_ptr<Device>()> makeDevice;  // only when query() said usable
  // Optional: the occupancy of `kernel` launched with `threadsPerBlock`; nullopt when unknown.
  std::function<std::optional<KernelOccupancy>(const KernelHandle& kernel, int threadsPerBlock)> occupancy;
  // Optional: a device-to-device copy on the device of query(), timed; bytes read plus bytes
  // written over the fastest copy's time. 0 when it cannot be measured. May throw.
  std::function<double()> measureCopyBytesPerSecond;
};

// Installed before main() by gpu/; a second installation replaces the first.
void installGpuPlatform(GpuPlatform platform);

// Queried once and cached; safe to call from any thread.
const GpuInfo& gpuInfo();

// The runtime's figures for a kernel, when a GPU is usable and the platform can say; else nullopt
// (the caller estimates from the launch geometry).
std::optional<KernelOccupancy> kernelOccupancy(const KernelHandle& kernel, int threadsPerBlock);

// The engine's Device on the GPU. Throws convscope::Error with the reason when none can be used.
std::unique_ptr<Device> createGpuDevice();

// ---- What a GPU can do at most ----

// A GPU's figures as the driver reports them, plus a copy measured on it: all that its peaks are
// computed from. Result files carry them (deviceFiguresToJson), so a parent process, another
// machine or a later reading computes the same peaks without the GPU.
struct DeviceFigures {
  std::string name;
  std::string uuid;
  std::string driver;
  std::string runtime;
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessors = 0;
  int smClockMHz = 0;
  int memoryClockMHz = 0;
  int memoryBusWidthBits = 0;
  double copyBytesPerSecond = 0.0;  // a device-to-device copy measured on it; 0 when not measured
};

// The figures of `info` (no copy measured).
DeviceFigures deviceFiguresOf(const GpuInfo& info);
// This machine's GPU: gpuInfo() and its copy bandwidth (measuredCopyBytesPerSecond()). Empty
// figures (name "") when no GPU can be used.
DeviceFigures localDeviceFigures();

// As JSON: "name", "uuid", "compute_capability" ("9.0"), "driver", "runtime", "sm_count",
// "sm_clock_mhz", "memory_clock_mhz", "memory_bus_width_bits", "copy_bytes_per_second" (null
// when not measured). Reading takes what is there: a missing or malformed key is 0 or "" (an
// older file's "device" object has name, clocks and versions only: its peaks are unknown).
nlohmann::json deviceFiguresToJson(const DeviceFigures& figures);
DeviceFigures deviceFiguresFromJson(const nlohmann::json& json);

// What a device can do at most: only a time no kernel can reach is ever flagged, so every figure
// is an upper bound.
struct DevicePeaks {
  // The memory bandwidth the floors use: the larger of the driver's figure and the measured copy.
  double bytesPerSecond = 0.0;
  // The fastest arithmetic that can pass FP32's check (a kernel may use tensor cores: 3xTF32
  // passes FP32's tolerance): the larger of the FP32 and the TF32 peaks.
  double flopsPerSecond = 0.0;
  double driverBytesPerSecond = 0.0;  // memory clock x 2 (double data rate) x bus width / 8
  double copyBytesPerSecond = 0.0;    // measured; 0 when not
  double fp32FlopsPerSecond = 0.0;    // SMs x SM clock x FP32 lanes per SM x 2 (a fused multiply-add)
  double tf32FlopsPerSecond = 0.0;    // SMs x SM clock x dense TF32 tensor FLOPs per SM per clock; 0: none
  std::string source;                 // how the figures were computed, in words
};

// FP32 lanes per SM (CUDA cores), and dense TF32 tensor-core FLOPs per SM per clock, of a compute
// capability (the CUDA programming guide's throughput table; NVIDIA's architecture whitepapers).
// 0 where unknown (a compute capability newer than this build) or absent (TF32 before 8.0). Where
// parts of one compute capability differ (a GeForce's half-rate TF32), the larger.
int fp32LanesPerSm(int computeMajor, int computeMinor);
int tf32FlopsPerSmPerClock(int computeMajor, int computeMinor);

// The peaks of a device with these figures; nullopt when neither a bandwidth nor a FLOP rate can
// be computed (no bus width or memory clock, no SM count or clock).
std::optional<DevicePeaks> devicePeaksOf(const DeviceFigures& figures);
std::optional<DevicePeaks> devicePeaksFromJson(const nlohmann::json& device);  // of deviceFiguresFromJson

// The measured copy bandwidth of this machine's GPU: measured once per machine and kept in a small
// JSON file in the user's cache folder (copyBandwidthCacheFile()), keyed by the device's UUID (its
// name where the driver gives none) and the driver's version; in this process measured or read
// once. 0 when no GPU can be used or the platform cannot measure. Never throws.
double measuredCopyBytesPerSecond();

// $CONVSCOPE_DEVICE_CACHE when set, else $XDG_CACHE_HOME (else ~/.cache)/ConvScope/convscope/
// device-bandwidth.json.
std::filesystem::path copyBandwidthCacheFile();

// The cached figure for `key` in `cacheFile`; when there is none, `measure()` is called and a
// positive result written there (folders made as needed). A missing, unreadable or malformed file
// is measured over; a file that cannot be written is left as it is (a sandboxed process). Never
// throws: a measurement that throws counts as 0.
double cachedCopyBytesPerSecond(const std::filesystem::path& cacheFile, const std::string& key,
                                const std::string& deviceName, const std::function<double()>& measure);

// The cache's key for `figures`: "<uuid or name> | driver <driver>".
std::string copyBandwidthCacheKey(const DeviceFigures& figures);

}  // namespace convscope
