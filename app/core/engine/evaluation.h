// The one walk over a plan, for the CPU and the GPU alike (runPlan): it runs every stage, frees
// each value after its last reader, captures layers on request and records the op time of every
// conv stage. Where the values live is the only difference, and it is an Evaluation's job: host
// tensors with the CPU variants (HostEvaluation), device tensors with a GPU variant
// (DeviceEvaluation, CUDA events for the op times).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "app/core/conv/conv_backend.h"
#include "app/core/conv/variant_table.h"
#include "app/core/device/device.h"
#include "app/core/engine/plan.h"
#include "app/core/model/model.h"

namespace convscope {

struct ChainNetwork;

struct ConvLayerTime {
  std::string node;
  ConvProblem problem;
  double seconds = 0.0;
  std::string variant;                  // the variant that actually ran this layer
  std::string fallbackReason;           // set when the selected variant declined and the plan gave it to another
  std::vector<std::string> fusedNodes;  // the activation/pooling nodes the variant applied in the same kernel
  // Elements the stage wrote: the conv output, or the pooled one when a pooling was fused.
  int64_t outputElements = 0;
  // A whole-network stage's floating-point operations and compulsory bytes (input, every weight,
  // output); 0 for the others, whose figures follow from `problem` and `outputElements`.
  int64_t stageFlops = 0, stageBytes = 0;
};

struct LayerOutput {
  std::string node;  // "input" for the picture as the model sees it
  std::string opType;
  Tensor value;
  LayerRole role = LayerRole::Other;  // what the node is to a reader (the input: Other)
};

// One stage of a step timed on its own (Evaluation::timeEveryStage): its name ("upload", "resize",
// a plan stage such as "conv 1 + tanh + max-pool", "download"), what kind of work it is ("upload",
// "resize", "conv", "layer", "download", "host") and its seconds (CUDA events on the GPU, the host
// clock on the CPU).
struct StageTime {
  std::string name;
  std::string kind;
  double seconds = 0.0;
};

// A batch of 8-bit images as the data set stores them: count x height x width bytes, row-major.
struct ByteImages {
  const uint8_t* pixels = nullptr;
  int count = 0, height = 0, width = 0;
};

// The CPU variants' backends, each made on first use and kept for the next run (a backend keeps
// its scratch memory and tuned primitives).
class HostBackends {
 public:
  ConvBackend& get(const std::string& variantId);

 private:
  std::map<std::string, std::unique_ptr<ConvBackend>> backends_;
};

// Where values live and how a stage runs, for runPlan().
class Evaluation {
 public:
  virtual ~Evaluation() = default;
  // Times every stage that runStage() runs, each on its own (the end-to-end breakdown's
  // instrumented pass). Off by default: an ordinary run has no timing points but its conv stages'.
  void timeEveryStage(bool on) { timeStages_ = on; }
  bool timesEveryStage() const { return timeStages_; }
  // Runs `work` as the stage `name` of kind `kind`, timed when timeEveryStage is on.
  virtual void runStage(const std::string& name, const std::string& kind, const std::function<void()>& work) = 0;
  // The stages timed, in order; their seconds are known once finish() has waited.
  const std::vector<StageTime>& timedStages() const { return timedStages_; }
  virtual void bindInput(const std::string& name, const Tensor& value) = 0;
  // A stage without a Conv, or a Conv on its own (the op adds its bias), through the op's code.
  virtual void runOp(const Node& node, const ConvVariant* convVariant) = 0;
  // A fused stage: the conv with its epilogue (bias, activation, pooling) in the variant's kernel.
  virtual void runFused(const Node& conv, const std::string& output, const Shape& outputShape,
                        const ConvProblem& problem, const ConvVariant& variant, const ConvEpilogue& epilogue) = 0;
  // A whole-network stage: every node in the variant's one kernel, from the input to the output.
  virtual void runNetwork(const ChainNetwork& network, const ConvVariant& variant, int64_t batch,
                          const std::string& input, const std::string& output, const Shape& outputShape) = 0;
  virtual bool holds(const std::string& name) const = 0;
  virtual Shape shapeOf(const std::string& name) const = 0;
  virtual Tensor fetch(const std::string& name) = 0;
  virtual void release(const std::string& name) = 0;  // after its last reader
  // Waits for the work and returns the seconds of every conv run since the start, in order.
  virtual std::vector<double> finish(double* uploadSeconds) = 0;

 protected:
  bool timeStages_ = false;
  std::vector<StageTime> timedStages_;
};

// Host tensors: the model's weights and the bound inputs are borrowed, not copied (a
// 10,000-image batch is 92 MB), and must outlive the evaluation.
class HostEvaluation final : public Evaluation {
 public:
  HostEvaluation(const Model& model, HostBackends& backends);

  void bindInput(const std::string& name, const Tensor& value) override { values_[name] = &value; }
  void runStage(const std::string& name, const std::string& kind, const std::function<void()>& work) override;
  void runOp(const Node& node, const ConvVariant* convVariant) override;
  void runFused(const Node& node, const std::string& output, const Shape& outputShape, const ConvProblem& problem,
                const ConvVariant& variant, const ConvEpilogue& epilogue) override;
  void runNetwork(const ChainNetwork& network, const ConvVariant& variant, int64_t batch, const std::string& input,
                  const std::string& output, const Shape& outputShape) override;
  bool holds(const std::string& name) const override { return values_.count(name) != 0 || held_.count(name) != 0; }
  Shape shapeOf(const std::string& name) const override;
  Tensor fetch(const std::string& name) override { return plain(name); }
  void release(const std::string& name) override {
    if (produced_.erase(name) + held_.erase(name)) values_.erase(name);  // weights and inputs belong to others
  }
  std::vector<double> finish(double* uploadSeconds) override;

 private:
  std::vector<const Tensor*> inputsOf(const Node& node);
  // The value as NCHW: a held one is copied out of its backend's layout (once).
  const Tensor& plain(const std::string& name);
  void store(const std::string& name, Tensor value) { values_[name] = &(produced_[name] = std::move(value)); }
  // A residual Add of two values held by one backend, kept held; false when it is not one.
  bool addHeld(const Node& node);

  HostBackends& backends_;
  std::unordered_set<const float*> modelWeights_;  // the model's initializers (ConvEpilogue::constantWeights)
  std::map<std::string, const Tensor*> values_;
  std::map<std::string, Tensor> produced_;
  std::map<std::string, std::unique_ptr<HeldValue>> held_;  // conv outputs in their backend's layout
  std::vector<double> seconds_;
};

// Device tensors: the weights were uploaded once (`weights`, shared, not copied); a conv that the
// plan gave to a CPU variant runs on the host through `hostBackends`. Starts a new run of
// `device` (its timings of the previous one are forgotten).
class DeviceEvaluation final : public Evaluation {
 public:
  DeviceEvaluation(Device& device, const std::map<std::string, DeviceTensor>& weights, HostBackends& hostBackends);

  // The batch's copy to the GPU is timed on its own: a host round trip of an op uploads too.
  void bindInput(const std::string& name, const Tensor& value) override {
    bindOnDevice(name, [&] { return device_.upload(value.data(), value.shape()); });
  }
  // An input that `upload` puts on the device (the end-to-end path's bytes, resized there).
  void bindOnDevice(const std::string& name, const std::function<DeviceTensor()>& upload) {
    uploads_.push_back(device_.timed([&] { values_[name] = upload(); }));
  }
  // The input as 8-bit images in the device's staging buffer, for a whole-network kernel that
  // resizes as it reads; `copy`: stage them now from `images.pixels` (else a replay stages them).
  void bindStagedBytes(const ByteImages& images, int outHeight, int outWidth, bool copy);
  const DeviceTensor& deviceValue(const std::string& name) const { return values_.at(name); }

  void runStage(const std::string& name, const std::string& kind, const std::function<void()>& work) override;
  void runOp(const Node& node, const ConvVariant* convVariant) override;
  void runFused(const Node& node, const std::string& output, const Shape& outputShape, const ConvProblem& problem,
                const ConvVariant& variant, const ConvEpilogue& epilogue) override;
  void runNetwork(const ChainNetwork& network, const ConvVariant& variant, int64_t batch, const std::string& input,
                  const std::string& output, const Shape& outputShape) override;
  bool holds(const std::string& name) const override { return values_.count(name) != 0; }
  Shape shapeOf(const std::string& name) const override { return values_.at(name).shape; }
  Tensor fetch(const std::string& name) override;
  void release(const std::string& name) override { values_.erase(name); }  // the weights stay in the engine
  std::vector<double> finish(double* uploadSeconds) override;

 private:
  // A conv the plan gave to a CPU variant (no GPU variant computes its shape): the inputs come to
  // the host, the variant runs there, the output goes back; the op time covers the round trip.
  void runConvOnHost(const Node& node, const ConvVariant& variant);
  std::vector<const DeviceTensor*> inputsOf(const Node& node) const;

  Device& device_;
  HostBackends& hostBackends_;
  std::map<std::string, DeviceTensor> values_;
  std::vector<int> timings_;       // the conv stages'
  std::vector<int> uploads_;       // the batch's
  std::vector<int> stageTimings_;  // timeEveryStage: one per entry of timedStages_
  Device::StagedImages staged_;
  int stagedHeight_ = 0, stagedWidth_ = 0;
};

// Runs every stage of `plan` on `values`, whose inputs are bound: frees each value after its last
// reader, appends each stage's output to `captured` when given, and appends a record per conv
// stage to `stageTimes` (its seconds are known once finishPlan() has waited). `batch`: the
// images of a whole-network stage. An error names the model file and the node. Each stage runs
// through Evaluation::runStage, named as a student reads it ("conv 1 + tanh + max-pool",
// "dense 2"), except the stages that only rename a value (Flatten, Reshape, Identity, Dropout):
// they queue no work on the GPU, and are no stage of a breakdown.
void runPlan(const Model& model, const Plan& plan, int64_t batch, Evaluation& values,
             std::vector<ConvLayerTime>& stageTimes, std::vector<LayerOutput>* captured);

// Then: the graph's outputs fetched, the stages' seconds filled in and appended to `convTimes`.
std::map<std::string, Tensor> finishPlan(const Model& model, Evaluation& values, std::vector<ConvLayerTime>& stageTimes,
                                         std::vector<ConvLayerTime>* convTimes, double* uploadSeconds);

}  // namespace convscope
