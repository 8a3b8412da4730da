// The GPU rows of the variant table, in course order: the only place that names a GPU variant.
// Each row's kernel lives in the file the row names, gpu/kernels/NN_name.cu, where NN is the
// row's courseOrder (test_conv_backends checks that they agree). Adding a variant: write that
// file defining `const GpuKernel kNameKernel`, then add its declaration and its row here (the
// recipe in docs/architecture.md). Plain C++: a build without CUDA still lists every step of the
// course (unavailable, saying why), so that legends, the selector and benchmark files from a GPU
// machine read the same there.
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
  int courseOrder;         // the place in the course; the number NN of its file (a test checks they agree)
  const char* sourceFile;  // gpu/kernels/NN_name.cu
  const GpuKernel* kernel = nullptr;
  bool needsCudnn = false;
  // Its kernel computes grouped (depthwise among them) and dilated convolutions: every other row
  // declines them, and the plan gives them to one that does.
  bool computesGroupsAndDilation = false;
  bool preferredDefault = false;
  VariantRole role = VariantRole::kCourseStep;
  std::vector<std::string> fusableOps = {};  // applied in its own kernel after the bias
  int tensorCoresOfCompute = 0;              // needs tensor cores of this compute capability (x10)
  const char* arithmetic = "FP32";
  double relativeTolerance = 1e-5;
  int64_t (*scratchBytes)(const ConvProblem&) = nullptr;  // ConvVariant::scratchBytes
  bool wholeNetwork = false;                              // its kernel runs whole networks, through `network`
  const GpuNetworkKernel* network = nullptr;
};

// cuDNN's copy of an unevenly padded layer's input, padded (09_cudnn.cu): cuDNN pads both sides alike.
int64_t cudnnPaddedInput(const ConvProblem& p) {
  if (p.padTop == p.padBottom && p.padLeft == p.padRight) return 0;
  return int64_t{p.batch} * p.inChannels * (p.inHeight + p.padTop + p.padBottom) *
         (p.inWidth + p.padLeft + p.padRight) * int64_t{sizeof(float)};
}

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
  v.courseOrder = row.courseOrder;
  v.sourceFile = row.sourceFile;
  v.requirements.gpu = true;
  v.requirements.cudnn = row.needsCudnn;
  v.preferredDefault = row.preferredDefault;
  v.role = row.role;
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
  // No kernel of the course indexes weights by group or spaces its taps: those rows decline
  // grouped and dilated layers here, before their own shape check, and the plan gives them to a
  // variant that computes them (cuDNN's, else a CPU one; shown as a fallback).
  const auto kernelReason = row.kernel ? row.kernel->unsupportedReason : nullptr;
  const bool groupsAndDilation = row.computesGroupsAndDilation;
  v.unsupportedReason = [kernelReason, groupsAndDilation](const ConvProblem& p) -> std::string {
    if (groupsAndDilation) return kernelReason ? kernelReason(p) : std::string();
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
      {
          .id = "gpu-baseline",
          .displayName = "GPU baseline",
          .description = "One thread per output element, reading inputs and weights straight from global memory.",
          .courseStep = "Basic GPU convolution",
          .courseOrder = 1,
          .sourceFile = "gpu/kernels/01_baseline.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kBaselineKernel),
          .role = VariantRole::kCourseBaseline,
      },
      {
          .id = "gpu-tiled-shared",
          .displayName = "GPU tiled, shared memory",
          .description = "Each block stages an input tile in shared memory, so neighbouring outputs reuse it instead "
                         "of re-reading global memory.",
          .courseStep = "Tiled shared-memory convolution",
          .courseOrder = 2,
          .sourceFile = "gpu/kernels/02_tiled_shared.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kTiledSharedKernel),
      },
      {
          .id = "gpu-constant-weights",
          .displayName = "GPU tiled + constant weights",
          .description =
              "Shared-memory input tiles, with the weights in constant memory, broadcast to a whole warp in one read.",
          .courseStep = "Weight matrix in constant memory",
          .courseOrder = 3,
          .sourceFile = "gpu/kernels/03_constant_weights.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kConstantWeightsKernel),
      },
      {
          .id = "gpu-unroll-gemm",
          .displayName = "GPU unroll + GEMM",
          .description = "An unroll kernel writes the im2col matrix to global memory; a shared-memory tiled matrix "
                         "multiply does the rest.",
          .courseStep = "Input unrolling + tiled matrix multiply",
          .courseOrder = 4,
          .sourceFile = "gpu/kernels/04_unroll_gemm.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kUnrollGemmKernel),
          .scratchBytes = unrolledMatrixTraffic,
      },
      {
          .id = "gpu-fused-unroll-gemm",
          .displayName = "GPU fused unroll + GEMM",
          .description =
              "The unroll happens while the matrix-multiply tiles are loaded: no unrolled matrix in global memory.",
          .courseStep = "Kernel fusion for unrolling and matrix multiply",
          .courseOrder = 5,
          .sourceFile = "gpu/kernels/05_fused_unroll_gemm.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kFusedUnrollGemmKernel),
      },
      {
          .id = "gpu-atomics",
          .displayName = "GPU channel reduction with atomics",
          .description = "Input channels are split across blocks whose partial sums are combined with atomicAdd.",
          .courseStep = "Input channel reduction: atomics",
          .courseOrder = 6,
          .sourceFile = "gpu/kernels/06_atomics.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kAtomicsKernel),
      },
      {
          .id = "gpu-per-layer",
          .displayName = "GPU per-layer kernels",
          .description = "A different kernel and tile size for each layer shape: one for the 1-channel first layer, "
                         "one for multi-channel layers.",
          .courseStep = "Multiple kernel implementations for different layer sizes",
          .courseOrder = 7,
          .sourceFile = "gpu/kernels/07_per_layer.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kPerLayerKernel),
      },
      {
          .id = "gpu-restrict-unroll",
          .displayName = "GPU __restrict__ + unrolled",
          .description =
              "The per-layer kernels with __restrict__, const, compile-time kernel sizes and fully unrolled loops.",
          .courseStep = "__restrict__, loop unrolling and compile-time sizes",
          .courseOrder = 8,
          .sourceFile = "gpu/kernels/08_restrict_unroll.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kRestrictUnrollKernel),
          .preferredDefault = true,
      },
      {
          .id = "cudnn",
          .displayName = "cuDNN",
          .description = "cuDNN's forward convolution with the fastest algorithm it finds for the shape (FP32).",
          .courseStep = "cuDNN baseline",
          .courseOrder = 9,
          .sourceFile = "gpu/kernels/09_cudnn.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kCudnnKernel),
          .needsCudnn = true,
          .computesGroupsAndDilation = true,
          .role = VariantRole::kVendorLibrary,
          .scratchBytes = cudnnPaddedInput,
      },
      {
          .id = "gpu-fused-epilogue",
          .displayName = "GPU conv + bias + activation + pool",
          .description = "Convolution, bias, activation and pooling in one kernel: the full-size conv output never "
                         "reaches memory.",
          .courseStep = "Beyond the course: a fused epilogue",
          .courseOrder = 10,
          .sourceFile = "gpu/kernels/10_fused_epilogue.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kFusedEpilogueKernel),
          .fusableOps = everyEpilogueOp(),
      },
      {
          .id = "gpu-tensor-tf32",
          .displayName = "GPU tensor cores, TF32",
          .description = "The convolution as an implicit matrix product on TF32 tensor cores (inputs rounded to 10 "
                         "mantissa bits), with bias, activation and 2x2 pooling applied to the accumulators.",
          .courseStep = "Beyond the course: tensor cores",
          .courseOrder = 11,
          .sourceFile = "gpu/kernels/11_tensor_tf32.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kTensorTf32Kernel),
          .fusableOps = everyEpilogueOp(),
          .tensorCoresOfCompute = 80,
          .arithmetic = "TF32",
          .relativeTolerance = 2e-3,
      },
      {
          .id = "gpu-tensor-3xtf32",
          .displayName = "GPU tensor cores, 3xTF32",
          .description = "The TF32 tensor-core product with every input split in two TF32 parts and three products "
                         "summed: FP32-level accuracy at three times the tensor-core work.",
          .courseStep = "Beyond the course: tensor cores at FP32 accuracy",
          .courseOrder = 12,
          .sourceFile = "gpu/kernels/12_tensor_3xtf32.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kTensor3xTf32Kernel),
          .fusableOps = everyEpilogueOp(),
          .tensorCoresOfCompute = 80,
          .arithmetic = "3xTF32",
      },
      {
          .id = "gpu-whole-network",
          .displayName = "GPU whole network, one kernel",
          .description = "The whole network in one kernel, from the 8-bit images (resized as they are read) to the "
                         "probabilities: each block keeps its images' maps and the conv weights in shared memory, so "
                         "no layer's output reaches global memory; a batch too small to fill the GPU that way is "
                         "spread over every block, one layer at a time, with a grid sync between layers.",
          .courseStep = "Beyond the course: the whole network in one kernel",
          .courseOrder = 13,
          .sourceFile = "gpu/kernels/13_whole_network.cu",
          .kernel = CONVSCOPE_KERNEL_OF(kWholeNetworkKernel),
          .wholeNetwork = true,
          .network = CONVSCOPE_NETWORK_KERNEL_OF(kWholeNetworkNetwork),
      },
  };
  for (const Row& row : rows) registerConvVariant(variantOf(row));
  return true;
}();

}  // namespace
}  // namespace convscope::gpu
