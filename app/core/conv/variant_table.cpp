#include "app/core/conv/variant_table.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>

#include "app/core/conv/cpu_backends.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/util/activations.h"
#include "app/core/util/error.h"

namespace convscope {
namespace {

// Function-local, so that GPU kernel files can register rows from their static initialisers in
// any order. The core's own CPU rows come first.
std::vector<ConvVariant>& table() {
  static std::vector<ConvVariant> rows = {cpuReferenceVariant(), cpuIm2colGemmVariant(), cpuOneDnnVariant()};
  return rows;
}

// Set by the first read: from then on rows are referred to, so none may be added (an insertion
// would move the rows those references point at).
std::atomic<bool>& tableRead() {
  static std::atomic<bool> read{false};
  return read;
}

// Students' rows: a deque, whose push_back never moves the rows already there, so references
// handed out stay valid while more are added.
std::deque<ConvVariant>& userRows() {
  static std::deque<ConvVariant> rows;
  return rows;
}

std::mutex& userRowsMutex() {
  static std::mutex mutex;
  return mutex;
}

// A backend for a GPU row: the harness's host pointers copied to a fresh GPU device and back. The
// host output's content goes up first, so a poisoned buffer stays poisoned wherever the kernel
// does not write.
class DeviceBackedConv final : public ConvBackend {
 public:
  explicit DeviceBackedConv(const ConvVariant& variant) : variant_(variant), device_(createGpuDevice()) {}

  void forward(const ConvProblem& problem, const float* input, const float* weights, float* output) override {
    const DeviceTensor x = device_->upload(input, {problem.inputElements()});
    const DeviceTensor w = device_->upload(weights, {problem.weightElements()});
    const DeviceTensor y = device_->upload(output, {problem.outputElements()});
    variant_.runOnDevice(*device_, problem, x.data(), w.data(), y.data(), ConvEpilogue{});
    device_->download(y, output);
  }

 private:
  const ConvVariant& variant_;
  std::unique_ptr<Device> device_;
};

}  // namespace

std::string VariantRequirements::describe() const {
  if (!gpu) return "CPU";
  std::string text = "CUDA GPU";
  if (minComputeMajor > 0)
    text += ", compute capability " + std::to_string(minComputeMajor) + "." + std::to_string(minComputeMinor) + "+";
  if (tensorCores) text += ", tensor cores";
  if (cudnn) text += " + cuDNN";
  return text;
}

bool ConvVariant::canFuse(const std::string& opType) const {
  return std::find(fusableOps.begin(), fusableOps.end(), opType) != fusableOps.end();
}

std::string ConvVariant::unavailableReason() const {
  if (!requirements.gpu) return {};
  const GpuInfo& gpu = gpuInfo();
  if (!gpu.usable) return gpu.unusableReason;
  if (requirements.cudnn && gpu.cudnnVersion.empty()) return "this build of ConvScope has no cuDNN";
  const int need = requirements.minComputeMajor * 10 + requirements.minComputeMinor;
  if (requirements.tensorCores && need < 70 && gpu.computeMajor < 7)
    return gpu.name + " has no tensor cores (compute capability " + std::to_string(gpu.computeMajor) + "." +
           std::to_string(gpu.computeMinor) + ")";
  if (gpu.computeMajor * 10 + gpu.computeMinor < need)
    return "needs compute capability " + std::to_string(requirements.minComputeMajor) + "." +
           std::to_string(requirements.minComputeMinor) + "; " + gpu.name + " has " + std::to_string(gpu.computeMajor) +
           "." + std::to_string(gpu.computeMinor);
  return {};
}

void registerConvVariant(ConvVariant variant) {
  std::vector<ConvVariant>& rows = table();
  for (const ConvVariant& row : rows) {
    if (row.id == variant.id) throw Error("two conv variants have the id '" + variant.id + "'");
    if (variant.role != VariantRole::kCourseStep && row.role == variant.role)
      throw Error("conv variants '" + row.id + "' and '" + variant.id + "' claim the same role");
  }
  if (variant.requirements.gpu ? !variant.runOnDevice : !variant.createHostBackend)
    throw Error("conv variant '" + variant.id + "' has no way to run");
  if (tableRead()) throw Error("conv variant '" + variant.id + "' registered after the table was first read");
  const auto after = std::upper_bound(rows.begin(), rows.end(), variant.courseOrder,
                                      [](int order, const ConvVariant& row) { return order < row.courseOrder; });
  rows.insert(after, std::move(variant));
}

const std::vector<ConvVariant>& convVariants() {
  tableRead() = true;
  return table();
}

const ConvVariant& addUserConvVariant(ConvVariant variant) {
  for (const ConvVariant& row : convVariants())
    if (row.id == variant.id) throw Error("the id '" + variant.id + "' is a course variant's");
  if (variant.requirements.gpu ? !variant.runOnDevice : !variant.createHostBackend)
    throw Error("conv variant '" + variant.id + "' has no way to run");
  const std::lock_guard lock(userRowsMutex());
  for (const ConvVariant& row : userRows())
    if (row.id == variant.id) throw Error("a kernel with the id '" + variant.id + "' was added already");
  variant.courseOrder = convVariants().empty() ? 0 : convVariants().back().courseOrder + 1;
  userRows().push_back(std::move(variant));
  return userRows().back();
}

std::vector<const ConvVariant*> userConvVariants() {
  const std::lock_guard lock(userRowsMutex());
  std::vector<const ConvVariant*> rows;
  for (const ConvVariant& row : userRows()) rows.push_back(&row);
  return rows;
}

const ConvVariant& findConvVariant(const std::string& id) {
  std::string known;
  for (const ConvVariant& v : convVariants()) {
    if (v.id == id) return v;
    known += (known.empty() ? "" : ", ") + v.id;
  }
  for (const ConvVariant* v : userConvVariants()) {
    if (v->id == id) return *v;
    known += ", " + v->id;
  }
  throw Error("unknown kernel variant '" + id + "' (known: " + known + ")");
}

const ConvVariant* variantWithRole(VariantRole role) {
  for (const ConvVariant& v : convVariants())
    if (v.role == role && role != VariantRole::kCourseStep) return &v;
  return nullptr;
}

const std::vector<std::string>& everyEpilogueOp() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> names;
    for (Activation a : kFusableActivations) names.push_back(onnxTypeOf(a));
    names.insert(names.end(), {"MaxPool", "AveragePool"});
    return names;
  }();
  return ops;
}

std::unique_ptr<ConvBackend> createConvBackend(const std::string& id) {
  const ConvVariant& variant = findConvVariant(id);
  if (const std::string reason = variant.unavailableReason(); !reason.empty())
    throw Error("kernel variant '" + id + "' cannot run here: " + reason);
  if (variant.runsOnGpu()) return std::make_unique<DeviceBackedConv>(variant);
  return variant.createHostBackend();
}

std::string defaultConvVariant() {
  for (const bool gpu : {true, false})
    for (const ConvVariant& v : convVariants())
      if (v.preferredDefault && v.runsOnGpu() == gpu && v.unavailableReason().empty()) return v.id;
  return convVariants().front().id;
}

const ConvVariant& fallbackConvVariant(const ConvVariant& selected, const ConvProblem& problem) {
  const std::vector<ConvVariant>& rows = convVariants();
  const auto self = std::find_if(rows.begin(), rows.end(), [&](const ConvVariant& v) { return v.id == selected.id; });
  // Planning a variant that cannot run here (to show its plan) picks by shape alone.
  const bool selectedRunsHere = selected.unavailableReason().empty();
  const auto computes = [&](const ConvVariant& v) {
    return v.id != selected.id && v.runsOnGpu() == selected.runsOnGpu() && v.unsupportedReasonFor(problem).empty() &&
           (!selectedRunsHere || v.unavailableReason().empty());
  };
  // The same arithmetic first (an FP32 variant's layers stay FP32), then any.
  for (const bool sameArithmetic : {true, false}) {
    const auto takes = [&](const ConvVariant& v) {
      return computes(v) && (!sameArithmetic || v.arithmetic == selected.arithmetic);
    };
    for (auto it = std::make_reverse_iterator(self); it != rows.rend(); ++it)
      if (takes(*it)) return *it;
    for (auto it = self; it != rows.end(); ++it)
      if (takes(*it)) return *it;
  }
  // A shape no GPU kernel computes (a grouped or dilated convolution): the nearest CPU variant,
  // the layer's values copying to the host and back.
  if (selected.runsOnGpu())
    for (auto it = std::make_reverse_iterator(self); it != rows.rend(); ++it)
      if (!it->runsOnGpu() && it->unsupportedReasonFor(problem).empty() && it->unavailableReason().empty()) return *it;
  throw Error("no " + std::string(selected.runsOnGpu() ? "GPU" : "CPU") + " conv variant computes " +
              problem.describe() + ", which " + selected.id + " declines");
}

}  // namespace convscope
