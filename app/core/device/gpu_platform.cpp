#include "app/core/device/gpu_platform.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/core/util/atomic_file.h"
#include "app/core/util/error.h"

namespace convscope {
namespace {

using nlohmann::json;

GpuPlatform& installed() {
  static GpuPlatform platform;
  return platform;
}

constexpr const char* kCopyCacheSchema = "convscope-device-bandwidth/1";

std::string nowIso() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// A whole number of a JSON object's field, 0 when missing, not a number or out of int's range.
int intField(const json& j, const char* key) {
  const auto at = j.find(key);
  if (at == j.end() || !at->is_number()) return 0;
  const double v = at->get<double>();
  return v >= 0.0 && v <= 1e9 ? static_cast<int>(v) : 0;
}

std::string stringField(const json& j, const char* key) {
  const auto at = j.find(key);
  return at != j.end() && at->is_string() ? at->get<std::string>() : std::string();
}

}  // namespace

void installGpuPlatform(GpuPlatform platform) {
  installed() = std::move(platform);
}

const GpuInfo& gpuInfo() {
  static const GpuInfo info = [] {
    if (installed().query) return installed().query();
    GpuInfo none;
    none.unusableReason = "this build of ConvScope has no CUDA support";
    return none;
  }();
  return info;
}

std::optional<KernelOccupancy> kernelOccupancy(const KernelHandle& kernel, int threadsPerBlock) {
  if (!kernel.function || !gpuInfo().usable || !installed().occupancy) return std::nullopt;
  return installed().occupancy(kernel, threadsPerBlock);
}

std::unique_ptr<Device> createGpuDevice() {
  if (!gpuInfo().usable) throw Error("no GPU can be used: " + gpuInfo().unusableReason);
  return installed().makeDevice();
}

DeviceFigures deviceFiguresOf(const GpuInfo& info) {
  DeviceFigures f;
  if (!info.usable) return f;
  f.name = info.name;
  f.uuid = info.uuid;
  f.driver = info.driverVersion;
  f.runtime = info.runtimeVersion;
  f.computeMajor = info.computeMajor;
  f.computeMinor = info.computeMinor;
  f.multiprocessors = info.multiprocessors;
  f.smClockMHz = info.smClockMHz;
  f.memoryClockMHz = info.memoryClockMHz;
  f.memoryBusWidthBits = info.memoryBusWidthBits;
  return f;
}

DeviceFigures localDeviceFigures() {
  DeviceFigures f = deviceFiguresOf(gpuInfo());
  if (!f.name.empty()) f.copyBytesPerSecond = measuredCopyBytesPerSecond();
  return f;
}

json deviceFiguresToJson(const DeviceFigures& f) {
  return {{"name", f.name},
          {"uuid", f.uuid},
          {"compute_capability", std::to_string(f.computeMajor) + "." + std::to_string(f.computeMinor)},
          {"driver", f.driver},
          {"runtime", f.runtime},
          {"sm_count", f.multiprocessors},
          {"sm_clock_mhz", f.smClockMHz},
          {"memory_clock_mhz", f.memoryClockMHz},
          {"memory_bus_width_bits", f.memoryBusWidthBits},
          {"copy_bytes_per_second", f.copyBytesPerSecond > 0.0 ? json(f.copyBytesPerSecond) : json(nullptr)}};
}

DeviceFigures deviceFiguresFromJson(const json& j) {
  DeviceFigures f;
  if (!j.is_object()) return f;
  f.name = stringField(j, "name");
  f.uuid = stringField(j, "uuid");
  f.driver = stringField(j, "driver");
  f.runtime = stringField(j, "runtime");
  const std::string capability = stringField(j, "compute_capability");
  if (const size_t dot = capability.find('.'); dot != std::string::npos && dot > 0 && dot + 1 < capability.size() &&
                                               capability.find_first_not_of("0123456789.") == std::string::npos) {
    f.computeMajor = std::atoi(capability.substr(0, dot).c_str());
    f.computeMinor = std::atoi(capability.substr(dot + 1).c_str());
  }
  f.multiprocessors = intField(j, "sm_count");
  f.smClockMHz = intField(j, "sm_clock_mhz");
  f.memoryClockMHz = intField(j, "memory_clock_mhz");
  f.memoryBusWidthBits = intField(j, "memory_bus_width_bits");
  if (const auto at = j.find("copy_bytes_per_second"); at != j.end() && at->is_number())
    f.copyBytesPerSecond = std::max(0.0, at->get<double>());
  return f;
}

int fp32LanesPerSm(int major, int minor) {
  switch (major) {
    case 3:
      return 192;  // Kepler
    case 5:
      return 128;  // Maxwell
    case 6:
      return minor == 0 ? 64 : 128;  // Pascal: GP100 64, GP10x 128
    case 7:
      return 64;  // Volta, Turing
    case 8:
      return minor == 0 ? 64 : 128;  // Ampere: GA100 64, GA10x and Ada 128
    case 9:
    case 10:
    case 11:
    case 12:
      return 128;  // Hopper, Blackwell
    default:
      return 0;
  }
}

int tf32FlopsPerSmPerClock(int major, int minor) {
  // Dense, without sparsity: 2 x the multiply-adds a tensor-core SM does per clock on TF32.
  switch (major) {
    case 8:
      return minor == 0 ? 1024 : 512;  // A100; GA10x and Ada (a GeForce's is half: 256)
    case 9:
      return 2048;  // Hopper
    case 10:
    case 11:
      return 4096;  // Blackwell data centre (B200, B300) and Thor
    case 12:
      return 512;  // Blackwell RTX (a GeForce's is half: 256)
    default:
      return 0;  // no TF32 before 8.0; unknown after 12
  }
}

std::optional<DevicePeaks> devicePeaksOf(const DeviceFigures& f) {
  DevicePeaks p;
  p.driverBytesPerSecond = 1e6 * f.memoryClockMHz * 2.0 * (f.memoryBusWidthBits / 8.0);
  p.copyBytesPerSecond = f.copyBytesPerSecond;
  p.bytesPerSecond = std::max(p.driverBytesPerSecond, p.copyBytesPerSecond);
  const double smClocks = 1e6 * f.smClockMHz * f.multiprocessors;
  p.fp32FlopsPerSecond = smClocks * fp32LanesPerSm(f.computeMajor, f.computeMinor) * 2.0;
  p.tf32FlopsPerSecond = smClocks * tf32FlopsPerSmPerClock(f.computeMajor, f.computeMinor);
  p.flopsPerSecond = std::max(p.fp32FlopsPerSecond, p.tf32FlopsPerSecond);
  if (p.bytesPerSecond <= 0.0 && p.flopsPerSecond <= 0.0) return std::nullopt;
  std::ostringstream source;
  source.precision(4);
  source << "from the driver's figures for " << (f.name.empty() ? std::string("the GPU") : f.name);
  if (p.driverBytesPerSecond > 0.0)
    source << ": memory " << p.driverBytesPerSecond / 1e9 << " GB/s (" << f.memoryClockMHz << " MHz x 2 x "
           << f.memoryBusWidthBits << " bits)";
  if (p.copyBytesPerSecond > 0.0)
    source << ", a device-to-device copy measured at " << p.copyBytesPerSecond / 1e9 << " GB/s";
  if (p.flopsPerSecond > 0.0) {
    source << "; " << f.multiprocessors << " SMs at " << f.smClockMHz << " MHz, compute " << f.computeMajor << "."
           << f.computeMinor << ": FP32 " << p.fp32FlopsPerSecond / 1e12 << " TFLOP/s";
    if (p.tf32FlopsPerSecond > 0.0) source << ", dense TF32 " << p.tf32FlopsPerSecond / 1e12 << " TFLOP/s";
  }
  p.source = source.str();
  return p;
}

std::optional<DevicePeaks> devicePeaksFromJson(const json& device) {
  return devicePeaksOf(deviceFiguresFromJson(device));
}

std::filesystem::path copyBandwidthCacheFile() {
  namespace fs = std::filesystem;
  if (const char* explicitFile = std::getenv("CONVSCOPE_DEVICE_CACHE"); explicitFile && *explicitFile)
    return explicitFile;
  fs::path cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg && fs::path(xdg).is_absolute())
    cache = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    cache = fs::path(home) / ".cache";
  else
    cache = fs::temp_directory_path();
  return cache / "ConvScope/convscope/device-bandwidth.json";
}

std::string copyBandwidthCacheKey(const DeviceFigures& f) {
  return (f.uuid.empty() ? f.name : f.uuid) + " | driver " + f.driver;
}

double cachedCopyBytesPerSecond(const std::filesystem::path& cacheFile, const std::string& key,
                                const std::string& deviceName, const std::function<double()>& measure) {
  json cache;
  try {
    std::ifstream in(cacheFile);
    if (in) cache = json::parse(in, nullptr, false);
  } catch (...) {
    cache = json();
  }
  if (!cache.is_object() || cache.value("schema", "") != kCopyCacheSchema || !cache.contains("devices") ||
      !cache["devices"].is_object())
    cache = {{"schema", kCopyCacheSchema}, {"devices", json::object()}};
  const json& known = cache["devices"];
  if (const auto at = known.find(key); at != known.end() && at->is_object()) {
    const auto figure = at->find("copy_bytes_per_second");
    if (figure != at->end() && figure->is_number() && figure->get<double>() > 0.0) return figure->get<double>();
  }
  double measured = 0.0;
  try {
    measured = measure ? measure() : 0.0;
  } catch (...) {
    measured = 0.0;
  }
  if (!(measured > 0.0)) return 0.0;
  cache["devices"][key] = {{"name", deviceName}, {"copy_bytes_per_second", measured}, {"measured_at", nowIso()}};
  try {
    std::filesystem::create_directories(cacheFile.parent_path());
    writeFileAtomically(cacheFile, cache.dump(2) + "\n");
  } catch (...) {
    // A process that may not write there (the sandboxed child) measures again next time.
  }
  return measured;
}

double measuredCopyBytesPerSecond() {
  static std::once_flag once;
  static double figure = 0.0;
  std::call_once(once, [] {
    const GpuInfo& info = gpuInfo();
    if (!info.usable || !installed().measureCopyBytesPerSecond) return;
    const DeviceFigures f = deviceFiguresOf(info);
    figure = cachedCopyBytesPerSecond(copyBandwidthCacheFile(), copyBandwidthCacheKey(f), f.name,
                                      installed().measureCopyBytesPerSecond);
  });
  return figure;
}

}  // namespace convscope
