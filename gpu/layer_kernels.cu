// The non-convolution layers' kernels (see layer_kernels.cuh): 256 threads a block, one thread
// per output element.
#include <cfloat>
#include <cstdint>

#include "gpu/cuda_check.h"
#include "gpu/kernels/epilogue.cuh"
#include "gpu/layer_kernels.cuh"
#include "gpu/resize_bytes.cuh"

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

__global__ void activationKernel(FusedActivation kind, const float* __restrict__ in, float* __restrict__ out,
                                 int64_t n) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  out[i] = activate(kind, in[i]);
}

template <BinaryArithmetic Op>
__device__ __forceinline__ float arithmeticOf(float a, float b) {
  if constexpr (Op == BinaryArithmetic::Add) {
    return a + b;
  } else if constexpr (Op == BinaryArithmetic::Sub) {
    return a - b;
  } else if constexpr (Op == BinaryArithmetic::Mul) {
    return a * b;
  } else {
    return a / b;  // IEEE division, as the host's
  }
}

// kFlat: a, b and out have one shape (a residual sum): no index arithmetic.
template <BinaryArithmetic Op, bool kFlat>
__global__ void arithmeticKernel(BroadcastOperands g, const float* __restrict__ a, const float* __restrict__ b,
                                 float* __restrict__ out, int64_t total) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= total) return;
  if constexpr (kFlat) {
    out[i] = arithmeticOf<Op>(a[i], b[i]);
  } else {
    int64_t rest = i, ia = 0, ib = 0;
    for (int axis = g.rank - 1; axis >= 0; --axis) {
      const int64_t coordinate = rest % g.outDims[axis];
      rest /= g.outDims[axis];
      ia += coordinate * g.aStrides[axis];
      ib += coordinate * g.bStrides[axis];
    }
    out[i] = arithmeticOf<Op>(a[ia], b[ib]);
  }
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

// One thread per output pixel (see resize_bytes.cuh for why its arithmetic is the host's).
__global__ void resizeImageBytesKernel(const uint8_t* __restrict__ bytes, int count, int height, int width,
                                       const BilinearTap* __restrict__ rowTaps, const BilinearTap* __restrict__ colTaps,
                                       float* __restrict__ out, int outHeight, int outWidth) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t plane = int64_t{outHeight} * outWidth;
  if (i >= plane * count) return;
  const int64_t image = i / plane;
  const int y = static_cast<int>((i % plane) / outWidth);
  const int x = static_cast<int>(i % outWidth);
  out[i] = resizedBytePixel(bytes + image * height * width, width, rowTaps, colTaps,
                            height == outHeight && width == outWidth, y, x);
}

}  // namespace

void launchAddChannelBias(float* data, const float* bias, int64_t images, int channels, int64_t plane,
                          cudaStream_t stream) {
  const int64_t total = images * channels * plane;
  addChannelBiasKernel<<<blocksFor(total), kThreads, 0, stream>>>(data, bias, total, channels, plane);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

void launchActivation(Activation kind, const float* input, float* output, int64_t count, cudaStream_t stream) {
  activationKernel<<<blocksFor(count), kThreads, 0, stream>>>(fusedActivationOf(kind), input, output, count);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

namespace {

// Whether a and b are both laid out as out is (every stride the contiguous one).
bool isFlat(const BroadcastOperands& g) {
  int64_t stride = 1;
  for (int axis = g.rank - 1; axis >= 0; --axis) {
    if (g.aStrides[axis] != stride && g.outDims[axis] != 1) return false;
    if (g.bStrides[axis] != stride && g.outDims[axis] != 1) return false;
    stride *= g.outDims[axis];
  }
  return true;
}

template <BinaryArithmetic Op>
void launchArithmeticAs(const BroadcastOperands& g, const float* a, const float* b, float* out, int64_t total,
                        cudaStream_t stream) {
  if (isFlat(g))
    arithmeticKernel<Op, true><<<blocksFor(total), kThreads, 0, stream>>>(g, a, b, out, total);
  else
    arithmeticKernel<Op, false><<<blocksFor(total), kThreads, 0, stream>>>(g, a, b, out, total);
}

}  // namespace

void launchArithmetic(BinaryArithmetic op, const BroadcastOperands& g, const float* a, const float* b, float* out,
                      cudaStream_t stream) {
  int64_t total = 1;
  for (int axis = 0; axis < g.rank; ++axis) total *= g.outDims[axis];
  if (total == 0) return;  // an empty tensor: nothing to compute, and a grid of no blocks is refused
  switch (op) {
    case BinaryArithmetic::Add:
      launchArithmeticAs<BinaryArithmetic::Add>(g, a, b, out, total, stream);
      break;
    case BinaryArithmetic::Sub:
      launchArithmeticAs<BinaryArithmetic::Sub>(g, a, b, out, total, stream);
      break;
    case BinaryArithmetic::Mul:
      launchArithmeticAs<BinaryArithmetic::Mul>(g, a, b, out, total, stream);
      break;
    case BinaryArithmetic::Div:
      launchArithmeticAs<BinaryArithmetic::Div>(g, a, b, out, total, stream);
      break;
  }
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

void launchMaxPool(const PoolGeometry& g, const float* input, float* output, cudaStream_t stream) {
  poolKernel<true><<<blocksFor(g.planes * g.outHeight * g.outWidth), kThreads, 0, stream>>>(g, input, output);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

void launchAveragePool(const PoolGeometry& g, const float* input, float* output, cudaStream_t stream) {
  poolKernel<false><<<blocksFor(g.planes * g.outHeight * g.outWidth), kThreads, 0, stream>>>(g, input, output);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

void launchBroadcast2d(const float* c, int cRows, int cCols, float* out, int m, int n, cudaStream_t stream) {
  broadcast2dKernel<<<blocksFor(int64_t{m} * n), kThreads, 0, stream>>>(c, cRows, cCols, out, m, n);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

void launchSoftmax(const float* input, float* output, int64_t outer, int64_t length, int64_t inner,
                   cudaStream_t stream) {
  softmaxKernel<<<blocksFor(outer * inner), kThreads, 0, stream>>>(input, output, outer, length, inner);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

void launchResizeImageBytes(const uint8_t* bytes, int count, int height, int width, const BilinearTap* rowTaps,
                            const BilinearTap* colTaps, float* out, int outHeight, int outWidth, cudaStream_t stream) {
  const int64_t total = int64_t{count} * outHeight * outWidth;
  if (total == 0) return;
  resizeImageBytesKernel<<<blocksFor(total), kThreads, 0, stream>>>(bytes, count, height, width, rowTaps, colTaps, out,
                                                                    outHeight, outWidth);
  CONVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace convscope::gpu
