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

// $CONVSCOPE_MEMORY_LIMIT_MB (megabytes, 10^6 bytes) when set; in a Slurm job, half of its
// allocation ($SLURM_MEM_PER_NODE, or $SLURM_MEM_PER_CPU times $SLURM_CPUS_ON_NODE); otherwise
// half of this machine's physical memory (at least 1 GB in each case). Throws convscope::Error on
// a malformed CONVSCOPE_MEMORY_LIMIT_MB.
MemoryLimit memoryLimit();

// Makes glibc keep freed memory for the next allocation instead of handing it back to the system.
// An inference of 10,000 images allocates tensors of hundreds of MB; glibc maps each one fresh
// and unmaps it when freed, so every inference page-faults (and the kernel zeroes) them anew: a
// sixth of a fast CPU variant's time. Programs call this once at start; the process then keeps
// its peak memory, as the arena of any inference runtime does. No effect without glibc.
void keepFreedMemoryForReuse();

}  // namespace convscope
