// The CUDA implementation of the engine's Device: stream-ordered memory, timed copies, timing
// points around the work the conv variants enqueue on its stream, dense layers through cuBLAS in strict FP32, and the
// other layers through the simple kernels of layer_kernels.cuh. A batch goes to the GPU once;
// only what the caller downloads comes back.
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>

#include "app/core/engine/gpu_platform.h"
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

  void synchronize() override { CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(context_.stream())); }

  void beginRun() override { convEvents_.clear(); }
  double elapsedSeconds(int timing) override { return convEvents_.at(static_cast<size_t>(timing))->seconds(); }

  int timed(const std::function<void()>& work) override {
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
  GpuContext context_;  // first member: its stream outlives everything below
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
