// Runs a Model forward on a batch, NCHW float32, with the convolution arithmetic done by the
// kernel variant chosen from the table (variant_table.h). With a GPU variant the whole network
// runs on the GPU: weights are uploaded once, when the engine is made; a batch goes up once and
// only the probabilities (and captured layers, on request) come back. It times every Conv stage
// ("Op Time", as the course reports it) and, on request, keeps every layer's output for the
// feature-map view (then nothing is fused, so every layer has an output).
// The Engine only ties its parts together: the plan (plan.h, kept by plan_cache.h), the memory
// it will take (memory_estimate.h), the one walk over the plan on the host or the device
// (evaluation.h) and the recording of small batches as one replayable launch (device_recording.h).
// One Engine is used by one thread at a time; make one per worker.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/core/conv/conv_backend.h"
#include "app/core/data/preprocessing.h"
#include "app/core/device/device.h"
#include "app/core/engine/evaluation.h"
#include "app/core/engine/memory_estimate.h"
#include "app/core/engine/plan.h"
#include "app/core/engine/plan_cache.h"
#include "app/core/model/model.h"

namespace convscope {

struct InferenceResult {
  Tensor probabilities;        // N x classes
  double uploadSeconds = 0.0;  // host-to-device copy of the batch (GPU variants)
  // The run replayed a recorded CUDA graph (Engine::inferBytes, small batches): the work ran as
  // one launch, so it has no conv times or upload time of its own.
  bool replayed = false;
  std::vector<ConvLayerTime> convTimes;  // one per Conv node, in execution order
  std::vector<LayerOutput> layers;       // filled when captured: the input, then every node
};

class Engine {
 public:
  // Throws convscope::Error if the variant is unknown or cannot run on this machine.
  Engine(std::shared_ptr<const Model> model, const std::string& variantId);
  ~Engine();

  const Model& model() const { return *model_; }
  const std::string& variantId() const { return variantId_; }
  // "CPU", or the GPU's name.
  std::string deviceName() const;
  // The GPU behind a GPU variant (for the profiler's trace), else nullptr.
  Device* device() const { return device_.get(); }
  // How pictures become this model's input (preprocessing.h): the default rule for the model's
  // input channels until the model's card or the user sets one. classify() and the window's
  // inference make their batches with it.
  const Preprocessing& preprocessing() const { return preprocessing_; }
  void setPreprocessing(const Preprocessing& preprocessing) { preprocessing_ = preprocessing; }

  // The plan for a batch of `batch` images (fuse = false: what a capturing inference runs).
  Plan plan(int64_t batch = 1, bool fuse = true) const;

  // Classifies images (N x C x H x W at the model's input size, values as the model takes them). When the model does
  // not end in Softmax, one is applied so the result is always probabilities.
  InferenceResult infer(const Tensor& images, bool captureLayers = false);

  // The end-to-end path: 8-bit images in host memory to probabilities in host memory, equal to
  // infer(batchFromBytes(...)). With a GPU variant only the bytes cross the bus, a quarter of the
  // floats, in chunks that the GPU resizes while the next one is copied; a batch of up to
  // kRecordedBatchLimit images is recorded as a CUDA graph on its first run and replayed, as one
  // launch, from the second run with the same batch on (its result then has no conv times).
  InferenceResult inferBytes(const ByteImages& images);
  static constexpr int kRecordedBatchLimit = 1024;
  // Where inferBytes' time goes: its step once more, never replayed, each stage timed on its own
  // (CUDA events around each on the GPU, the host clock on the CPU): the upload of the bytes,
  // their resize, every plan stage, the download of the probabilities into pinned memory and the
  // host's share (copying them out, a softmax the model lacks). After the upload the GPU's work is
  // held back until all of it is queued (Device::holdQueue), so the stages run back to back as a
  // replay does and their times leave the host's launches out. The timing points between the
  // stages still perturb the step, so this pass explains the time; inferBytes' own is the figure
  // (above kRecordedBatchLimit it overlaps the upload with the resize, which this pass times
  // apart). On the CPU there is no upload or download. Throws convscope::Error as inferBytes
  // does, and for a model with more than one output.
  std::vector<StageTime> timeEndToEndStages(const ByteImages& images);
  // Why the last batch that inferBytes tried to record could not be ("" when it was recorded).
  const std::string& recordingDeclined() const { return recordingDeclined_; }
  // Locks a host range in place while the returned owner lives, so that the GPU copies it at
  // full speed; null on the CPU.
  std::unique_ptr<PinnedMemory> pinHostMemory(void* host, size_t bytes);

  // The memory a batch of `batch` images takes (the estimate mirrors evaluate(): intermediates
  // are freed after their last reader). Throws convscope::Error naming the node when a shape
  // overflows.
  MemoryEstimate estimateMemory(int64_t batch, bool captureLayers = false) const;
  // Throws convscope::Error naming the model, the layer, the figures, the limit (memoryLimit())
  // and the largest batch that fits, when `batch` does not.
  void checkMemory(int64_t batch, bool captureLayers = false) const;
  // The largest batch within the limit; 0 when not even one image fits.
  int largestBatchThatFits(bool captureLayers = false) const;

  // Evaluates any loaded graph: named inputs in, every graph output out.
  std::map<std::string, Tensor> evaluate(const std::map<std::string, Tensor>& inputs,
                                         std::vector<ConvLayerTime>* convTimes = nullptr,
                                         std::vector<LayerOutput>* captured = nullptr);

 private:
  // Inputs by pointer: a 10,000-image batch is 92 MB, not to be copied into a map.
  using InputRefs = std::map<std::string, const Tensor*>;
  std::map<std::string, Tensor> evaluate(const InputRefs& inputs, std::vector<ConvLayerTime>* convTimes,
                                         std::vector<LayerOutput>* captured, double* uploadSeconds);
  // inferBytes' recorded small batches: the resize, the network and the copy of the scores into
  // pinned memory as one CUDA graph, for one batch shape.
  struct RecordedBatch;
  std::unique_ptr<RecordedBatch> recordBatch(const ByteImages& images);
  InferenceResult replay(RecordedBatch& recorded, const ByteImages& images);
  InferenceResult probabilitiesFrom(Tensor out, int64_t batch) const;
  // The peak, or -- when a layer's need passes `limit` -- that layer's need (where a run would fail).
  MemoryEstimate estimateFor(const std::map<std::string, Shape>& inputShapes, bool captureLayers,
                             int64_t limit = INT64_MAX) const;
  void checkMemoryFor(const std::map<std::string, Shape>& inputShapes, int64_t batch, bool captureLayers) const;
  // makePlan() for these shapes, kept for the next call with the same ones.
  const Plan& planFor(const std::map<std::string, Shape>& inputShapes, bool fuse) const {
    return plans_.planFor(inputShapes, fuse);
  }

  std::shared_ptr<const Model> model_;
  std::string variantId_;
  Preprocessing preprocessing_;
  bool onGpu_ = false;
  // The CPU variants' backends, made on first use: the memory estimate (a const query) asks
  // them for their workspace.
  mutable HostBackends hostBackends_;
  // Planning is no visible state: a const query (plan(), estimateMemory()) may fill the cache.
  mutable PlanCache plans_;
  std::unique_ptr<Device> device_;  // GPU variants; outlives the weights below
  std::map<std::string, DeviceTensor> deviceWeights_;
  std::unique_ptr<RecordedBatch> recorded_;  // the last batch shape inferBytes recorded
  // The last memory check that passed: every infer() checks, and the estimate (shape inference
  // over the whole graph, the plan's walk, the backends' workspaces) cost a third of a small
  // batch's time on the CPU. The same shapes, capture flag and thread count need the same bytes;
  // only the limit, which the environment can change, is read again each time.
  struct PassedCheck {
    std::map<std::string, Shape> inputShapes;
    bool captureLayers = false;
    int threads = 0;
    MemoryEstimate need;
  };
  mutable std::optional<PassedCheck> passedCheck_;
  std::string recordingDeclined_;
};

}  // namespace convscope
