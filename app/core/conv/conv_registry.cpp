#include "app/core/conv/conv_registry.h"

#include "app/core/conv/cpu_backends.h"
#include "app/core/util/error.h"
#include "gpu/gpu_device.h"
#include "gpu/gpu_runtime.h"

namespace convscope {
namespace {

std::string alwaysAvailable() {
  return {};
}

ConvVariant gpuVariant(std::string id, std::string name, std::string description, std::string courseStep,
                       std::string requirement = "CUDA GPU") {
  ConvVariant v{id,      std::move(name), std::move(description), std::move(courseStep), std::move(requirement),
                nullptr, nullptr};
  v.runsOnGpu = true;
  v.unavailableReason = [id]() -> std::string {
    if (!gpu::gpuDevice().usable) return gpu::gpuDevice().unusableReason;
    if (!gpu::hasGpuKernel(id)) return "this build has no kernel for it (cuDNN missing at build time?)";
    return {};
  };
  v.create = [id] { return gpu::makeHostConvBackend(id); };
  return v;
}

std::vector<ConvVariant> buildRegistry() {
  std::vector<ConvVariant> variants = {
      {"cpu-reference", "CPU reference",
       "Seven plain loops, one output at a time, accumulated in double: the yardstick for every other variant.",
       "CPU implementation", "CPU", alwaysAvailable, makeCpuReferenceConv},
      {"cpu-im2col-gemm", "CPU im2col + GEMM",
       "Unrolls receptive fields into a matrix so the convolution becomes one BLAS matrix product.",
       "Input unrolling (on the CPU)", "CPU", alwaysAvailable, makeCpuIm2colGemmConv},
  };
  // The course's GPU steps, in the order the course takes them; kernels in gpu/kernels/.
  const std::vector<ConvVariant> gpu = {
      gpuVariant("gpu-baseline", "GPU baseline",
                 "One thread per output element, reading inputs and weights straight from global memory.",
                 "Basic GPU convolution"),
      gpuVariant("gpu-tiled-shared", "GPU tiled, shared memory",
                 "Each block stages an input tile in shared memory, so neighbouring outputs reuse it instead of "
                 "re-reading global memory.",
                 "Tiled shared-memory convolution"),
      gpuVariant(
          "gpu-constant-weights", "GPU tiled + constant weights",
          "Shared-memory input tiles, with the weights in constant memory, broadcast to a whole warp in one read.",
          "Weight matrix in constant memory"),
      gpuVariant("gpu-unroll-gemm", "GPU unroll + GEMM",
                 "An unroll kernel writes the im2col matrix to global memory; a shared-memory tiled matrix multiply "
                 "does the rest.",
                 "Input unrolling + tiled matrix multiply"),
      gpuVariant("gpu-fused-unroll-gemm", "GPU fused unroll + GEMM",
                 "The unroll happens while the matrix-multiply tiles are loaded: no unrolled matrix in global memory.",
                 "Kernel fusion for unrolling and matrix multiply"),
      gpuVariant("gpu-atomics", "GPU channel reduction with atomics",
                 "Input channels are split across blocks whose partial sums are combined with atomicAdd.",
                 "Input channel reduction: atomics"),
      gpuVariant("gpu-per-layer", "GPU per-layer kernels",
                 "A different kernel and tile size for each layer shape: one for the 1-channel first layer, one for "
                 "multi-channel layers.",
                 "Multiple kernel implementations for different layer sizes"),
      gpuVariant("gpu-restrict-unroll", "GPU __restrict__ + unrolled",
                 "The per-layer kernels with __restrict__, const, compile-time kernel sizes and fully unrolled loops.",
                 "__restrict__, loop unrolling and compile-time sizes"),
      gpuVariant("cudnn", "cuDNN",
                 "cuDNN's forward convolution with the fastest algorithm it finds for the shape (FP32).",
                 "cuDNN baseline", "CUDA GPU + cuDNN"),
  };
  variants.insert(variants.end(), gpu.begin(), gpu.end());
  return variants;
}

}  // namespace

const std::vector<ConvVariant>& convVariants() {
  static const std::vector<ConvVariant> registry = buildRegistry();
  return registry;
}

const ConvVariant& findConvVariant(const std::string& id) {
  std::string known;
  for (const ConvVariant& v : convVariants()) {
    if (v.id == id) return v;
    known += (known.empty() ? "" : ", ") + v.id;
  }
  throw Error("unknown kernel variant '" + id + "' (known: " + known + ")");
}

std::unique_ptr<ConvBackend> createConvBackend(const std::string& id) {
  const ConvVariant& variant = findConvVariant(id);
  if (const std::string reason = variant.unavailableReason(); !reason.empty())
    throw Error("kernel variant '" + id + "' cannot run here: " + reason);
  return variant.create();
}

std::string defaultConvVariant() {
  // The fastest hand-written variant where a GPU can run it, else the fast CPU path.
  const ConvVariant& best = findConvVariant("gpu-restrict-unroll");
  return best.unavailableReason().empty() ? best.id : "cpu-im2col-gemm";
}

}  // namespace convscope
