// What the Hopper copy engine (TMA) takes to move the bytes that its im2col mode would move for
// the course's conv2 at batch 10,000 -- measured, where docs/performance.md first had only the
// byte count. In im2col mode a tensor map copies each k-step's tile of the im2col matrix from
// global memory: for a 7x7 kernel, 49 copies a 64-row tile set, each input copied once per tap.
// This probe issues the same number and size of bulk copies (cp.async.bulk, one 16 KB copy a tap
// and image: 256 rows x 16 channels x 4 bytes, as the wgmma tiles of conv2 take them), from the
// image's region of an NHWC tensor, into a ring of shared-memory stages, and times them with CUDA
// events. Contiguous copies are kinder than the im2col gather, so the time is a lower bound of
// the im2col route's copy time; the same probe copies each image once (what ConvScope's
// shared-operand path stages) for comparison.
//
//   convscope-tma-copy-probe [batch]     (compute capability 9.0 or later)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kMaxStages = 8;                        // copies in flight a block, at most
constexpr int kTapBytes = 256 * 16 * 4;              // one tap's im2col tile set of an image
constexpr int kImageBytes = 21 * 21 * 12 * 4;        // conv2's input image, NHWC
constexpr int kPaddedImageBytes = 21 * 21 * 16 * 4;  // channels padded to a whole k-step
constexpr int kTaps = 49;
constexpr int kRepeats = 20;

bool check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "tma-copy-probe: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

// One block a multiprocessor; thread 0 issues the copies and waits for them. `copies` copies of
// `bytes` an image, copy t starting `stride` * t bytes into the image (wrapped into its padded
// region, 16-byte aligned).
__global__ void bulkCopies(const char* images, int batch, int copies, int bytes, int stride, int stages, int* sink) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) char buffers[];
  __shared__ __align__(8) unsigned long long barriers[kMaxStages];
  if (threadIdx.x != 0) return;
  const unsigned barrierBase = static_cast<unsigned>(__cvta_generic_to_shared(barriers));
  const unsigned stageBase = static_cast<unsigned>(__cvta_generic_to_shared(buffers));
  for (int s = 0; s < stages; ++s) asm volatile("mbarrier.init.shared.b64 [%0], 1;\n" ::"r"(barrierBase + 8 * s));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  int issued = 0, checksum = 0;
  const auto wait = [&](int copy) {
    const unsigned barrier = barrierBase + 8 * (copy % stages);
    const unsigned parity = (copy / stages) & 1;
    unsigned done = 0;
    while (!done)
      asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                   : "=r"(done)
                   : "r"(barrier), "r"(parity)
                   : "memory");
    checksum += buffers[(copy % stages) * bytes];
  };
  for (int image = blockIdx.x; image < batch; image += gridDim.x)
    for (int t = 0; t < copies; ++t, ++issued) {
      if (issued >= stages) wait(issued - stages);
      const int offset = (stride * t) % (kPaddedImageBytes - bytes + 16) / 16 * 16;
      const char* source = images + static_cast<long long>(image) * kPaddedImageBytes + offset;
      const unsigned barrier = barrierBase + 8 * (issued % stages);
      const unsigned destination = stageBase + (issued % stages) * bytes;
      asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes) : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                       destination),
                   "l"(source), "r"(bytes), "r"(barrier)
                   : "memory");
    }
  for (int copy = max(0, issued - stages); copy < issued; ++copy) wait(copy);
  if (checksum == 0x7fffffff) *sink = checksum;  // keeps the waits' reads
#else
  (void)images, (void)batch, (void)copies, (void)bytes, (void)stride, (void)stages, (void)sink;
#endif
}

struct Timing {
  float median, minimum;
};

Timing timeCopies(const char* images, int batch, int copies, int bytes, int stride, int stages, int* sink, int blocks) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start), cudaEventCreate(&stop);
  const size_t shared = size_t{static_cast<size_t>(stages)} * bytes;
  cudaFuncSetAttribute(bulkCopies, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
  std::vector<float> ms;
  for (int r = -3; r < kRepeats; ++r) {
    cudaEventRecord(start);
    bulkCopies<<<blocks, 32, shared>>>(images, batch, copies, bytes, stride, stages, sink);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float elapsed = 0;
    cudaEventElapsedTime(&elapsed, start, stop);
    if (r >= 0) ms.push_back(elapsed);
  }
  cudaEventDestroy(start), cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

}  // namespace

int main(int argc, char** argv) {
  const int batch = argc > 1 ? std::atoi(argv[1]) : 10000;
  if (batch <= 0 || batch > 1000000) {
    std::fprintf(stderr, "tma-copy-probe: the batch must be 1 to 1,000,000 (got %s)\n", argv[1]);
    return 2;
  }
  int device = 0;
  cudaDeviceProp prop{};
  if (!check(cudaGetDevice(&device), "no GPU") || !check(cudaGetDeviceProperties(&prop, device), "device")) return 1;
  if (prop.major < 9) {
    std::fprintf(stderr, "tma-copy-probe: %s is compute capability %d.%d; bulk copies need 9.0 or later\n", prop.name,
                 prop.major, prop.minor);
    return 1;
  }
  char* images = nullptr;
  int* sink = nullptr;
  const size_t total = static_cast<size_t>(batch) * kPaddedImageBytes;
  if (!check(cudaMalloc(&images, total), "allocating the images") || !check(cudaMalloc(&sink, 4), "allocating"))
    return 1;
  cudaMemset(images, 1, total);
  const int blocks = prop.multiProcessorCount;
  const int imageCopyBytes = (kImageBytes + 15) / 16 * 16;
  std::printf("device: %s, %d multiprocessors, one block each\n", prop.name, blocks);
  std::printf("batch %d, medians of %d (min in brackets), CUDA events:\n", batch, kRepeats);
  for (const int stages : {4, kMaxStages}) {
    // Each tap's tile set starts one pixel (64 bytes) further on, as a 7x7 window's taps do.
    const Timing im2col = timeCopies(images, batch, kTaps, kTapBytes, 64, stages, sink, blocks);
    const Timing once = timeCopies(images, batch, 1, imageCopyBytes, 0, stages, sink, blocks);
    if (!check(cudaGetLastError(), "the copies") || !check(cudaDeviceSynchronize(), "the copies")) return 1;
    const double im2colBytes = double(batch) * kTaps * kTapBytes;
    const double onceBytes = double(batch) * imageCopyBytes;
    std::printf("  %d copies in flight a multiprocessor:\n", stages);
    std::printf("    im2col's traffic: %d bulk copies of %d bytes an image (%.2f GB): %.3f ms (%.3f), %.0f GB/s\n",
                kTaps, kTapBytes, im2colBytes / 1e9, im2col.median, im2col.minimum, im2colBytes / im2col.median / 1e6);
    std::printf("    each image once: 1 bulk copy of %d bytes an image (%.2f GB): %.3f ms (%.3f), %.0f GB/s\n",
                imageCopyBytes, onceBytes / 1e9, once.median, once.minimum, onceBytes / once.median / 1e6);
  }
  cudaFree(images), cudaFree(sink);
  return 0;
}
