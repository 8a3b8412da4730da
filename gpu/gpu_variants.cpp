// The GPU rows of the variant table, in course order: the only place that names a GPU variant.
// Each row's kernel lives in the file the row names; the file's number is the row's place in
// the course. Adding a variant: write gpu/kernels/NN_name.cu defining `const GpuKernel kNameKernel`,
// then add its two lines here (the declaration and the row), as step 10 was. Plain C++: a build without CUDA still
// lists every step of the course (unavailable, saying why), so that legends, the selector and
// benchmark files from a GPU machine read the same there.
#include <cstdint>
#include <string>
#include <vector>

#include "app/core/conv/variant_table.h"
#include "gpu/gpu_kernel.h"

namespace convscope::gpu {

#ifdef CONVSCOPE_HAVE_CUDA
#define CONVSCOPE_GPU_KERNEL(name) extern const GpuKernel name;
#define CONVSCOPE_GPU_NETWORK_KERNEL(name) extern const GpuNetworkKernel name;
#define CONVSCOPE_KERNEL_OF(name) (&name)
#define CONVSCOPE_NETWORK_KERNEL_OF(name) (&name)
#else
#define CONVSCOPE_GPU_KERNEL(name)
#define CONVSCOPE_GPU_NETWORK_KERNEL(name)
#define CONVSCOPE_KERNEL_OF(name) (static_cast<const GpuKernel*>(nullptr))
#define CONVSCOPE_NETWORK_KERNEL_OF(name) (static_cast<const GpuNetworkKernel*>(nullptr))
#endif

CONVSCOPE_GPU_KERNEL(kBaselineKernel)
CONVSCOPE_GPU_KERNEL(kTiledSharedKernel)
CONVSCOPE_GPU_KERNEL(kConstantWeightsKernel)
CONVSCOPE_GPU_KERNEL(kUnrollGemmKernel)
CONVSCOPE_GPU_KERNEL(kFusedUnrollGemmKernel)
CONVSCOPE_GPU_KERNEL(kAtomicsKernel)
CONVSCOPE_GPU_KERNEL(kPerLayerKernel)
CONVSCOPE_GPU_KERNEL(kRestrictUnrollKernel)
CONVSCOPE_GPU_KERNEL(kCudnnKernel)
CONVSCOPE_GPU_KERNEL(kFusedEpilogueKernel)
CONVSCOPE_GPU_KERNEL(kTensorTf32Kernel)
CONVSCOPE_GPU_KERNEL(kTensor3xTf32Kernel)
CONVSCOPE_GPU_KERNEL(kWholeNetworkKernel)
CONVSCOPE_GPU_NETWORK_KERNEL(kWholeNetworkNetwork)

namespace {

struct Row {
  const char* id;
  const char* displayName;
  const char* description;
  const char* courseStep;
  const char* sourceFile;  // gpu/kernels/NN_name.cu, NN = the place in the course
  const GpuKernel* kernel;
  bool needsCudnn = false;
  bool preferredDefault = false;
  std::vector<std::string> fusableOps = {};  // applied in its own kernel after the bias
  int tensorCoresOfCompute = 0;              // needs tensor cores of this compute capability (x10)
  const char* arithmetic = "FP32";
  double relativeTolerance = 1e-5;
  int64_t (*scratchBytes)(const ConvProblem&) = nullptr;  // ConvVariant::scratchBytes
  bool wholeNetwork = false;                              // its kernel runs whole networks, through `network`
  const GpuNetworkKernel* network = nullptr;
};

// The unroll kernel writes X_unroll (C*K*K rows x N*H_out*W_out columns) to global memory and the
// matrix multiply reads it back: at least twice its size beyond the compulsory traffic.
int64_t unrolledMatrixTraffic(const ConvProblem& p) {
  const int64_t rows = int64_t{p.inChannels} * p.kernelHeight * p.kernelWidth;
  const int64_t cols = int64_t{p.batch} * p.outHeight() * p.outWidth();
  return 2 * rows * cols * static_cast<int64_t>(sizeof(float));
}

ConvVariant variantOf(const Row& row) {
  ConvVariant v;
  v.id = row.id;
  v.displayName = row.displayName;
  v.description = row.description;
  v.courseStep = row.courseStep;
  v.sourceFile = row.sourceFile;
  const std::string file = v.sourceFile.substr(v.sourceFile.rfind('/') + 1);
  v.courseOrder = (file[0] - '0') * 10 + (file[1] - '0');
  v.requirements.gpu = true;
  v.requirements.cudnn = row.needsCudnn;
  v.preferredDefault = row.preferredDefault;
  v.fusableOps = row.fusableOps;
  v.requirements.tensorCores = row.tensorCoresOfCompute > 0;
  v.requirements.minComputeMajor = row.tensorCoresOfCompute / 10;
  v.requirements.minComputeMinor = row.tensorCoresOfCompute % 10;
  v.arithmetic = row.arithmetic;
  v.relativeTolerance = row.relativeTolerance;
  if (row.wholeNetwork && row.network) {
    v.declinesNetwork = row.network->declines;
    v.runNetwork = row.network->run;
  } else if (row.wholeNetwork) {
    // Never called: without CUDA the row is unavailable; the planner still sees what it is.
    v.runNetwork = [](Device&, const ChainNetwork&, const NetworkRun&) {
      throw Error("this build of ConvScope has no CUDA support");
    };
  }
  // No kernel of the course indexes weights by group or spaces its taps: every row declines
  // grouped and dilated layers here, before its own shape check, and the plan gives them to a
  // variant that computes them (shown as a fallback).
  const auto kernelReason = row.kernel ? row.kernel->unsupportedReason : nullptr;
  v.unsupportedReason = [kernelReason](const ConvProblem& p) -> std::string {
    if (p.isGrouped())
      return "grouped convolution (" + std::to_string(p.group) +
             " groups): this kernel computes only group 1, every filter reading every input channel";
    if (p.hasDilation())
      return "dilated convolution (dilation " + std::to_string(p.dilationHeight) + "x" +
             std::to_string(p.dilationWidth) + "): this kernel reads adjacent input pixels only";
    return kernelReason ? kernelReason(p) : std::string();
  };
  if (row.scratchBytes) v.scratchBytes = row.scratchBytes;
  if (const GpuKernel* kernel = row.kernel) {
    v.launchGeometry = kernel->launchGeometry;
    v.runOnDevice = kernel->run;
    v.fusesStep = kernel->fusesStep;
    v.kernelHandle = kernel->kernelHandle;
  } else {
    // Never called: without CUDA there is no GPU, so the row is unavailable.
    v.runOnDevice = [](Device&, const ConvProblem&, const float*, const float*, float*, const ConvEpilogue&) {
      throw Error("this build of ConvScope has no CUDA support");
    };
  }
  return v;
}

const bool registered = [] {
  const Row rows[] = {
      {"gpu-baseline", "GPU baseline",
       "One thread per output element, reading inputs and weights straight from global memory.",
       "Basic GPU convolution", "gpu/kernels/01_baseline.cu", CONVSCOPE_KERNEL_OF(kBaselineKernel)},
      {"gpu-tiled-shared", "GPU tiled, shared memory",
       "Each block stages an input tile in shared memory, so neighbouring outputs reuse it instead of re-reading "
       "global memory.",
       "Tiled shared-memory convolution", "gpu/kernels/02_tiled_shared.cu", CONVSCOPE_KERNEL_OF(kTiledSharedKernel)},
      {"gpu-constant-weights", "GPU tiled + constant weights",
       "Shared-memory input tiles, with the weights in constant memory, broadcast to a whole warp in one read.",
       "Weight matrix in constant memory", "gpu/kernels/03_constant_weights.cu",
       CONVSCOPE_KERNEL_OF(kConstantWeightsKernel)},
      {"gpu-unroll-gemm",
       "GPU unroll + GEMM",
       "An unroll kernel writes the im2col matrix to global memory; a shared-memory tiled matrix multiply does the "
       "rest.",
       "Input unrolling + tiled matrix multiply",
       "gpu/kernels/04_unroll_gemm.cu",
       CONVSCOPE_KERNEL_OF(kUnrollGemmKernel),
       false,
       false,
       {},
       0,
       "FP32",
       1e-5,
       unrolledMatrixTraffic},
      {"gpu-fused-unroll-gemm", "GPU fused unroll + GEMM",
       "The unroll happens while the matrix-multiply tiles are loaded: no unrolled matrix in global memory.",
       "Kernel fusion for unrolling and matrix multiply", "gpu/kernels/05_fused_unroll_gemm.cu",
       CONVSCOPE_KERNEL_OF(kFusedUnrollGemmKernel)},
      {"gpu-atomics", "GPU channel reduction with atomics",
       "Input channels are split across blocks whose partial sums are combined with atomicAdd.",
       "Input channel reduction: atomics", "gpu/kernels/06_atomics.cu", CONVSCOPE_KERNEL_OF(kAtomicsKernel)},
      {"gpu-per-layer", "GPU per-layer kernels",
       "A different kernel and tile size for each layer shape: one for the 1-channel first layer, one for "
       "multi-channel layers.",
       "Multiple kernel implementations for different layer sizes", "gpu/kernels/07_per_layer.cu",
       CONVSCOPE_KERNEL_OF(kPerLayerKernel)},
      {"gpu-restrict-unroll", "GPU __restrict__ + unrolled",
       "The per-layer kernels with __restrict__, const, compile-time kernel sizes and fully unrolled loops.",
       "__restrict__, loop unrolling and compile-time sizes", "gpu/kernels/08_restrict_unroll.cu",
       CONVSCOPE_KERNEL_OF(kRestrictUnrollKernel), false, /*preferredDefault=*/true},
      {"cudnn", "cuDNN", "cuDNN's forward convolution with the fastest algorithm it finds for the shape (FP32).",
       "cuDNN baseline", "gpu/kernels/09_cudnn.cu", CONVSCOPE_KERNEL_OF(kCudnnKernel), /*needsCudnn=*/true},
      {"gpu-fused-epilogue",
       "GPU conv + bias + activation + pool",
       "Convolution, bias, activation and pooling in one kernel: the full-size conv output never reaches memory.",
       "Beyond the course: a fused epilogue",
       "gpu/kernels/10_fused_epilogue.cu",
       CONVSCOPE_KERNEL_OF(kFusedEpilogueKernel),
       false,
       false,
       {"Relu", "Tanh", "Sigmoid", "MaxPool", "AveragePool"}},
      {"gpu-tensor-tf32",
       "GPU tensor cores, TF32",
       "The convolution as an implicit matrix product on TF32 tensor cores (inputs rounded to 10 mantissa bits), "
       "with bias, activation and 2x2 pooling applied to the accumulators.",
       "Beyond the course: tensor cores",
       "gpu/kernels/11_tensor_tf32.cu",
       CONVSCOPE_KERNEL_OF(kTensorTf32Kernel),
       false,
       false,
       {"Relu", "Tanh", "Sigmoid", "MaxPool", "AveragePool"},
       80,
       "TF32",
       2e-3},
      {"gpu-tensor-3xtf32",
       "GPU tensor cores, 3xTF32",
       "The TF32 tensor-core product with every input split in two TF32 parts and three products summed: "
       "FP32-level accuracy at three times the tensor-core work.",
       "Beyond the course: tensor cores at FP32 accuracy",
       "gpu/kernels/12_tensor_3xtf32.cu",
       CONVSCOPE_KERNEL_OF(kTensor3xTf32Kernel),
       false,
       false,
       {"Relu", "Tanh", "Sigmoid", "MaxPool", "AveragePool"},
       80,
       "3xTF32"},
      {"gpu-whole-network",
       "GPU whole network, one kernel",
       "The whole network in one kernel, from the 8-bit images (resized as they are read) to the probabilities: each "
       "block keeps its images' maps and the conv weights in shared memory, so no layer's output reaches global "
       "memory.",
       "Beyond the course: the whole network in one kernel",
       "gpu/kernels/13_whole_network.cu",
       CONVSCOPE_KERNEL_OF(kWholeNetworkKernel),
       false,
       false,
       {},
       0,
       "FP32",
       1e-5,
       /*scratchBytes=*/nullptr,
       /*wholeNetwork=*/true,
       CONVSCOPE_NETWORK_KERNEL_OF(kWholeNetworkNetwork)},
  };
  for (const Row& row : rows) registerConvVariant(variantOf(row));
  return true;
}();

}  // namespace
}  // namespace convscope::gpu
