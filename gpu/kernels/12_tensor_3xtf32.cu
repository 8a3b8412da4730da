// Beyond the course, step 12, tensor cores at FP32 accuracy (3xTF32): step 11's implicit matrix
// product with each input split into its TF32 rounding and the TF32 rounding of the rest, and
// three products summed (big*small + small*big + big*big; small*small, ~2^-22 relative, is left
// out). The products come out about as exact as FP32's, for three times the tensor-core work and
// twice the conversions, so the results agree with the FP32 variants' to FP32 tolerance.
//
// PREDICTION (H100 SXM, batch 10,000, fused as the plan runs course-high): three mma per
// k-step and tile make the tensor cores, not shared memory, the bound: conv2 ~3 x 0.25 = 0.75 ms
// at mma.sync's TF32 rate, conv1 ~0.15 ms; sum ~0.9 ms, under the exact FP32 kernels' 2.1 ms.
#include "gpu/kernels/implicit_gemm_mma.cuh"

namespace convscope::gpu {
namespace {

using implicit_gemm::Precision;
constexpr auto kSync = implicit_gemm::MmaPath::kSync;
constexpr auto kWarpgroup = implicit_gemm::MmaPath::kWarpgroup;

constexpr int kSyncMTiles = 2;       // a warp computes 32 pixels x 32 maps: three times the mma per load
constexpr int kWarpgroupMTiles = 2;  // wgmma: each warp of a warpgroup 32 pixels, three products a k-step
constexpr const char* kName = "conv_implicit_gemm_3xtf32";

template <implicit_gemm::MmaPath Path, int NTiles>
__global__ void __launch_bounds__(32 * implicit_gemm::kMaxWarps, 1)
    conv_implicit_gemm_3xtf32(const implicit_gemm::MmaConvArgs args) {
  implicit_gemm::runImplicitGemm<Precision::kTf32x3, Path, Path == kSync ? kSyncMTiles : kWarpgroupMTiles, NTiles>(
      args);
}

// Per path, one kernel per n-tiles a warp computes (1 to 4: 8 to 32 maps), chosen by the layer's maps.
using Kernel = void (*)(implicit_gemm::MmaConvArgs);
constexpr implicit_gemm::MmaKernels<Kernel> kKernels{
    {conv_implicit_gemm_3xtf32<kSync, 1>, conv_implicit_gemm_3xtf32<kSync, 2>, conv_implicit_gemm_3xtf32<kSync, 3>,
     conv_implicit_gemm_3xtf32<kSync, 4>},
    kSyncMTiles,
    {conv_implicit_gemm_3xtf32<kWarpgroup, 1>, conv_implicit_gemm_3xtf32<kWarpgroup, 2>,
     conv_implicit_gemm_3xtf32<kWarpgroup, 3>, conv_implicit_gemm_3xtf32<kWarpgroup, 4>},
    kWarpgroupMTiles};

std::string unsupported(const ConvProblem& p) {
  return implicit_gemm::implicitGemmUnsupportedReason(p, Precision::kTf32x3, kKernels);
}

std::vector<KernelLaunchGeometry> geometry(const ConvProblem& p) {
  return {implicit_gemm::implicitGemmGeometry(p, kName, Precision::kTf32x3, kKernels)};
}

void run(Device& device, const ConvProblem& p, const float* input, const float* weights, float* output,
         const ConvEpilogue& epilogue) {
  implicit_gemm::launchImplicitGemm(ConvLaunch{p, input, weights, output, contextOf(device)}, epilogue, kKernels,
                                    Precision::kTf32x3, kName);
}

}  // namespace

extern const GpuKernel kTensor3xTf32Kernel{unsupported, geometry, run, implicit_gemm::fusesStep};

}  // namespace convscope::gpu
