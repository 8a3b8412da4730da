#include "app/core/engine/peer_timings.h"

#include <nlohmann/json.hpp>

#include <cmath>

#include "app/core/util/error.h"
#include "app/core/util/input_file.h"
#include "app/core/util/json_file.h"

namespace convscope {
namespace {

using nlohmann::json;

// The compiled modes the comparison uses, as scripts/end_to_end_table.py names them.
struct PeerMode {
  const char* key;
  const char* label;
};
constexpr PeerMode kPeerModes[] = {{"compiled_graph_tf32", "PyTorch compiled + CUDA graph (TF32)"},
                                   {"compiled_graph_fp32", "PyTorch compiled + CUDA graph (FP32)"}};

// A bandwidth in GB/s, or 0 where the file has none (the script records a failed measurement as text).
double bytesPerSecond(const json& document, const char* key) {
  if (!document.contains(key) || !document.at(key).is_number()) return 0.0;
  const double gigabytes = document.at(key).get<double>();
  if (!std::isfinite(gigabytes) || gigabytes <= 0.0)
    throw Error(std::string("\"") + key + "\" is " + document.at(key).dump() + ", not a bandwidth");
  return gigabytes * 1e9;
}

}  // namespace

PeerTimings readPeerTimings(const std::filesystem::path& path) {
  InputFile file(path, "a PyTorch peer file", uint64_t{16} << 20);
  const std::string text = file.readAll();
  try {
    const json document = parseJsonText(text, path.string());
    if (!document.is_object() || !document.contains("device") || !document.contains("peer_host_ms"))
      throw Error("not a PyTorch peer file of scripts/pytorch_reference.py (it needs \"device\" and \"peer_host_ms\")");
    PeerTimings peer;
    peer.device = document.at("device").get<std::string>();
    peer.torch = document.value("torch", "");
    const json& hostMs = document.at("peer_host_ms");
    for (const PeerMode& mode : kPeerModes) {
      if (!hostMs.contains(mode.key)) continue;
      PeerSeries series{mode.key, mode.label, {}};
      for (const auto& [batchText, value] : hostMs.at(mode.key).items()) {
        if (!value.is_number()) continue;  // the mode failed at this batch: the script says why as text
        const double ms = value.get<double>();
        if (!std::isfinite(ms) || ms <= 0.0)
          throw Error(std::string(mode.key) + " at batch " + batchText + " is " + value.dump() + " ms, not a time");
        int batch = 0;
        try {
          batch = jsonWholeNumber(json::parse(batchText), "a batch size", 1, int64_t{1} << 30);
        } catch (const json::exception&) {
          throw Error(std::string(mode.key) + " has the batch size \"" + batchText + "\", not a whole number");
        }
        series.seconds[batch] = ms / 1e3;
      }
      peer.series.push_back(std::move(series));
    }
    if (peer.series.empty()) throw Error("\"peer_host_ms\" holds neither compiled_graph_tf32 nor compiled_graph_fp32");
    peer.pinnedBytesPerSecond = bytesPerSecond(document, "pinned_h2d_gbytes_per_s");
    peer.copyBytesPerSecond = bytesPerSecond(document, "copy_gbytes_per_s");
    return peer;
  } catch (const json::exception& e) {
    throw Error(path.string() + ": malformed PyTorch peer file: " + describeJsonFieldError(e));
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.rfind(path.string(), 0) == 0) throw;
    throw Error(path.string() + ": " + message);
  }
}

}  // namespace convscope
