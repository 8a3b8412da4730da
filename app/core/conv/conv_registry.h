// The only list of convolution variants. The CLI's `variants` command, the GUI's selector, the
// benchmark, chart legends and the tests all iterate this table; nothing else names variants.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/core/conv/conv_backend.h"

namespace convscope {

struct ConvVariant {
  std::string id;           // what users type: --variant cpu-reference
  std::string displayName;  // what charts and the GUI show
  std::string description;  // one line: the idea this variant demonstrates
  std::string courseStep;   // the course optimization it corresponds to
  std::string requirement;  // "CPU", "CUDA GPU", "CUDA GPU + cuDNN"
  // Empty when the variant can run on this machine, otherwise why not ("no CUDA device found").
  std::function<std::string()> unavailableReason;
  std::function<std::unique_ptr<ConvBackend>()> create;
  bool runsOnGpu = false;  // the engine then runs the whole network on the GPU
};

const std::vector<ConvVariant>& convVariants();

// Throws convscope::Error listing the known ids when `id` is not one of them.
const ConvVariant& findConvVariant(const std::string& id);

// Throws convscope::Error with the reason when the variant cannot run here.
std::unique_ptr<ConvBackend> createConvBackend(const std::string& id);

// The fastest variant available on this machine; what the CLI and GUI use by default.
std::string defaultConvVariant();

}  // namespace convscope
