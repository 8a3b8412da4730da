// The PyTorch peer of a benchmark: scripts/pytorch_reference.py's JSON, which scripts/device.sh
// writes as pytorch.json beside bench.json in the same device call (its schema at that script's
// top). What the Timing tab reads from it: PyTorch doing ConvScope's whole end-to-end step,
// compiled with torch.compile and replayed as one CUDA graph, TF32 and FP32, per batch size (host
// clock, as ConvScope's end_to_end_s: peer_host_ms), and the bandwidths measured in that call for
// the end-to-end floor (end_to_end_breakdown.h). Kept a file of its own rather than merged into
// the benchmark JSON: the two come from different programs, and a script that merged them would
// be one more step to forget.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace convscope {

struct PeerSeries {
  std::string mode;               // the file's key: "compiled_graph_tf32", "compiled_graph_fp32"
  std::string label;              // "PyTorch compiled + CUDA graph (TF32)"
  std::map<int, double> seconds;  // by batch size; a mode that failed at a batch has no entry there
};

struct PeerTimings {
  std::string device;                 // must be the benchmark's: the peer comes from the same call
  std::string torch;                  // PyTorch's version
  std::vector<PeerSeries> series;     // TF32, then FP32: the modes the file holds
  double pinnedBytesPerSecond = 0.0;  // pinned host-to-device copy (pinned_h2d_gbytes_per_s); 0 unknown
  double copyBytesPerSecond = 0.0;    // device-to-device copy, read plus written (copy_gbytes_per_s); 0 unknown
};

// Throws convscope::Error naming the file and the problem: unreadable, not JSON, no device, no
// compiled peer timings, a time that is no positive number.
PeerTimings readPeerTimings(const std::filesystem::path& path);

}  // namespace convscope
