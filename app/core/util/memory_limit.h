// The most memory one inference may take on this machine. The engine estimates a batch's needs
// (the input, every layer's activations while they are alive, the conv backend's workspace)
// before it allocates anything and refuses a batch above this limit, naming the layer and the
// figures, instead of failing with std::bad_alloc -- or being killed -- half-way through.
#pragma once

#include <cstdint>
#include <string>

namespace convscope {

struct MemoryLimit {
  int64_t bytes = 0;
  std::string origin;  // where the figure comes from, for messages
};

// $CONVSCOPE_MEMORY_LIMIT_MB (megabytes, 10^6 bytes) when set; otherwise half of this machine's
// physical memory (at least 1 GB). Throws convscope::Error on a malformed variable.
MemoryLimit memoryLimit();

}  // namespace convscope
