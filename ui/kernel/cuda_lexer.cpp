#include "ui/kernel/cuda_lexer.h"

#include <QByteArray>

namespace convscope::ui {
namespace {

// Space-separated, as Scintilla wants its keyword lists.
constexpr char kCudaQualifiersAndTypes[] =
    " __global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ __noinline__"
    " __forceinline__ __launch_bounds__ __align__ __grid_constant__"
    " dim3 char1 char2 char3 char4 uchar1 uchar2 uchar3 uchar4 short2 short4 int2 int3 int4 uint2 uint3"
    " uint4 long2 long4 float1 float2 float3 float4 double2 double4 half half2 __half __half2"
    " __nv_bfloat16 size_t";

constexpr char kCudaBuiltIns[] =
    "threadIdx blockIdx blockDim gridDim warpSize"
    " __syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp __threadfence"
    " __threadfence_block __threadfence_system atomicAdd atomicSub atomicExch atomicMin atomicMax"
    " atomicInc atomicDec atomicCAS atomicAnd atomicOr atomicXor __shfl_sync __shfl_up_sync"
    " __shfl_down_sync __shfl_xor_sync __ballot_sync __any_sync __all_sync __activemask __ldg"
    " __fmaf_rn __fmul_rn __fadd_rn __expf __logf __sinf __cosf __powf __fdividef __saturatef"
    " fmaf fminf fmaxf fabsf sqrtf rsqrtf expf logf min max __float2half __half2float"
    " printf assert __trap __brkpt clock clock64";

}  // namespace

CudaLexer::CudaLexer(QObject* parent) : QsciLexerCPP(parent) {}

const char* CudaLexer::keywords(int set) const {
  if (set == 1) {
    // The C++ lexer's own list, then CUDA's; built once (the lexer keeps the pointer).
    static const QByteArray cppAndCuda = QByteArray(QsciLexerCPP::keywords(1)) + kCudaQualifiersAndTypes;
    return cppAndCuda.constData();
  }
  if (set == 2) return kCudaBuiltIns;
  return QsciLexerCPP::keywords(set);
}

}  // namespace convscope::ui
