// cpu-im2col-gemm: the fast CPU path. Unrolls the receptive fields of a chunk of images into
// one matrix (im2col) so the whole convolution becomes one large matrix product, which the BLAS
// runs near the cores' peak. The same idea as the course's GPU unroll kernel, on the CPU. The
// bias, activation and pooling the plan hands it run on each chunk's product while it is in cache.
// A grouped convolution is one product per group (its channels unrolled, its filters' rows of the
// weights); dilation only spaces the taps the unrolling reads.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "app/core/conv/cpu_backends.h"
#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"
#include "app/core/util/gemm.h"
#include "app/core/util/host_epilogue.h"
#include "app/core/util/input_file.h"
#include "app/core/util/memory_limit.h"
#include "app/core/util/omp_exceptions.h"

namespace convscope {
namespace {

class CpuIm2colGemmConv final : public ConvBackend {
 public:
  int64_t workspaceBytes(const ConvProblem& p) const override {
    const Plan plan = planFor(p);
    return saturatingMul(saturatingMul(plan.threads, plan.floatsPerThread()), sizeof(float));
  }

  void forward(const ConvProblem& p, const float* input, const float* weights, float* output) override {
    run(p, input, weights, output, ConvEpilogue{});
  }

  void forwardFused(const ConvProblem& p, const float* input, const float* weights, float* output,
                    const ConvEpilogue& epilogue) override {
    run(p, input, weights, output, epilogue);
  }

 private:
  void run(const ConvProblem& p, const float* input, const float* weights, float* output, const ConvEpilogue& e) {
    const Plan plan = planFor(p);
    // Every thread's matrices are allocated here, before the parallel region: an exception
    // (std::bad_alloc) thrown inside one cannot be caught outside it and ends the process.
    const int64_t bytes = workspaceBytes(p);
    const MemoryLimit limit = memoryLimit();
    if (bytes > limit.bytes)
      throw Error("cpu-im2col-gemm: the im2col workspace for " + p.describe() + " needs " + formatBytes(bytes) +
                  "; the limit is " + formatBytes(limit.bytes) + " (" + limit.origin + ")");
    std::vector<float> workspace(static_cast<size_t>(plan.threads * plan.floatsPerThread()));
    const int64_t pixels = plan.pixels;
    const int64_t rows = plan.rows;
    const int64_t chunk = plan.chunk;
    const int64_t pooledPixels = e.hasPool ? int64_t{e.pool.outHeight} * e.pool.outWidth : 0;
    OmpExceptions errors;
#pragma omp parallel num_threads(static_cast <int>(plan.threads))
    {
      float* columns = workspace.data() + omp_get_thread_num() * plan.floatsPerThread();
      float* product = columns + rows * chunk * pixels;
#pragma omp for schedule(dynamic)
      for (int64_t c = 0; c < plan.chunks; ++c)
        errors.run([&] {
          const int64_t first = c * chunk;
          const int64_t images = std::min<int64_t>(chunk, p.batch - first);
          const int64_t cols = images * pixels;
          const int groupOut = p.outChannelsPerGroup();
          for (int g = 0; g < p.group; ++g) {
            unroll(p, input, g * p.inChannelsPerGroup(), first, images, cols, columns);
            sgemm(false, false, groupOut, static_cast<int>(cols), static_cast<int>(rows), 1.0f,
                  weights + int64_t{g} * groupOut * rows, static_cast<int>(rows), columns, static_cast<int>(cols), 0.0f,
                  product + int64_t{g} * groupOut * cols, static_cast<int>(cols));
          }
          // product is [M][image][pixel]; the output wants [image][M][pixel]. The epilogue runs on
          // each plane on the way, while the product is still in this core's cache.
          for (int64_t i = 0; i < images; ++i)
            for (int m = 0; m < p.outChannels; ++m) {
              float* plane = product + m * cols + i * pixels;
              if (e.bias)
                for (int64_t k = 0; k < pixels; ++k) plane[k] += e.bias[m];
              if (e.hasActivation) applyActivation(e.activation, plane, plane, pixels);
              const int64_t outPlane = (first + i) * p.outChannels + m;
              if (e.hasPool)
                poolPlanes(e.pool, e.maxPool, plane, output + outPlane * pooledPixels, 0, 1);
              else
                std::copy_n(plane, pixels, output + outPlane * pixels);
            }
        });
    }
    errors.rethrow();
  }

  struct Plan {
    int64_t pixels = 0;  // output pixels per image and channel
    int64_t rows = 0;    // C/group x KH x KW: one row of the unrolled matrix per kernel tap
    int64_t chunk = 1;   // images unrolled together
    int64_t chunks = 0;
    int64_t threads = 1;
    int64_t outChannels = 0;
    int64_t floatsPerThread() const { return saturatingMul(saturatingMul(rows + outChannels, chunk), pixels); }
  };

  static Plan planFor(const ConvProblem& p) {
    Plan plan;
    plan.pixels = int64_t{p.outHeight()} * p.outWidth();
    plan.rows = int64_t{p.inChannelsPerGroup()} * p.kernelHeight * p.kernelWidth;
    plan.outChannels = p.outChannels;
    // Each thread unrolls a few images at a time into its own matrix of about 1 MB, small
    // enough to stay in its core's cache between the unroll and the product.
    plan.chunk =
        std::clamp<int64_t>((int64_t{256} << 10) / std::max<int64_t>(1, saturatingMul(plan.rows, plan.pixels)), 1, 64);
    plan.chunks = (p.batch + plan.chunk - 1) / plan.chunk;
    plan.threads = std::clamp<int64_t>(plan.chunks, 1, omp_get_max_threads());
    return plan;
  }

  // columns[(c,kh,kw)][(image, h, w)] = input value under that kernel tap, 0 in the padding, for
  // the channels of one group: c counts from `firstChannel`.
  static void unroll(const ConvProblem& p, const float* input, int firstChannel, int64_t first, int64_t images,
                     int64_t cols, float* columns) {
    const int outH = p.outHeight();
    const int outW = p.outWidth();
    for (int c = 0; c < p.inChannelsPerGroup(); ++c)
      for (int kh = 0; kh < p.kernelHeight; ++kh)
        for (int kw = 0; kw < p.kernelWidth; ++kw) {
          float* row = columns + ((int64_t{c} * p.kernelHeight + kh) * p.kernelWidth + kw) * cols;
          for (int64_t i = 0; i < images; ++i) {
            const float* plane =
                input + ((first + i) * p.inChannels + firstChannel + c) * int64_t{p.inHeight} * p.inWidth;
            for (int h = 0; h < outH; ++h) {
              const int y = h * p.strideHeight + kh * p.dilationHeight - p.padTop;
              float* dst = row + (i * outH + h) * outW;
              if (y < 0 || y >= p.inHeight) {
                std::fill_n(dst, outW, 0.0f);
                continue;
              }
              for (int w = 0; w < outW; ++w) {
                const int x = w * p.strideWidth + kw * p.dilationWidth - p.padLeft;
                dst[w] = (x >= 0 && x < p.inWidth) ? plane[int64_t{y} * p.inWidth + x] : 0.0f;
              }
            }
          }
        }
  }
};

}  // namespace

ConvVariant cpuIm2colGemmVariant() {
  ConvVariant row;
  row.id = "cpu-im2col-gemm";
  row.displayName = "CPU im2col + GEMM";
  row.description = "Unrolls receptive fields into a matrix so the convolution becomes one BLAS matrix product.";
  row.courseStep = "Input unrolling (on the CPU)";
  row.courseOrder = 0;  // the CPU implementation, made fast; listed after the reference
  row.sourceFile = "app/core/conv/cpu_im2col_gemm_conv.cpp";
  row.fusableOps = everyEpilogueOp();
  row.createHostBackend = [] { return std::make_unique<CpuIm2colGemmConv>(); };
  return row;
}

}  // namespace convscope
