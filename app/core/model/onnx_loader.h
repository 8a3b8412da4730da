// Reads ONNX files as PyTorch exports them (TorchScript exporter, opsets 13-17; dynamo exporter,
// opsets 18-20, IR 10) into a Model. Everything ConvScope cannot run exactly -- an unknown
// operator or attribute, external data, a missing initializer, inconsistent shapes, a file that
// is not ONNX -- is refused with an Error naming the file, the node, the operator and the reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "app/core/model/model.h"

namespace convscope {

// The largest model file accepted: 256 MiB (see loadOnnxModel).
constexpr uint64_t kMaxModelFileBytes = uint64_t{256} << 20;

std::shared_ptr<const Model> loadOnnxModel(const std::filesystem::path& path);

// The same from serialized bytes; `sourceName` stands for the file in messages.
std::shared_ptr<const Model> loadOnnxModelFromBytes(const std::string& bytes, const std::string& sourceName);

}  // namespace convscope
