// Beyond the course, step 11, tensor cores: the convolution as an implicit matrix product on
// TF32 tensor cores (mma.sync m16n8k8), with the bias, the activation and a 2x2 pooling applied
// to the accumulators (implicit_gemm_mma.cuh has the mapping). TF32 keeps 10 bits of each input's
// mantissa: the products are exact to about 2^-11 relative, enough for a classifier (the
// benchmark counts how many of the 10,000 test predictions change), not for an FP32 comparison.
//
// PREDICTION (H100 SXM, batch 10,000, fused with tanh and pooling as the plan runs course-high):
//   conv2 is 64 GFLOP of padded product (2.0 M pixels of whole windows x 24 maps x 592 taps):
//   at mma.sync's TF32 rate (about half the 495 TFLOP/s that wgmma reaches) ~0.25 ms, less the
//   skipped pixels; each k-step of a warp's 64 x 32 tile issues 16 mma against 26 shared loads,
//   so the shared-memory pipe, not the tensor cores, may bound it (~0.3 ms). conv1 writes only
//   its pooled output (212 MB instead of 847 MB) and reads 92 MB: ~0.1 ms. Sum ~0.4 ms.
#include "gpu/kernels/implicit_gemm_mma.cuh"
#include "gpu/kernels/wgmma_shared_operands.cuh"

namespace convscope::gpu {
namespace {

using implicit_gemm::Precision;
constexpr auto kSync = implicit_gemm::MmaPath::kSync;
constexpr auto kWarpgroup = implicit_gemm::MmaPath::kWarpgroup;

constexpr int kSyncMTiles = 4;       // mma.sync: a warp computes 64 pixels x up to 32 maps
constexpr int kWarpgroupMTiles = 2;  // wgmma: each warp of a warpgroup 32 pixels (the group 128)
constexpr const char* kName = "conv_implicit_gemm_tf32";

template <implicit_gemm::MmaPath Path, int NTiles>
__global__ void __launch_bounds__(32 * implicit_gemm::kMaxWarps, 1)
    conv_implicit_gemm_tf32(const implicit_gemm::MmaConvArgs args) {
  implicit_gemm::runImplicitGemm<Precision::kTf32, Path, Path == kSync ? kSyncMTiles : kWarpgroupMTiles, NTiles>(args);
}

// Per path, one kernel per n-tiles a warp computes (1 to 4: 8 to 32 maps), chosen by the layer's maps.
using Kernel = void (*)(implicit_gemm::MmaConvArgs);
constexpr implicit_gemm::MmaKernels<Kernel> kKernels{
    {conv_implicit_gemm_tf32<kSync, 1>, conv_implicit_gemm_tf32<kSync, 2>, conv_implicit_gemm_tf32<kSync, 3>,
     conv_implicit_gemm_tf32<kSync, 4>},
    kSyncMTiles,
    {conv_implicit_gemm_tf32<kWarpgroup, 1>, conv_implicit_gemm_tf32<kWarpgroup, 2>,
     conv_implicit_gemm_tf32<kWarpgroup, 3>, conv_implicit_gemm_tf32<kWarpgroup, 4>},
    kWarpgroupMTiles};

std::string unsupported(const ConvProblem& p) {
  return implicit_gemm::implicitGemmUnsupportedReason(p, Precision::kTf32, kKernels);
}

std::vector<KernelLaunchGeometry> geometry(const ConvProblem& p) {
  KernelLaunchGeometry shared;
  if (implicit_gemm::sharedOperandsGeometry(p, "conv_shared_operands_tf32", shared)) return {shared};
  return {implicit_gemm::implicitGemmGeometry(p, kName, Precision::kTf32, kKernels)};
}

void run(Device& device, const ConvProblem& p, const float* input, const float* weights, float* output,
         const ConvEpilogue& epilogue) {
  const ConvLaunch launch{p, input, weights, output, contextOf(device)};
  // On an H100, the layers with four or more channels: both operands from shared memory.
  if (implicit_gemm::launchSharedOperands(launch, epilogue, kName)) return;
  implicit_gemm::launchImplicitGemm(launch, epilogue, kKernels, Precision::kTf32, kName);
}

}  // namespace

extern const GpuKernel kTensorTf32Kernel{unsupported, geometry, run, implicit_gemm::fusesStep};

}  // namespace convscope::gpu
