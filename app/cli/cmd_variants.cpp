#include <cstdio>
#include <iostream>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"
#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/util/gemm.h"

namespace convscope::cli {

int runVariants(const std::vector<std::string>& tokens) {
  if (!tokens.empty() && (tokens[0] == "--help" || tokens[0] == "-h")) {
    std::cout << "usage: convscope-cli variants\n\nLists every convolution kernel variant (the ids --variant takes),\n"
                 "what it demonstrates, and whether it can run on this machine.\n";
    return 0;
  }
  Args(tokens, {}, {});
  const GpuInfo& device = gpuInfo();
  if (device.usable)
    std::printf("GPU:  %s (compute %d.%d, %d SMs, %.0f GiB; driver %s, runtime %s)\n", device.name.c_str(),
                device.computeMajor, device.computeMinor, device.multiprocessors, device.memoryGiB,
                device.driverVersion.c_str(), device.runtimeVersion.c_str());
  else
    std::printf("GPU:  none (%s): CPU only\n", device.unusableReason.c_str());
  std::printf("BLAS: %s\n\n", gemmImplementation());
  std::printf("%-24s %-10s %-12s %s\n", "ID", "AVAILABLE", "RUNS ON", "DESCRIPTION");
  for (const ConvVariant& v : convVariants()) {
    const std::string reason = v.unavailableReason();
    std::printf("%-24s %-10s %-12s %s\n", v.id.c_str(), reason.empty() ? "yes" : "no",
                v.requirements.describe().c_str(), v.description.c_str());
    std::printf("%-24s %-10s %-12s course step: %s%s\n", "", "", "", v.courseStep.c_str(),
                reason.empty() ? "" : ("; unavailable: " + reason).c_str());
  }
  std::printf("\nDefault: %s\n", defaultConvVariant().c_str());
  return 0;
}

}  // namespace convscope::cli
