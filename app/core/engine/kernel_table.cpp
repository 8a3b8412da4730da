#include "app/core/engine/kernel_table.h"

#include <algorithm>
#include <map>

#include "app/core/util/error.h"

namespace convscope {

std::vector<KernelRow> kernelTable(const std::vector<Device::TracedTime>& trace) {
  std::map<std::string, KernelRow> byName;
  double all = 0.0;
  for (const Device::TracedTime& t : trace) {
    KernelRow& row = byName[t.name];
    if (row.calls == 0) {
      row.name = t.name;
      row.isCopy = t.name.rfind("[CUDA", 0) == 0;  // how the device names its copies
      row.minMs = t.milliseconds;
    }
    ++row.calls;
    row.totalMs += t.milliseconds;
    row.minMs = std::min(row.minMs, t.milliseconds);
    row.maxMs = std::max(row.maxMs, t.milliseconds);
    all += t.milliseconds;
  }
  std::vector<KernelRow> rows;
  for (auto& [name, row] : byName) {
    row.share = all > 0.0 ? row.totalMs / all : 0.0;
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) {
    if (a.isCopy != b.isCopy) return !a.isCopy;
    return a.totalMs > b.totalMs;
  });
  return rows;
}

std::vector<KernelRow> profileOneInference(Engine& engine, const Tensor& input) {
  Device* device = engine.device();
  if (!device) throw Error("the profiler times GPU kernels; '" + engine.variantId() + "' runs on the CPU");
  engine.infer(input);
  device->collectTrace();
  device->setTracing(true);
  try {
    engine.infer(input);
  } catch (...) {
    device->setTracing(false);
    throw;
  }
  device->setTracing(false);
  return kernelTable(device->collectTrace());
}

}  // namespace convscope
