// CONVSCOPE_HOST_DEVICE: a function both the host compiler and nvcc compile, for the host and the
// device alike (an activation's formula, the fair timing's input values, the tensor-core kernels'
// index arithmetic, which the host's tests check without a GPU). Inline in both.
#pragma once

#if defined(__CUDACC__)
#define CONVSCOPE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define CONVSCOPE_HOST_DEVICE inline
#endif
