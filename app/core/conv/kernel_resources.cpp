#include "app/core/conv/kernel_resources.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include "app/core/util/checked_math.h"
#include "app/core/util/child_process.h"
#include "app/core/util/error.h"

namespace convscope {

KernelResources parsePtxasReport(const std::string& log, const std::string& kernelName) {
  static const std::regex function(R"(Function properties for (\S+))");
  static const std::regex compiling(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex registers(R"(Used (\d+) registers)");
  static const std::regex shared(R"((\d+) bytes smem)");
  static const std::regex constant(R"((\d+) bytes cmem\[(\d+)\])");
  KernelResources resources;
  std::istringstream in(log);
  bool ours = false;  // the lines since the last one naming a function are about `kernelName`
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, function) || std::regex_search(line, m, compiling)) {
      ours = m[1].str() == kernelName;
      continue;
    }
    if (!ours) continue;
    if (std::regex_search(line, m, frame)) {
      resources.localBytes = std::stoi(m[1].str());
      resources.spillStoreBytes = std::stoi(m[2].str());
      resources.spillLoadBytes = std::stoi(m[3].str());
    }
    if (std::regex_search(line, m, registers)) {
      resources.registers = std::stoi(m[1].str());
      resources.found = true;
      if (std::regex_search(line, m, shared)) resources.sharedStaticBytes = std::stoi(m[1].str());
      // Bank 0 holds the parameters; the others the program's __constant__ data.
      for (auto it = std::sregex_iterator(line.begin(), line.end(), constant); it != std::sregex_iterator(); ++it)
        if ((*it)[2].str() != "0") resources.constantBytes += std::stoi((*it)[1].str());
    }
  }
  return resources;
}

namespace {

GpuArchitectureLimits limits(const char* name, int threads, int blocks, int shared, int unit, int reserved) {
  GpuArchitectureLimits l;
  l.name = name;
  l.maxThreadsPerSm = threads;
  l.maxWarpsPerSm = threads / 32;
  l.maxBlocksPerSm = blocks;
  l.sharedPerSm = shared;
  l.sharedAllocationUnit = unit;
  l.sharedReservedPerBlock = reserved;
  return l;
}

// The CUDA C++ Programming Guide's "Technical Specifications per Compute Capability".
const std::vector<GpuArchitectureLimits>& table() {
  static const std::vector<GpuArchitectureLimits> rows = {
      limits("sm_75", 1024, 16, 64 * 1024, 256, 0),       // Turing
      limits("sm_80", 2048, 32, 164 * 1024, 128, 1024),   // A100
      limits("sm_86", 1536, 16, 100 * 1024, 128, 1024),   // RTX 30
      limits("sm_89", 1536, 24, 100 * 1024, 128, 1024),   // RTX 40, L4, L40
      limits("sm_90", 2048, 32, 228 * 1024, 128, 1024),   // H100, H200
      limits("sm_100", 2048, 32, 228 * 1024, 128, 1024),  // B200
  };
  return rows;
}

}  // namespace

std::optional<GpuArchitectureLimits> architectureLimits(const std::string& architecture) {
  for (const GpuArchitectureLimits& row : table())
    if (row.name == architecture) return row;
  return std::nullopt;
}

std::vector<std::string> knownArchitectures() {
  std::vector<std::string> names;
  for (const GpuArchitectureLimits& row : table()) names.push_back(row.name);
  return names;
}

BlockOccupancy computeOccupancy(const GpuArchitectureLimits& limits, int threadsPerBlock,
                                const KernelResources& resources) {
  BlockOccupancy o;
  o.threadsPerBlock = threadsPerBlock;
  o.warpsPerBlock = (threadsPerBlock + 31) / 32;
  o.maxWarps = limits.maxWarpsPerSm;
  if (threadsPerBlock < 1 || threadsPerBlock > limits.maxThreadsPerBlock) {
    o.limitedBy = "a block of " + std::to_string(threadsPerBlock) + " threads cannot be launched (at most " +
                  std::to_string(limits.maxThreadsPerBlock) + ")";
    return o;
  }
  if (resources.registers > limits.maxRegistersPerThread) {
    o.limitedBy = "more registers per thread than " + limits.name + " has";
    return o;
  }
  o.blocksByWarps = limits.maxWarpsPerSm / o.warpsPerBlock;
  o.blocksByBlockLimit = limits.maxBlocksPerSm;
  // Registers go to warps in units of registerAllocationUnit, within each of the SM's four
  // quarters (one per warp scheduler): a warp never spans two.
  constexpr int kQuarters = 4;
  const int registersPerWarp = roundUp(std::max(resources.registers, 1) * 32, limits.registerAllocationUnit);
  const int warpsByRegisters = (limits.registersPerSm / kQuarters / registersPerWarp) * kQuarters;
  o.blocksByRegisters = warpsByRegisters / o.warpsPerBlock;
  const int sharedPerBlock =
      roundUp(resources.sharedStaticBytes + limits.sharedReservedPerBlock, limits.sharedAllocationUnit);
  o.blocksByShared = sharedPerBlock > 0 ? limits.sharedPerSm / sharedPerBlock : INT_MAX;
  o.blocksPerSm = std::min({o.blocksByWarps, o.blocksByBlockLimit, o.blocksByRegisters, o.blocksByShared});
  o.activeWarps = o.blocksPerSm * o.warpsPerBlock;
  // The first resource that reaches the least count: the warp limit first (no resource can do
  // better than it), then registers, shared memory, the block limit.
  if (o.blocksPerSm == o.blocksByWarps)
    o.limitedBy = "warps";
  else if (o.blocksPerSm == o.blocksByRegisters)
    o.limitedBy = "registers";
  else if (o.blocksPerSm == o.blocksByShared)
    o.limitedBy = "shared memory";
  else
    o.limitedBy = "blocks per SM";
  if (o.blocksPerSm == 0) o.limitedBy = "no block fits: " + o.limitedBy;
  return o;
}

namespace {

bool sameFile(const std::string& listed, const std::string& sourceFile) {
  return listed == sourceFile ||
         std::filesystem::path(listed).filename() == std::filesystem::path(sourceFile).filename();
}

}  // namespace

std::vector<int> sourceLinesOfListing(const std::string& listing, ListingKind kind, const std::string& sourceFile) {
  static const std::regex ptxFile(R"re(^\s*\.file\s+(\d+)\s+"([^"]*)")re");
  static const std::regex ptxLoc(R"(^\s*\.loc\s+(\d+)\s+(\d+))");
  static const std::regex sassFile(R"re(^\s*//## File "([^"]*)", line (\d+))re");
  std::vector<int> lines;
  std::vector<std::string> ptxFiles;  // index: the .file number
  int current = 0;
  std::istringstream in(listing);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (kind == ListingKind::Ptx) {
      if (std::regex_search(line, m, ptxFile)) {
        const size_t index = std::stoul(m[1].str());
        if (ptxFiles.size() <= index) ptxFiles.resize(index + 1);
        ptxFiles[index] = m[2].str();
        current = 0;
      } else if (std::regex_search(line, m, ptxLoc)) {
        const size_t index = std::stoul(m[1].str());
        // The .file lines come at the end of NVRTC's PTX: resolved below.
        current = -static_cast<int>(index) * 1000000 - std::stoi(m[2].str());
      } else if (line.find('}') == 0 || line.find(".entry") != std::string::npos) {
        current = 0;
      }
    } else {
      if (std::regex_search(line, m, sassFile))
        current = sameFile(m[1].str(), sourceFile) ? std::stoi(m[2].str()) : 0;
      else if (line.rfind("//---", 0) == 0)
        current = 0;
    }
    lines.push_back(current);
  }
  if (kind == ListingKind::Ptx)
    for (int& line : lines)
      if (line < 0) {
        const size_t index = static_cast<size_t>(-line / 1000000);
        line = index < ptxFiles.size() && sameFile(ptxFiles[index], sourceFile) ? -line % 1000000 : 0;
      }
  return lines;
}

std::vector<int> listingLinesOfSourceLine(const std::vector<int>& sourceLines, int sourceLine) {
  std::vector<int> found;
  for (size_t i = 0; i < sourceLines.size(); ++i)
    if (sourceLine > 0 && sourceLines[i] == sourceLine) found.push_back(static_cast<int>(i) + 1);
  return found;
}

namespace {

std::vector<std::filesystem::path> nvdisasmCandidates() {
  std::vector<std::filesystem::path> candidates;
  // Set: that one or none (so that a test, or a user, can rule the others out).
  if (const char* explicitPath = std::getenv("CONVSCOPE_NVDISASM"); explicitPath && *explicitPath)
    return {explicitPath};
#ifdef CONVSCOPE_DEPS_DIR
  // pip install --target .deps/nvdisasm nvidia-cuda-nvdisasm (scripts/install-nvdisasm.sh)
  candidates.push_back(std::filesystem::path(CONVSCOPE_DEPS_DIR) / "nvdisasm/nvidia/cu13/bin/nvdisasm");
#endif
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty()) candidates.push_back(std::filesystem::path(dir) / "nvdisasm");
  }
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(variable); home && *home)
      candidates.push_back(std::filesystem::path(home) / "bin/nvdisasm");
  candidates.emplace_back("/usr/local/cuda/bin/nvdisasm");
  return candidates;
}

}  // namespace

std::optional<std::filesystem::path> findNvdisasm() {
  for (const std::filesystem::path& candidate : nvdisasmCandidates())
    if (::access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return candidate;
  return std::nullopt;
}

std::string blocksLimitText(int blocks) {
  return blocks >= std::numeric_limits<int>::max() / 2 ? std::string("no limit") : std::to_string(blocks);
}

std::string nvdisasmMissingMessage(const std::string& kernelFile) {
  if (const char* explicitPath = std::getenv("CONVSCOPE_NVDISASM"); explicitPath && *explicitPath)
    return std::string("no nvdisasm at ") + explicitPath + " (CONVSCOPE_NVDISASM), so no SASS";
  // Absolute paths: the message is read in whatever folder the user happens to be in, and an
  // installed ConvScope has no scripts/ beside it (then only the pip line is given).
  std::string message = "no nvdisasm here, so no SASS: it is not in this CUDA toolkit or on PATH";
#ifdef CONVSCOPE_DEPS_DIR
  const std::filesystem::path deps = std::filesystem::path(CONVSCOPE_DEPS_DIR).lexically_normal();
  const std::filesystem::path script = (deps.parent_path() / "scripts/install-nvdisasm.sh").lexically_normal();
  message += ", nor in " + (deps / "nvdisasm").string() + ". ";
  std::error_code ignored;
  if (std::filesystem::is_regular_file(script, ignored))
    message += "Install it with " + script.string() + " (it fetches NVIDIA's pip package nvidia-cuda-nvdisasm), ";
  else
    message +=
        "Install it with: pip install --no-deps --target " + (deps / "nvdisasm").string() + " nvidia-cuda-nvdisasm, ";
#else
  message += ". Install NVIDIA's pip package nvidia-cuda-nvdisasm, ";
#endif
  message += "or set CONVSCOPE_NVDISASM to its path. The PTX is there without it: convscope-cli kernel ptx " +
             (kernelFile.empty() ? std::string("FILE.cu") : kernelFile);
  return message;
}

std::string disassembleCubin(const std::vector<char>& cubin, const std::string& forFile) {
  const std::optional<std::filesystem::path> nvdisasm = findNvdisasm();
  if (!nvdisasm) throw Error(forFile + ": " + nvdisasmMissingMessage(forFile));
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  const std::filesystem::path image =
      std::filesystem::temp_directory_path() /
      ("convscope-sass-" + std::to_string(getpid()) + "-" + std::to_string(stamp) + ".cubin");
  std::ofstream(image, std::ios::binary).write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  const ChildOutcome run = runChildProcess({nvdisasm->string(), "-c", "-g", image.string()}, 60.0);
  std::error_code ignored;
  std::filesystem::remove(image, ignored);
  if (!run.succeeded())
    throw Error(forFile + ": " + nvdisasm->string() + " could not disassemble its code (" + run.describe(60.0) +
                "): " + run.output);
  return run.output;
}

}  // namespace convscope
