// The rows of the CPU variants (each defined in its own file), installed by the variant table.
#pragma once

#include "app/core/conv/variant_table.h"

namespace convscope {

ConvVariant cpuReferenceVariant();   // cpu_reference_conv.cpp
ConvVariant cpuIm2colGemmVariant();  // cpu_im2col_gemm_conv.cpp
ConvVariant cpuOneDnnVariant();      // cpu_onednn_conv.cpp

}  // namespace convscope
