// The course's profiler table from a kernel trace (Device::collectTrace): one row per kernel or
// memory copy with its share of GPU time, total, calls, average, minimum and maximum.
#pragma once

#include <string>
#include <vector>

#include "app/core/device/device.h"
#include "app/core/engine/engine.h"

namespace convscope {

struct KernelRow {
  std::string name;
  bool isCopy = false;  // "[CUDA memcpy ...]" entries, listed after the kernels
  int calls = 0;
  double totalMs = 0.0, minMs = 0.0, maxMs = 0.0;
  double share = 0.0;  // of all traced time, 0..1

  double averageMs() const { return calls ? totalMs / calls : 0.0; }
};

// Kernels first, then copies; each group by total time, largest first.
std::vector<KernelRow> kernelTable(const std::vector<Device::TracedTime>& trace);

// The table of one inference of `input` with a GPU engine, after one untimed warm-up inference
// (module loading, cuDNN's algorithm search, allocations). Throws convscope::Error for a CPU engine.
std::vector<KernelRow> profileOneInference(Engine& engine, const Tensor& input);

}  // namespace convscope
