// cpu-reference: the course's CPU convolution, seven plain loops, one output element at a time.
// It accumulates in double so that it can serve as the yardstick every faster variant (CPU or
// GPU) is compared with; it handles every stride, padding, dilation and group count.
#include "app/core/conv/cpu_backends.h"

namespace convscope {
namespace {

class CpuReferenceConv final : public ConvBackend {
 public:
  void forward(const ConvProblem& p, const float* input, const float* weights, float* output) override {
    const int outH = p.outHeight();
    const int outW = p.outWidth();
    const int groupIn = p.inChannelsPerGroup();
    const int groupOut = p.outChannelsPerGroup();
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < p.batch; ++n)
      for (int m = 0; m < p.outChannels; ++m)
        for (int h = 0; h < outH; ++h)
          for (int w = 0; w < outW; ++w) {
            double sum = 0.0;
            const int firstChannel = m / groupOut * groupIn;  // output channel m reads its group's channels
            for (int c = 0; c < groupIn; ++c)
              for (int kh = 0; kh < p.kernelHeight; ++kh) {
                const int y = h * p.strideHeight + kh * p.dilationHeight - p.padTop;
                if (y < 0 || y >= p.inHeight) continue;
                for (int kw = 0; kw < p.kernelWidth; ++kw) {
                  const int x = w * p.strideWidth + kw * p.dilationWidth - p.padLeft;
                  if (x < 0 || x >= p.inWidth) continue;
                  sum +=
                      double{input[((int64_t{n} * p.inChannels + firstChannel + c) * p.inHeight + y) * p.inWidth + x]} *
                      double{weights[((int64_t{m} * groupIn + c) * p.kernelHeight + kh) * p.kernelWidth + kw]};
                }
              }
            output[((int64_t{n} * p.outChannels + m) * outH + h) * outW + w] = static_cast<float>(sum);
          }
  }
};

}  // namespace

ConvVariant cpuReferenceVariant() {
  ConvVariant row;
  row.id = "cpu-reference";
  row.displayName = "CPU reference";
  row.description =
      "Seven plain loops, one output at a time, accumulated in double: the yardstick for every other variant.";
  row.courseStep = "CPU implementation";
  row.courseOrder = 0;
  row.sourceFile = "app/core/conv/cpu_reference_conv.cpp";
  row.createHostBackend = [] { return std::make_unique<CpuReferenceConv>(); };
  return row;
}

}  // namespace convscope
