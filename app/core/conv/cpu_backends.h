// Factories of the CPU conv backends, for the registry.
#pragma once

#include <memory>

#include "app/core/conv/conv_backend.h"

namespace convscope {

std::unique_ptr<ConvBackend> makeCpuReferenceConv();
std::unique_ptr<ConvBackend> makeCpuIm2colGemmConv();

}  // namespace convscope
