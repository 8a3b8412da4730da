// The GPU variants of the registry, by id. Names and descriptions live in the registry itself
// (app/core/conv/conv_registry.cpp); a test checks the two agree.
#include <vector>

#ifdef CONVSCOPE_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "gpu/gpu_runtime.h"
#include "gpu/kernels/conv_kernels.h"

namespace convscope::gpu {

const ConvKernel* findConvKernel(const std::string& id) {
  static const std::vector<const ConvKernel*> kernels = {
      &kConvBaseline,        &kConvTiledShared, &kConvConstantWeights, &kConvUnrollGemm,
      &kConvFusedUnrollGemm, &kConvAtomics,     &kConvPerLayer,        &kConvRestrictUnroll,
#ifdef CONVSCOPE_HAVE_CUDNN
      &kConvCudnn,
#endif
  };
  for (const ConvKernel* kernel : kernels)
    if (id == kernel->id) return kernel;
  return nullptr;
}

}  // namespace convscope::gpu

bool convscope::gpu::hasGpuKernel(const std::string& variantId) {
  return findConvKernel(variantId) != nullptr;
}

std::string convscope::gpu::cudnnVersion() {
#ifdef CONVSCOPE_HAVE_CUDNN
  const size_t v = cudnnGetVersion();  // e.g. 91300 for 9.13.0
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
#else
  return {};
#endif
}
