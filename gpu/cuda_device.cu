// The CUDA implementation of the engine's Device: stream-ordered memory, timed copies, the conv
// variants through their uniform launcher, and simple one-thread-per-element kernels for the
// layers around them (bias, activations, pooling, softmax; dense layers through cuBLAS in strict
// FP32). A batch goes to the GPU once; only what the caller downloads comes back.
#include <cublas_v2.h>

#include <algorithm>
#include <cfloat>
#include <cstdint>

#include "gpu/conv_kernel.h"
#include "gpu/cuda_check.h"
#include "gpu/cuda_resources.h"
#include "gpu/gpu_device.h"
#include "gpu/gpu_runtime.h"

namespace convscope::gpu {
namespace {

constexpr int kThreads = 256;

unsigned blocksFor(int64_t count) {
  return static_cast<unsigned>((count + kThreads - 1) / kThreads);
}

__global__ void addChannelBiasKernel(float* __restrict__ data, const float* __restrict__ bias, int64_t total,
                                     int channels, int64_t plane) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i < total) data[i] += bias[(i / plane) % channels];
}

__global__ void activationKernel(Activation kind, const float* __restrict__ in, float* __restrict__ out, int64_t n) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  const float x = in[i];
  out[i] = kind == Activation::Relu ? fmaxf(x, 0.0f) : kind == Activation::Tanh ? tanhf(x) : 1.0f / (1.0f + expf(-x));
}

template <bool kMax>
__global__ void poolKernel(PoolGeometry g, const float* __restrict__ in, float* __restrict__ out) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t total = g.planes * g.outHeight * g.outWidth;
  if (i >= total) return;
  const int ox = static_cast<int>(i % g.outWidth);
  const int oy = static_cast<int>((i / g.outWidth) % g.outHeight);
  const int64_t plane = i / (int64_t{g.outWidth} * g.outHeight);
  const float* src = in + plane * g.inHeight * g.inWidth;
  const int y0 = oy * g.strideHeight - g.padTop;
  const int x0 = ox * g.strideWidth - g.padLeft;
  const int yEnd = min(y0 + g.kernelHeight, g.inHeight);
  const int xEnd = min(x0 + g.kernelWidth, g.inWidth);
  float acc = kMax ? -FLT_MAX : 0.0f;
  bool any = false;
  for (int y = max(y0, 0); y < yEnd; ++y)
    for (int x = max(x0, 0); x < xEnd; ++x) {
      const float v = src[y * g.inWidth + x];
      acc = kMax ? fmaxf(acc, v) : acc + v;
      any = true;
    }
  if (kMax) {
    out[i] = any ? acc : -INFINITY;
    return;
  }
  int count;
  if (g.countIncludePad)
    count = (min(y0 + g.kernelHeight, g.inHeight + g.padBottom) - y0) *
            (min(x0 + g.kernelWidth, g.inWidth + g.padRight) - x0);
  else
    count = (yEnd - max(y0, 0)) * (xEnd - max(x0, 0));
  out[i] = count > 0 ? acc / static_cast<float>(count) : 0.0f;
}

__global__ void broadcast2dKernel(const float* __restrict__ c, int cRows, int cCols, float* __restrict__ out, int m,
                                  int n) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= int64_t{m} * n) return;
  const int row = static_cast<int>(i / n);
  const int col = static_cast<int>(i % n);
  out[i] = c[(cRows == 1 ? 0 : row) * cCols + (cCols == 1 ? 0 : col)];
}

__global__ void softmaxKernel(const float* __restrict__ in, float* __restrict__ out, int64_t outer, int64_t length,
                              int64_t inner) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= outer * inner) return;
  const int64_t base = (i / inner) * length * inner + i % inner;
  float peak = -INFINITY;
  for (int64_t j = 0; j < length; ++j) peak = fmaxf(peak, in[base + j * inner]);
  float sum = 0.0f;
  for (int64_t j = 0; j < length; ++j) sum += out[base + j * inner] = expf(in[base + j * inner] - peak);
  for (int64_t j = 0; j < length; ++j) out[base + j * inner] /= sum;
}

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

  std::string name() const override { return gpuDevice().name; }

  DeviceTensor allocate(const Shape& shape) override {
    DeviceTensor t{shape, nullptr};
    t.memory = std::make_shared<StreamMemory>(static_cast<size_t>(std::max<int64_t>(t.size(), 1)) * sizeof(float),
                                              context_.stream());
    return t;
  }

  DeviceTensor upload(const float* host, const Shape& shape) override {
    DeviceTensor t = allocate(shape);
    TracedScope scope(context_, "[CUDA memcpy HtoD]");
    CONVSCOPE_CUDA_CHECK(cudaEventRecord(upload_.start, context_.stream()));
    CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(t.data(), host, static_cast<size_t>(t.size()) * sizeof(float),
                                         cudaMemcpyHostToDevice, context_.stream()));
    CONVSCOPE_CUDA_CHECK(cudaEventRecord(upload_.stop, context_.stream()));
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
  double lastUploadSeconds() override { return upload_.seconds(); }
  double elapsedSeconds(int timing) override { return convEvents_.at(static_cast<size_t>(timing))->seconds(); }

  DeviceConvRecord convolve(const std::string& variant, const ConvProblem& problem, const float* input,
                            const float* weights, float* output) override {
    DeviceConvRecord record;
    const ConvKernel* kernel = findConvKernel(variant);
    if (!kernel) throw Error("kernel variant '" + variant + "' has no GPU kernel in this build");
    if (kernel->unsupportedReason) record.fallbackReason = kernel->unsupportedReason(problem);
    if (!record.fallbackReason.empty()) kernel = findConvKernel("gpu-baseline");
    record.variant = kernel->id;
    auto events = std::make_unique<EventPair>();
    CONVSCOPE_CUDA_CHECK(cudaEventRecord(events->start, context_.stream()));
    kernel->launch(ConvLaunch{problem, input, weights, output, context_});
    CONVSCOPE_CUDA_CHECK(cudaEventRecord(events->stop, context_.stream()));
    record.timing = static_cast<int>(convEvents_.size());
    convEvents_.push_back(std::move(events));
    return record;
  }

  void addChannelBias(float* data, const float* bias, int64_t images, int channels, int64_t plane) override {
    const int64_t total = images * channels * plane;
    TracedScope scope(context_, "addChannelBiasKernel");
    addChannelBiasKernel<<<blocksFor(total), kThreads, 0, context_.stream()>>>(data, bias, total, channels, plane);
    CONVSCOPE_CUDA_CHECK_LAUNCH();
  }

  void activation(Activation kind, const float* input, float* output, int64_t count) override {
    TracedScope scope(context_, "activationKernel");
    activationKernel<<<blocksFor(count), kThreads, 0, context_.stream()>>>(kind, input, output, count);
    CONVSCOPE_CUDA_CHECK_LAUNCH();
  }

  void maxPool(const PoolGeometry& g, const float* input, float* output) override {
    TracedScope scope(context_, "poolKernel<max>");
    poolKernel<true>
        <<<blocksFor(g.planes * g.outHeight * g.outWidth), kThreads, 0, context_.stream()>>>(g, input, output);
    CONVSCOPE_CUDA_CHECK_LAUNCH();
  }

  void averagePool(const PoolGeometry& g, const float* input, float* output) override {
    TracedScope scope(context_, "poolKernel<average>");
    poolKernel<false>
        <<<blocksFor(g.planes * g.outHeight * g.outWidth), kThreads, 0, context_.stream()>>>(g, input, output);
    CONVSCOPE_CUDA_CHECK_LAUNCH();
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
    broadcast2dKernel<<<blocksFor(int64_t{m} * n), kThreads, 0, context_.stream()>>>(c, cRows, cCols, out, m, n);
    CONVSCOPE_CUDA_CHECK_LAUNCH();
  }

  void softmax(const float* input, float* output, int64_t outer, int64_t length, int64_t inner) override {
    TracedScope scope(context_, "softmaxKernel");
    softmaxKernel<<<blocksFor(outer * inner), kThreads, 0, context_.stream()>>>(input, output, outer, length, inner);
    CONVSCOPE_CUDA_CHECK_LAUNCH();
  }

  void setTracing(bool on) override { context_.setTracing(on); }

  std::vector<TracedTime> collectTrace() override { return context_.collectTrace(); }

 private:
  GpuContext context_;  // first member: its stream outlives everything below
  CublasHandle cublas_;
  EventPair upload_;
  std::vector<std::unique_ptr<EventPair>> convEvents_;
};

class HostConvBackend final : public ConvBackend {
 public:
  explicit HostConvBackend(const ConvKernel& kernel) : kernel_(kernel) {}

  std::string unsupportedReason(const ConvProblem& problem) const override {
    return kernel_.unsupportedReason ? kernel_.unsupportedReason(problem) : std::string();
  }

  void forward(const ConvProblem& problem, const float* input, const float* weights, float* output) override {
    const size_t inBytes = static_cast<size_t>(problem.inputElements()) * sizeof(float);
    const size_t wBytes = static_cast<size_t>(problem.weightElements()) * sizeof(float);
    const size_t outBytes = static_cast<size_t>(problem.outputElements()) * sizeof(float);
    const DeviceBuffer deviceInput(inBytes);
    const DeviceBuffer deviceWeights(wBytes);
    const DeviceBuffer deviceOutput(outBytes);
    const cudaStream_t stream = context_.stream();
    CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(deviceInput.get(), input, inBytes, cudaMemcpyHostToDevice, stream));
    CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(deviceWeights.get(), weights, wBytes, cudaMemcpyHostToDevice, stream));
    CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(deviceOutput.get(), output, outBytes, cudaMemcpyHostToDevice, stream));
    kernel_.launch(
        ConvLaunch{problem, deviceInput.as<float>(), deviceWeights.as<float>(), deviceOutput.as<float>(), context_});
    CONVSCOPE_CUDA_CHECK(cudaMemcpyAsync(output, deviceOutput.get(), outBytes, cudaMemcpyDeviceToHost, stream));
    CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  const ConvKernel& kernel_;
  GpuContext context_;
};

void requireGpu() {
  if (!gpuDevice().usable) throw Error("no GPU can be used: " + gpuDevice().unusableReason);
}

}  // namespace

std::unique_ptr<Device> createCudaDevice() {
  requireGpu();
  return std::make_unique<CudaDevice>();
}

std::unique_ptr<ConvBackend> makeHostConvBackend(const std::string& variantId) {
  requireGpu();
  const ConvKernel* kernel = findConvKernel(variantId);
  if (!kernel) throw Error("kernel variant '" + variantId + "' has no GPU kernel in this build");
  return std::make_unique<HostConvBackend>(*kernel);
}

}  // namespace convscope::gpu
