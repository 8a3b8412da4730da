// cpu-im2col-gemm: the fast CPU path. Unrolls the receptive fields of a chunk of images into
// one matrix (im2col) so the whole convolution becomes one large matrix product, which the BLAS
// runs near the cores' peak. The same idea as the course's GPU unroll kernel, on the CPU.
#include <algorithm>
#include <vector>

#include "conv/cpu_backends.h"
#include "util/gemm.h"

namespace convscope {
namespace {

class CpuIm2colGemmConv final : public ConvBackend {
 public:
  void forward(const ConvProblem& p, const float* input, const float* weights, float* output) override {
    const int64_t pixels = int64_t{p.outHeight()} * p.outWidth();
    const int64_t rows = int64_t{p.inChannels} * p.kernelHeight * p.kernelWidth;
    // Each thread unrolls a few images at a time into its own matrix of about 1 MB, small
    // enough to stay in its core's cache between the unroll and the product.
    const int64_t chunk = std::clamp<int64_t>((int64_t{256} << 10) / std::max<int64_t>(1, rows * pixels), 1, 64);
    const int64_t chunks = (p.batch + chunk - 1) / chunk;
#pragma omp parallel
    {
      std::vector<float> columns(static_cast<size_t>(rows * chunk * pixels));
      std::vector<float> product(static_cast<size_t>(int64_t{p.outChannels} * chunk * pixels));
#pragma omp for schedule(dynamic)
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t first = c * chunk;
        const int64_t images = std::min<int64_t>(chunk, p.batch - first);
        const int64_t cols = images * pixels;
        unroll(p, input, first, images, cols, columns.data());
        sgemm(false, false, p.outChannels, static_cast<int>(cols), static_cast<int>(rows), 1.0f, weights,
              static_cast<int>(rows), columns.data(), static_cast<int>(cols), 0.0f, product.data(),
              static_cast<int>(cols));
        // product is [M][image][pixel]; the output wants [image][M][pixel].
        for (int64_t i = 0; i < images; ++i)
          for (int m = 0; m < p.outChannels; ++m)
            std::copy_n(product.data() + m * cols + i * pixels, pixels,
                        output + ((first + i) * p.outChannels + m) * pixels);
      }
    }
  }

 private:
  // columns[(c,kh,kw)][(image, h, w)] = input value under that kernel tap, 0 in the padding.
  static void unroll(const ConvProblem& p, const float* input, int64_t first, int64_t images,
                     int64_t cols, float* columns) {
    const int outH = p.outHeight();
    const int outW = p.outWidth();
    for (int c = 0; c < p.inChannels; ++c)
      for (int kh = 0; kh < p.kernelHeight; ++kh)
        for (int kw = 0; kw < p.kernelWidth; ++kw) {
          float* row = columns + ((int64_t{c} * p.kernelHeight + kh) * p.kernelWidth + kw) * cols;
          for (int64_t i = 0; i < images; ++i) {
            const float* plane = input + ((first + i) * p.inChannels + c) * int64_t{p.inHeight} * p.inWidth;
            for (int h = 0; h < outH; ++h) {
              const int y = h * p.strideHeight + kh - p.padTop;
              float* dst = row + (i * outH + h) * outW;
              if (y < 0 || y >= p.inHeight) {
                std::fill_n(dst, outW, 0.0f);
                continue;
              }
              for (int w = 0; w < outW; ++w) {
                const int x = w * p.strideWidth + kw - p.padLeft;
                dst[w] = (x >= 0 && x < p.inWidth) ? plane[int64_t{y} * p.inWidth + x] : 0.0f;
              }
            }
          }
        }
  }
};

}  // namespace

std::unique_ptr<ConvBackend> makeCpuIm2colGemmConv() { return std::make_unique<CpuIm2colGemmConv>(); }

}  // namespace convscope
