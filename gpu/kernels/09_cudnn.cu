// cuDNN, the library baseline every hand-written variant is measured against. cuDNN times its
// forward-convolution algorithms once per shape (cudnnFindConvolutionForwardAlgorithmEx) and the
// fastest is cached with its descriptors, as the course's framework did; math is forced to plain
// FP32 FMA (no TF32). The direct, GEMM and implicit-GEMM algorithms are eligible, with up to 4 GiB
// of workspace; the FFT and Winograd ones are not: they compute another sum (measured on an H200:
// 3e-4 relative error on a 5x5 layer), and the correctness test holds cuDNN to the same 1e-5 as the
// hand-written kernels, so the comparison is of the same arithmetic.
#include <vector>

#include "gpu/conv_kernel.h"
#include "gpu/cuda_check.h"

// Where CMake found cuDNN it defines CONVSCOPE_HAVE_CUDNN, which makes cuda_check.h include
// cudnn.h and define CONVSCOPE_CUDNN_CHECK; elsewhere the kernel only says that the build has none
// (and the row, which needs cuDNN, is unavailable).
namespace convscope::gpu {
namespace {

// cuDNN picks its kernels and their launch geometry itself, per shape and GPU; the Profile tab
// shows the kernels it ran.
std::vector<KernelLaunchGeometry> cudnnGeometry(const ConvProblem&) {
  KernelLaunchGeometry g;
  g.kernel = "cudnnConvolutionForward";
  g.mapping =
      "chosen by cuDNN at run time (the fastest algorithm its search finds for the shape): its kernels and "
      "their grids are not published";
  return {g};
}

}  // namespace
}  // namespace convscope::gpu

#ifdef CONVSCOPE_HAVE_CUDNN

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/cuda_resources.h"
#include "gpu/kernels/conv_shape.cuh"

namespace convscope::gpu {
namespace {

// Groups (depthwise convs among them: a group per channel) and dilation cuDNN computes itself,
// from its descriptors. It pads both sides of a dimension alike; a layer padded unevenly
// (TensorFlow's "same" at stride 2: nothing above, a row below, as in EfficientNet) is computed on
// a copy of its input padded here, with cuDNN padding nothing. So the layers of real CNNs that no
// course kernel computes stay on the GPU with cuDNN, not on the host.
std::string cudnnUnsupportedReason(const ConvProblem&) {
  return {};
}

bool padsUnevenly(const ConvProblem& p) {
  return p.padTop != p.padBottom || p.padLeft != p.padRight;
}

// The problem cuDNN is given for `p`: the same, or for uneven padding the explicitly padded input
// with no padding of cuDNN's.
ConvProblem evenlyPadded(const ConvProblem& p) {
  if (!padsUnevenly(p)) return p;
  ConvProblem q = p;
  q.inHeight += p.padTop + p.padBottom;
  q.inWidth += p.padLeft + p.padRight;
  q.padTop = q.padBottom = q.padLeft = q.padRight = 0;
  return q;
}

// out (planes x paddedHeight x paddedWidth) = in (planes x height x width) moved by (top, left),
// zeros around it.
__global__ void padPlanes(const float* __restrict__ in, float* __restrict__ out, int64_t planes, int height, int width,
                          int top, int left, int paddedHeight, int paddedWidth) {
  const int64_t total = planes * paddedHeight * paddedWidth;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    const int x = static_cast<int>(i % paddedWidth) - left;
    const int y = static_cast<int>((i / paddedWidth) % paddedHeight) - top;
    const int64_t plane = i / (int64_t{paddedWidth} * paddedHeight);
    out[i] = y >= 0 && y < height && x >= 0 && x < width ? in[(plane * height + y) * width + x] : 0.0f;
  }
}

// The algorithms that sum the products as a convolution does (FFT and Winograd transform them).
bool exactFp32Algorithm(cudnnConvolutionFwdAlgo_t algorithm) {
  return algorithm == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
         algorithm == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
         algorithm == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || algorithm == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}

// Descriptors and the chosen algorithm of one shape.
struct CudnnShapePlan {
  CudnnTensorDescriptor input = CudnnTensorDescriptor::create();
  CudnnTensorDescriptor output = CudnnTensorDescriptor::create();
  CudnnFilterDescriptor filter = CudnnFilterDescriptor::create();
  CudnnConvolutionDescriptor convolution = CudnnConvolutionDescriptor::create();
  cudnnConvolutionFwdAlgo_t algorithm = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspaceBytes = 0;
};

// What a plan is made for: the shape, and the groups and dilation ConvShape leaves out.
// ConvShape also leaves out padBottom and padRight; every problem that gets this far pads
// symmetrically (cudnnUnsupportedReason), so they equal padTop and padLeft.
using CudnnPlanKey = std::pair<ConvShape, std::tuple<int, int, int>>;

CudnnPlanKey planKeyOf(const ConvProblem& p) {
  return {shapeOf(p), {p.group, p.dilationHeight, p.dilationWidth}};
}

// The per-context state: one handle on the context's stream, one plan per shape seen (the plans
// go before the handle).
struct CudnnState {
  CudnnHandle handle;
  std::map<CudnnPlanKey, std::unique_ptr<CudnnShapePlan>> plans;
  DeviceBuffer padded;  // the input of an unevenly padded layer, padded (grows, never shrinks)
};

// Search at most this much workspace: explicit GEMM's im2col of a 10,000-image batch would
// otherwise ask for tens of gigabytes.
constexpr size_t kWorkspaceCap = size_t{4} << 30;

// The plan of `p` (evenly padded), its algorithms timed on these buffers.
std::unique_ptr<CudnnShapePlan> makePlan(const ConvProblem& p, const float* input, const ConvLaunch& l,
                                         cudnnHandle_t handle) {
  auto plan = std::make_unique<CudnnShapePlan>();
  CONVSCOPE_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->input, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, p.batch,
                                                   p.inChannels, p.inHeight, p.inWidth));
  // A filter reads the channels of its group only: C / G of them (ONNX's and cuDNN's layout alike).
  CONVSCOPE_CUDNN_CHECK(cudnnSetFilter4dDescriptor(plan->filter, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, p.outChannels,
                                                   p.inChannels / p.group, p.kernelHeight, p.kernelWidth));
  CONVSCOPE_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(plan->convolution, p.padTop, p.padLeft, p.strideHeight,
                                                        p.strideWidth, p.dilationHeight, p.dilationWidth,
                                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CONVSCOPE_CUDNN_CHECK(cudnnSetConvolutionGroupCount(plan->convolution, p.group));
  CONVSCOPE_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->convolution, CUDNN_FMA_MATH));

  int n = 0, c = 0, h = 0, w = 0;
  CONVSCOPE_CUDNN_CHECK(
      cudnnGetConvolution2dForwardOutputDim(plan->convolution, plan->input, plan->filter, &n, &c, &h, &w));
  if (n != p.batch || c != p.outChannels || h != p.outHeight() || w != p.outWidth())
    throwCudaError("cuDNN computes a different output shape than " + p.describe(),
                   "cudnnGetConvolution2dForwardOutputDim", __FILE__, __LINE__);
  CONVSCOPE_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->output, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));

  // Workspace enough for every eligible algorithm that stays under the cap.
  size_t searchBytes = 0;
  for (int i = 0; i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++i) {
    const auto algorithm = static_cast<cudnnConvolutionFwdAlgo_t>(i);
    size_t bytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(handle, plan->input, plan->filter, plan->convolution, plan->output,
                                                algorithm, &bytes) == CUDNN_STATUS_SUCCESS &&
        bytes <= kWorkspaceCap)
      searchBytes = std::max(searchBytes, bytes);
  }
  void* workspace = searchBytes ? l.context.workspace(searchBytes) : nullptr;

  // Times every algorithm on the real buffers (the output is overwritten by the launch after).
  std::vector<cudnnConvolutionFwdAlgoPerf_t> results(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  int found = 0;
  CONVSCOPE_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
      handle, plan->input, input, plan->filter, l.weights, plan->convolution, plan->output, l.output,
      static_cast<int>(results.size()), &found, results.data(), workspace, searchBytes));
  // Results come fastest first.
  for (int i = 0; i < found; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& r = results[i];
    if (r.status != CUDNN_STATUS_SUCCESS || r.mathType != CUDNN_FMA_MATH || r.memory > searchBytes) continue;
    if (!exactFp32Algorithm(r.algo)) continue;
    plan->algorithm = r.algo;
    plan->workspaceBytes = r.memory;
    return plan;
  }
  throwCudaError("no FP32 forward algorithm for " + p.describe(), "cudnnFindConvolutionForwardAlgorithmEx", __FILE__,
                 __LINE__);
}

void launchCudnn(const ConvLaunch& l) {
  CudnnState& state = l.context.state<CudnnState>("cudnnConvolutionForward");
  if (!state.handle) {
    // Kept only once it is bound to the stream, so a failure leaves no half-made handle behind.
    CudnnHandle handle = CudnnHandle::create();
    CONVSCOPE_CUDNN_CHECK(cudnnSetStream(handle, l.context.stream()));
    state.handle = std::move(handle);
  }
  const ConvProblem& p = l.problem;
  const ConvProblem q = evenlyPadded(p);
  const float* input = l.input;
  if (padsUnevenly(p)) {
    const size_t bytes = static_cast<size_t>(q.inputElements()) * sizeof(float);
    if (state.padded.bytes() < bytes) {
      // The old copy may still be read by queued work; it goes before the new one is allocated.
      CONVSCOPE_CUDA_CHECK(cudaStreamSynchronize(l.context.stream()));
      state.padded.free();
      state.padded = DeviceBuffer(bytes);
    }
    const int64_t planes = int64_t{p.batch} * p.inChannels;
    const int64_t total = planes * q.inHeight * q.inWidth;
    const int threads = 256;
    const int blocks = static_cast<int>(std::min<int64_t>((total + threads - 1) / threads, 65535 * 8));
    {
      TracedScope scope(l.context, "padPlanes");
      padPlanes<<<blocks, threads, 0, l.context.stream()>>>(l.input, static_cast<float*>(state.padded.get()), planes,
                                                            p.inHeight, p.inWidth, p.padTop, p.padLeft, q.inHeight,
                                                            q.inWidth);
      CONVSCOPE_CUDA_CHECK(cudaGetLastError());
    }
    input = static_cast<const float*>(state.padded.get());
  }
  std::unique_ptr<CudnnShapePlan>& plan = state.plans[planKeyOf(q)];
  if (!plan) plan = makePlan(q, input, l, state.handle);

  void* workspace = plan->workspaceBytes ? l.context.workspace(plan->workspaceBytes) : nullptr;
  const float one = 1.0f;
  const float zero = 0.0f;
  TracedScope scope(l.context, "cudnnConvolutionForward");
  CONVSCOPE_CUDNN_CHECK(cudnnConvolutionForward(state.handle, &one, plan->input, input, plan->filter, l.weights,
                                                plan->convolution, plan->algorithm, workspace, plan->workspaceBytes,
                                                &zero, plan->output, l.output));
}

}  // namespace

extern const GpuKernel kCudnnKernel{cudnnUnsupportedReason, cudnnGeometry, runWithoutEpilogue<launchCudnn>};

}  // namespace convscope::gpu

#else  // no cuDNN headers at build time: the variant exists but runs nothing

namespace convscope::gpu {
namespace {

std::string cudnnMissing(const ConvProblem&) {
  return "this build has no cuDNN";
}

void launchCudnnMissing(const ConvLaunch&) {
  throwCudaError("this build has no cuDNN", "cudnnConvolutionForward", __FILE__, __LINE__);
}

}  // namespace

extern const GpuKernel kCudnnKernel{cudnnMissing, cudnnGeometry, runWithoutEpilogue<launchCudnnMissing>};

}  // namespace convscope::gpu

#endif
