// The CUDA implementation of the engine's Device: stream-ordered memory, timed copies, timing
// points around the work the conv variants enqueue on its stream, dense layers through cuBLAS in strict FP32, and the
// other layers through the simple kernels of layer_kernels.cuh. A batch goes to the GPU once;
// only what the caller downloads comes back.
#include <cublas_v2.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <thread>

#include "app/core/device/gpu_platform.h"
#include "app/core/util/error.h"
#include "gpu/conv_kernel.h"
#include "gpu/cuda_check.h"
#include "gpu/cuda_resources.h"
#include "gpu/layer_kernels.cuh"

namespace convscope::gpu {
namespace {

class StreamMemory final : public DeviceMemory {
 public:
  StreamMemory(size_t bytes, cudaStream_t stream) : buffer_(bytes, stream) {}
  float* data() override { return buffer_.as<float>(); }

 private:
  DeviceBuffer buffer_;  // freed on its stream, after the work queued before the free
};

class PinnedHostMemory final : public PinnedMemory {
 public:
  explicit PinnedHostMemory(size_t bytes) : memory_(PinnedAllocation::create(std::max<size_t>(bytes, 1))) {}
  void* data() override { return memory_.get(); }

 private:
  PinnedAllocation memory_;
};

class PinnedHostRange final : public PinnedMemory {
 public:
  PinnedHostRange(void* host, size_t bytes) : registration_(HostRegistration::create(host, bytes)) {}
  void* data() override { return registration_.get(); }

 private:
  HostRegistration registration_;
};

class CudaGraphWork final : public RecordedWork {
 public:
  CudaGraphWork(CudaGraph graph, cudaStream_t stream)
      : graph_(std::move(graph)), exec_(CudaGraphExec::create(graph_.get())), stream_(stream) {}
  void replay() override {
    CONVSCOPE_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
    CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  CudaGraph graph_;
  CudaGraphExec exec_;
  cudaStream_t stream_;
};

// A host function at the head of the queue that returns once the gate goes (or after a second, so
// that a caller who waits for the GPU by mistake is late, not stuck). Its state is shared with the
// host function, which may run after the gate is gone.
class HostFunctionGate final : public QueueGate {
 public:
  explicit HostFunctionGate(cudaStream_t stream) : state_(std::make_shared<State>()) {
    auto held = std::make_unique<std::shared_ptr<State>>(state_);
    CONVSCOPE_CUDA_CHECK(cudaLaunchHostFunc(stream, &HostFunctionGate::waitForOpening, held.get()));
    held.release();  // the host function's now
  }
  ~HostFunctionGate() override { state_->open.store(true); }

 private:
  struct State {
    std::atomic<bool> open{false};
  };
  static void CUDART_CB waitForOpening(void* data) {
    const std::unique_ptr<std::shared_ptr<State>> state(static_cast<std::shared_ptr<State>*>(data));
    const auto latest = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!(*state)->open.load() && std::chrono::steady_clock::now() < latest) std::this_thread::yield();
  }
  std::shared_ptr<State> state_;
};

// A resize's row and column taps on the device, made once per pair of sizes.
struct DeviceTaps {
  DeviceBuffer rows, cols;
};

struct EventPair {
  double seconds() const {
    float ms = 0.0f;
    CONVSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms / 1000.0;
  }
  CudaEvent start = CudaEvent::create();
  CudaEvent stop = CudaEvent::create();
};

class CudaDevice final : public Device {
 public:
  CudaDevice() {
    // Keep freed memory in the stream-ordered pool instead of returning it to the driver at
    // every synchronisation: a 10,000-image batch reallocates ~2 GB of activations per inference.
    cudaMemPool_t pool = nullptr;
    CONVSCOPE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    uint64_t keep = UINT64_MAX;
    CONVSCOPE_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    cublas_ = CublasHandle::create();
    CONVSCOPE_CUBLAS_CHECK(cublasSetStream(cublas_, context_.stream()));
    // Strict FP32: no TF32 tensor cores, whatever the environment says.
    CONVSCOPE_CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_PEDANTIC_MATH));
    // A workspace of its own (32 MiB: what cuBLAS asks for on Hopper), so that a recorded
    // inference never has cuBLAS allocate while the stream is being captured.
    CONVSCOPE_CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublasWorkspace_.get(), cublasWorkspace_.bytes()));
  }
  // Waits for the queued work; the members then go in reverse order (the stream last).
  ~CudaDevice() override { cudaStreamSynchronize(context_.stream()); }

  std::string name() const override { return gpuInfo().name; }

  DeviceTensor allocate(const Shape& shape) override {
    DeviceTensor t{shape, nullptr};
    t.memory = std::make_shared<StreamMemory>(static_cast<size_t>(std::max<int64_t>(t.size(), 1)) * sizeof(float),
                                              context_.stream());
    return t;
  }

  DeviceTensor upload(const float* host, const Shape& shape) override {
    DeviceTensor t = allocate(shape);
    TracedScope scope(context_, "[CUDA memcpy HtoD]");
    CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(t.data(), host, static_cast<size_t>(t.size()) * sizeof(float),
                                         cudaMemcpyHostToDevice, context_.stream()));
    return t;
  }

  void download(const DeviceTensor& tensor, float* host) override {
    {
      TracedScope scope(context_, "[CUDA memcpy DtoH]");
      CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(host, tensor.data(), static_cast<size_t>(tensor.size()) * sizeof(float),
                                           cudaMemcpyDeviceToHost, context_.stream()));
    }
    synchronize();
  }

  void synchronize() override {
    if (recording_) throw Error("internal: nothing may wait for the GPU while its work is being recorded");
    CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(context_.stream()));
  }

  void downloadAsync(const DeviceTensor& tensor, float* host) override {
    TracedScope scope(context_, "[CUDA memcpy DtoH]");
    CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(host, tensor.data(), static_cast<size_t>(tensor.size()) * sizeof(float),
                                         cudaMemcpyDeviceToHost, context_.stream()));
  }

  DeviceTensor uploadImageBytes(const uint8_t* host, int count, int height, int width, int outHeight,
                                int outWidth) override {
    const size_t perImage = static_cast<size_t>(height) * width;
    reserveImageBytes(perImage * static_cast<size_t>(count));
    const DeviceTaps& taps = tapsFor(height, width, outHeight, outWidth);
    DeviceTensor out = allocate({count, 1, outHeight, outWidth});
    // About 1,000 images (0.8 MB of 28x28) a chunk: big enough to copy at full speed, small
    // enough that the first chunk's resize starts early.
    constexpr int kChunkImages = 1024;
    const int chunks = (count + kChunkImages - 1) / kChunkImages;
    while (chunkEvents_.size() < static_cast<size_t>(chunks) + 1)
      chunkEvents_.push_back(CudaEvent::create(cudaEventDisableTiming));
    cudaStream_t main = context_.stream();
    // The copy stream starts after what is queued here (the last inference may still read the
    // bytes), and the main stream waits for each chunk before resizing it.
    CONVSCOPE_CUDA_CHECK(cudaEventRecord(chunkEvents_[0], main));
    CONVSCOPE_CUDA_CHECK(cudaStreamWaitEvent(copyStream_, chunkEvents_[0], 0));
    for (int c = 0; c < chunks; ++c) {
      const int first = c * kChunkImages;
      const int images = std::min(kChunkImages, count - first);
      uint8_t* bytes = imageBytes_.as<uint8_t>() + perImage * static_cast<size_t>(first);
      {
        TracedScope scope(context_, "[CUDA memcpy HtoD]");
        CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(bytes, host + perImage * static_cast<size_t>(first),
                                             perImage * static_cast<size_t>(images), cudaMemcpyHostToDevice,
                                             copyStream_));
      }
      CONVSCOPE_CUDA_CHECK(cudaEventRecord(chunkEvents_[static_cast<size_t>(c) + 1], copyStream_));
      CONVSCOPE_CUDA_CHECK(cudaStreamWaitEvent(main, chunkEvents_[static_cast<size_t>(c) + 1], 0));
      TracedScope scope(context_, "resizeImageBytesKernel");
      launchResizeImageBytes(bytes, images, height, width, taps.rows.as<BilinearTap>(), taps.cols.as<BilinearTap>(),
                             out.data() + static_cast<size_t>(first) * outHeight * outWidth, outHeight, outWidth, main);
    }
    return out;
  }

  void stageImageBytes(const uint8_t* host, int count, int height, int width) override {
    const size_t bytes = static_cast<size_t>(height) * width * static_cast<size_t>(count);
    reserveImageBytes(bytes);
    TracedScope scope(context_, "[CUDA memcpy HtoD]");
    CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(imageBytes_.get(), host, bytes, cudaMemcpyHostToDevice, context_.stream()));
  }

  DeviceTensor resizeImageBytes(int count, int height, int width, int outHeight, int outWidth) override {
    if (imageBytes_.bytes() < static_cast<size_t>(height) * width * static_cast<size_t>(count))
      throw Error("internal: resizeImageBytes before stageImageBytes");
    const DeviceTaps& taps = tapsFor(height, width, outHeight, outWidth);
    DeviceTensor out = allocate({count, 1, outHeight, outWidth});
    TracedScope scope(context_, "resizeImageBytesKernel");
    launchResizeImageBytes(imageBytes_.as<uint8_t>(), count, height, width, taps.rows.as<BilinearTap>(),
                           taps.cols.as<BilinearTap>(), out.data(), outHeight, outWidth, context_.stream());
    return out;
  }

  StagedImages stagedImageBytes(int count, int height, int width, int outHeight, int outWidth) override {
    if (imageBytes_.bytes() < static_cast<size_t>(height) * width * static_cast<size_t>(count))
      throw Error("internal: stagedImageBytes before stageImageBytes");
    const DeviceTaps& taps = tapsFor(height, width, outHeight, outWidth);
    return {imageBytes_.as<uint8_t>(), taps.rows.as<BilinearTap>(), taps.cols.as<BilinearTap>()};
  }

  std::unique_ptr<PinnedMemory> allocatePinned(size_t bytes) override {
    return std::make_unique<PinnedHostMemory>(bytes);
  }
  std::unique_ptr<PinnedMemory> pin(void* host, size_t bytes) override {
    return std::make_unique<PinnedHostRange>(host, bytes);
  }

  void beginRecording() override {
    if (recording_) throw Error("internal: a recording is already under way");
    // Thread-local: another engine's thread may go on using the GPU meanwhile.
    CONVSCOPE_CUDA_CHECK(cudaStreamBeginCapture(context_.stream(), cudaStreamCaptureModeThreadLocal));
    recording_ = true;
  }

  std::unique_ptr<RecordedWork> endRecording() override {
    if (!recording_) throw Error("internal: endRecording without beginRecording");
    recording_ = false;
    cudaGraph_t graph = nullptr;
    // Fails when a call during the recording broke it (the error that broke it was thrown then).
    CONVSCOPE_CUDA_CHECK(cudaStreamEndCapture(context_.stream(), &graph));
    return std::make_unique<CudaGraphWork>(CudaGraph(graph), context_.stream());
  }

  void cancelRecording() noexcept override {
    if (!recording_) return;
    recording_ = false;
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(context_.stream(), &graph);
    const CudaGraph discarded(ended == cudaSuccess ? graph : nullptr);  // destroyed on leaving
    cudaGetLastError();  // the broken recording's error was thrown already; the next check starts clean
  }

  std::unique_ptr<QueueGate> holdQueue() override {
    if (recording_) throw Error("internal: a recording cannot hold its queue");
    return std::make_unique<HostFunctionGate>(context_.stream());
  }

  void beginRun() override { convEvents_.clear(); }
  double elapsedSeconds(int timing) override {
    if (timing < 0) throw Error("internal: recorded work has no timings of its own");
    return convEvents_.at(static_cast<size_t>(timing))->seconds();
  }

  int timed(const std::function<void()>& work) override {
    if (recording_) {  // a recording is timed as a whole, by whoever replays it
      work();
      return -1;
    }
    auto events = std::make_unique<EventPair>();
    CONVSCOPE_CUDA_CHECK(cudaEventRecord(events->start, context_.stream()));
    work();
    CONVSCOPE_CUDA_CHECK(cudaEventRecord(events->stop, context_.stream()));
    convEvents_.push_back(std::move(events));
    return static_cast<int>(convEvents_.size()) - 1;
  }

  GpuContext& context() { return context_; }

  void addChannelBias(float* data, const float* bias, int64_t images, int channels, int64_t plane) override {
    TracedScope scope(context_, "addChannelBiasKernel");
    launchAddChannelBias(data, bias, images, channels, plane, context_.stream());
  }

  void activation(Activation kind, const float* input, float* output, int64_t count) override {
    TracedScope scope(context_, "activationKernel");
    launchActivation(kind, input, output, count, context_.stream());
  }

  void arithmetic(BinaryArithmetic op, const BroadcastOperands& operands, const float* a, const float* b,
                  float* out) override {
    TracedScope scope(context_, "arithmeticKernel");
    launchArithmetic(op, operands, a, b, out, context_.stream());
  }

  void maxPool(const PoolGeometry& g, const float* input, float* output) override {
    TracedScope scope(context_, "poolKernel<max>");
    launchMaxPool(g, input, output, context_.stream());
  }

  void averagePool(const PoolGeometry& g, const float* input, float* output) override {
    TracedScope scope(context_, "poolKernel<average>");
    launchAveragePool(g, input, output, context_.stream());
  }

  void gemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
            int ldb, float beta, float* c, int ldc) override {
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
    TracedScope scope(context_, "cublasSgemm");
    CONVSCOPE_CUBLAS_CHECK(cublasSgemm(cublas_, transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                                       n, m, k, &alpha, b, ldb, a, lda, &beta, c, ldc));
  }

  void broadcast2d(const float* c, int cRows, int cCols, float* out, int m, int n) override {
    TracedScope scope(context_, "broadcast2dKernel");
    launchBroadcast2d(c, cRows, cCols, out, m, n, context_.stream());
  }

  void softmax(const float* input, float* output, int64_t outer, int64_t length, int64_t inner) override {
    TracedScope scope(context_, "softmaxKernel");
    launchSoftmax(input, output, outer, length, inner, context_.stream());
  }

  void setTracing(bool on) override { context_.setTracing(on); }

  std::vector<TracedTime> collectTrace() override { return context_.collectTrace(); }

 private:
  // The bytes of the end-to-end path's batch on the device; grows, never shrinks.
  void reserveImageBytes(size_t bytes) {
    if (bytes <= imageBytes_.bytes()) return;
    if (recording_) throw Error("internal: the image bytes' buffer must grow before a recording");
    // Queued copies and resizes may still use the old buffer.
    CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(copyStream_));
    CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(context_.stream()));
    imageBytes_ = DeviceBuffer();
    imageBytes_ = DeviceBuffer(bytes);
  }

  const DeviceTaps& tapsFor(int height, int width, int outHeight, int outWidth) {
    const std::array<int, 4> key{height, width, outHeight, outWidth};
    auto it = taps_.find(key);
    if (it != taps_.end()) return it->second;
    if (recording_) throw Error("internal: a resize's taps must be made before a recording");
    const auto toDevice = [](const std::vector<BilinearTap>& taps) {
      DeviceBuffer buffer(std::max<size_t>(taps.size(), 1) * sizeof(BilinearTap));
      CONVSCOPE_CUDA_CHECK(
          cudaMemcpy(buffer.get(), taps.data(), taps.size() * sizeof(BilinearTap), cudaMemcpyHostToDevice));
      return buffer;
    };
    DeviceTaps taps{toDevice(bilinearTaps(height, outHeight)), toDevice(bilinearTaps(width, outWidth))};
    return taps_.emplace(key, std::move(taps)).first->second;
  }

  GpuContext context_;  // first member: its stream outlives everything below
  CudaStream copyStream_ = CudaStream::create(cudaStreamNonBlocking);
  std::vector<CudaEvent> chunkEvents_;
  DeviceBuffer imageBytes_;
  std::map<std::array<int, 4>, DeviceTaps> taps_;
  bool recording_ = false;
  DeviceBuffer cublasWorkspace_{size_t{32} << 20};
  CublasHandle cublas_;
  std::vector<std::unique_ptr<EventPair>> convEvents_;
};

}  // namespace

std::unique_ptr<Device> makeCudaDevice() {
  return std::make_unique<CudaDevice>();
}

GpuContext& contextOf(Device& device) {
  auto* cuda = dynamic_cast<CudaDevice*>(&device);
  if (!cuda) throw Error("internal: a GPU kernel was given a device that is not the CUDA device");
  return cuda->context();
}

}  // namespace convscope::gpu
