#include "app/core/model/operators/window2d.h"

#include <algorithm>

#include "app/core/util/error.h"

namespace convscope::ops {
namespace {

std::string list(const std::vector<int64_t>& values) {
  std::string text;
  for (int64_t v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return "[" + text + "]";
}

// Window sizes, strides and pads far beyond any image would overflow the int geometry.
constexpr int64_t kLargestWindowValue = 1 << 20;

void requireInRange(const std::vector<int64_t>& values, const char* name, int64_t least) {
  for (int64_t v : values)
    if (v < least || v > kLargestWindowValue)
      throw Error(std::string(name) + " " + list(values) + " must lie between " + std::to_string(least) + " and " +
                  std::to_string(kLargestWindowValue));
}

}  // namespace

Window2d Window2d::read(Attributes& attributes, bool kernelRequired, bool allowCeil, bool allowDilation) {
  Window2d window;
  const std::vector<int64_t> kernel = attributes.getInts("kernel_shape", {});
  if (kernel.empty() && kernelRequired) throw Error("attribute kernel_shape is required");
  if (!kernel.empty()) {
    if (kernel.size() != 2) throw Error("kernel_shape " + list(kernel) + " is not 2-D; only 2-D windows are supported");
    requireInRange(kernel, "kernel_shape", 1);
    window.kernelHeight = static_cast<int>(kernel[0]);
    window.kernelWidth = static_cast<int>(kernel[1]);
  }
  const std::vector<int64_t> strides = attributes.getInts("strides", {1, 1});
  if (strides.size() != 2) throw Error("strides " + list(strides) + " must have 2 values for a 2-D window");
  requireInRange(strides, "strides", 1);
  window.strideHeight = static_cast<int>(strides[0]);
  window.strideWidth = static_cast<int>(strides[1]);
  const std::vector<int64_t> dilations = attributes.getInts("dilations", {1, 1});
  if (!allowDilation && dilations != std::vector<int64_t>{1, 1})
    throw Error("attribute dilations " + list(dilations) + " is not supported (only dilation 1)");
  if (dilations.size() != 2) throw Error("dilations " + list(dilations) + " must have 2 values for a 2-D window");
  requireInRange(dilations, "dilations", 1);
  window.dilationHeight = static_cast<int>(dilations[0]);
  window.dilationWidth = static_cast<int>(dilations[1]);
  window.autoPad = attributes.getString("auto_pad", "NOTSET");
  if (window.autoPad != "NOTSET" && window.autoPad != "VALID" && window.autoPad != "SAME_UPPER" &&
      window.autoPad != "SAME_LOWER")
    throw Error("auto_pad value '" + window.autoPad + "' is not valid");
  const std::vector<int64_t> pads = attributes.getInts("pads", {0, 0, 0, 0});
  if (pads.size() != 4) throw Error("pads " + list(pads) + " must have 4 values for a 2-D window");
  requireInRange(pads, "pads", 0);
  for (size_t i = 0; i < 4; ++i) window.pads[i] = static_cast<int>(pads[i]);
  if (window.autoPad != "NOTSET" && pads != std::vector<int64_t>{0, 0, 0, 0})
    throw Error("pads and auto_pad " + window.autoPad + " cannot both be given");
  if (allowCeil) {
    const int64_t ceil = attributes.getInt("ceil_mode", 0);
    if (ceil != 0 && ceil != 1) throw Error("ceil_mode must be 0 or 1");
    window.ceilMode = ceil == 1;
  }
  return window;
}

Window2d::Resolved Window2d::resolve(int inHeight, int inWidth, int kernelH, int kernelW) const {
  Resolved r{pads[0], pads[1], pads[2], pads[3], 0, 0};
  const auto axis = [&](int in, int kernel, int stride, int& padBegin, int& padEnd) -> int {
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      const int out = (in + stride - 1) / stride;
      const int total = std::max(0, (out - 1) * stride + kernel - in);
      padBegin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      padEnd = total - padBegin;
      return out;
    }
    if (autoPad == "VALID") padBegin = padEnd = 0;
    const int span = in + padBegin + padEnd - kernel;
    if (span < 0)
      throw Error("kernel " + std::to_string(kernel) + " is larger than the padded input " +
                  std::to_string(in + padBegin + padEnd));
    int out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
    // As in PyTorch and the ONNX reference: a last window starting in the end padding is dropped.
    if (ceilMode && (out - 1) * stride >= in + padBegin) --out;
    return out;
  };
  r.outHeight = axis(inHeight, kernelH, strideHeight, r.padTop, r.padBottom);
  r.outWidth = axis(inWidth, kernelW, strideWidth, r.padLeft, r.padRight);
  return r;
}

}  // namespace convscope::ops
