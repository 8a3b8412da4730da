#include "app/core/util/memory_limit.h"

#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "app/core/util/error.h"

namespace convscope {

MemoryLimit memoryLimit() {
  if (const char* text = std::getenv("CONVSCOPE_MEMORY_LIMIT_MB"); text && *text) {
    char* end = nullptr;
    const long long megabytes = std::strtoll(text, &end, 10);
    if (*end != '\0' || megabytes < 1 || megabytes > (int64_t{1} << 40))
      throw Error(std::string("CONVSCOPE_MEMORY_LIMIT_MB='") + text + "' is not a number of megabytes");
    return {megabytes * 1000000, "CONVSCOPE_MEMORY_LIMIT_MB"};
  }
  // In a Slurm job the allocation is what the job may hold, not the node: --mem (per node) or
  // --mem-per-cpu times the CPUs it got, in Slurm's megabytes (MiB).
  const auto slurmMegabytes = [](const char* name) -> int64_t {
    const char* text = std::getenv(name);
    if (!text || !*text) return 0;
    char* end = nullptr;
    const long long value = std::strtoll(text, &end, 10);
    return *end == '\0' && value > 0 && value < (int64_t{1} << 40) ? value : 0;
  };
  int64_t allocatedMiB = slurmMegabytes("SLURM_MEM_PER_NODE");
  if (allocatedMiB == 0) {
    const int64_t cpus = std::max<int64_t>(slurmMegabytes("SLURM_CPUS_ON_NODE"), 1);
    allocatedMiB = slurmMegabytes("SLURM_MEM_PER_CPU") * cpus;
  }
  if (allocatedMiB > 0)
    return {std::max<int64_t>(allocatedMiB * 1048576 / 2, 1000000000),
            "half of this Slurm job's memory (" + std::to_string(allocatedMiB) +
                " MiB); set CONVSCOPE_MEMORY_LIMIT_MB to change it"};
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long pageSize = sysconf(_SC_PAGE_SIZE);
  const int64_t physical = pages > 0 && pageSize > 0 ? int64_t{pages} * pageSize : int64_t{2000000000};
  return {std::max<int64_t>(physical / 2, 1000000000),
          "half of this machine's memory; set CONVSCOPE_MEMORY_LIMIT_MB to change it"};
}

void keepFreedMemoryForReuse() {
#ifdef __GLIBC__
  // Above its mmap threshold (32 MB at most) glibc maps every block on its own; without mmap all
  // blocks come from the heap, and a trim threshold beyond any batch keeps the freed ones there.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

}  // namespace convscope
