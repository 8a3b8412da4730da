// libFuzzer target: arbitrary bytes as an ONNX model. Loading must either succeed or throw
// convscope::Error; any other exception, crash, sanitizer report, hang or allocation over the
// RSS limit is a finding. A model that loads as an image classifier and is cheap enough is also
// run on one blank image with both CPU backends, so the operators' arithmetic is exercised on
// every shape the loader lets through.
#include <cstddef>
#include <cstdint>
#include <string>

#include "app/core/engine/engine.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<const convscope::Model> model;
  try {
    model = convscope::loadOnnxModelFromBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
  } catch (const convscope::Error&) {
    return 0;
  }
  try {
    int64_t flops = 0;
    for (const convscope::LayerInfo& layer : model->layers()) flops = convscope::saturatingAdd(flops, layer.flops);
    const convscope::ValueInfo& input = model->imageInput();
    // Keep each run well inside -timeout and -rss_limit_mb: a few MFLOP and 64 MB.
    if (flops > 20'000'000) return 0;
    for (const char* variant : {"cpu-reference", "cpu-im2col-gemm"}) {
      convscope::Engine engine(model, variant);
      if (engine.estimateMemory(1).bytes > (int64_t{64} << 20)) return 0;
      engine.infer(convscope::Tensor({1, 1, input.shape[2], input.shape[3]}));
    }
  } catch (const convscope::Error&) {
  }
  return 0;
}
