#include "gpu/user_kernel_inspect.h"

#include "app/core/device/gpu_platform.h"

#ifdef CONVSCOPE_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace convscope::gpu {

std::string defaultInspectionArchitecture() {
  const GpuInfo& gpu = gpuInfo();
  if (gpu.usable) return "sm_" + std::to_string(gpu.computeMajor) + std::to_string(gpu.computeMinor);
  return "sm_90";
}

namespace {

#ifdef CONVSCOPE_HAVE_CUDA
// The driver's figures for the compiled kernel on the GPU here: false when it cannot say (then
// the compiler's figures stand). The library is unloaded again: this only looks.
bool askTheDriver(UserKernelInspection& inspection, int threadsPerBlock) {
  cudaLibrary_t library = nullptr;
  const CompiledUserKernel& k = inspection.kernel;
  if (cudaLibraryLoadData(&library, k.image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  bool ok = false;
  cudaKernel_t kernel = nullptr;
  cudaFuncAttributes attributes{};
  int blocks = 0;
  if (cudaLibraryGetKernel(&kernel, library, k.loweredName.c_str()) == cudaSuccess &&
      cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel)) == cudaSuccess &&
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(kernel), threadsPerBlock,
                                                    0) == cudaSuccess) {
    KernelResources& r = inspection.resources;
    r.registers = attributes.numRegs;
    r.sharedStaticBytes = static_cast<int>(attributes.sharedSizeBytes);
    r.localBytes = static_cast<int>(attributes.localSizeBytes);
    r.constantBytes = static_cast<int>(attributes.constSizeBytes);
    r.found = true;
    const GpuInfo& gpu = gpuInfo();
    int device = 0, maxThreadsPerSm = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&maxThreadsPerSm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    // The per-resource counts come from the table where it has this GPU's row; the driver's
    // count is the one that holds.
    BlockOccupancy o;
    if (const auto limits = architectureLimits(k.architecture)) o = computeOccupancy(*limits, threadsPerBlock, r);
    o.threadsPerBlock = threadsPerBlock;
    o.warpsPerBlock = (threadsPerBlock + 31) / 32;
    o.blocksPerSm = blocks;
    o.activeWarps = blocks * o.warpsPerBlock;
    o.maxWarps = maxThreadsPerSm / 32;
    o.computed = false;
    if (o.limitedBy.empty() || blocks == 0) o.limitedBy = blocks == 0 ? "no block fits" : "the driver does not say";
    inspection.occupancy = o;
    inspection.figuresFrom = "the driver on " + gpu.name;
    inspection.occupancyFrom = "the driver on " + gpu.name + " (cudaOccupancyMaxActiveBlocksPerMultiprocessor)";
    ok = true;
  }
  cudaGetLastError();
  cudaLibraryUnload(library);
  return ok;
}
#endif

}  // namespace

UserKernelInspection inspectUserKernel(const UserKernelSource& source, const std::string& architecture) {
  UserKernelBuildOptions options;
  options.architecture = architecture.empty() ? defaultInspectionArchitecture() : architecture;
  options.ptxasInfo = true;
  options.keepPtx = true;
  return inspectCompiledUserKernel(compileUserKernel(source, options));
}

UserKernelInspection inspectCompiledUserKernel(const CompiledUserKernel& kernel) {
  UserKernelInspection inspection;
  inspection.kernel = kernel;
  if (!inspection.kernel.ok()) return inspection;
  const std::string& architecture = kernel.architecture;
  const int threads = kernel.source.launch.blockX * kernel.source.launch.blockY;
#ifdef CONVSCOPE_HAVE_CUDA
  const GpuInfo& gpu = gpuInfo();
  if (gpu.usable && architecture == defaultInspectionArchitecture() && askTheDriver(inspection, threads))
    return inspection;
#endif
  inspection.resources = parsePtxasReport(inspection.kernel.log, inspection.kernel.loweredName);
  inspection.figuresFrom = "the compiler (ptxas for " + architecture + ")";
  if (const auto limits = architectureLimits(architecture)) {
    inspection.occupancy = computeOccupancy(*limits, threads, inspection.resources);
    inspection.occupancyFrom = "computed from " + architecture +
                               "'s limits per multiprocessor (no GPU of that architecture here), with the largest "
                               "shared memory carveout";
  } else {
    std::string known;
    for (const std::string& name : knownArchitectures()) known += (known.empty() ? "" : ", ") + name;
    inspection.occupancyFrom =
        "not computed: ConvScope has no table of " + architecture + "'s limits (it has " + known + ")";
  }
  return inspection;
}

}  // namespace convscope::gpu
