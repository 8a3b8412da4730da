#include "app/core/conv/user_kernel_source.h"

#include <fstream>
#include <map>
#include <string_view>

#include "app/core/conv/kernel_includes.h"
#include "app/core/util/error.h"

namespace convscope {
namespace {

struct MacroRule {
  const char* name;
  bool required;
  int least, most;
  int UserKernelLaunch::*field;
};

// The macros of the contract. Block sizes up to CUDA's 1024 threads per block.
const MacroRule kRules[] = {
    {"CONVSCOPE_BLOCK_X", true, 1, 1024, &UserKernelLaunch::blockX},
    {"CONVSCOPE_BLOCK_Y", true, 1, 1024, &UserKernelLaunch::blockY},
    {"CONVSCOPE_TILE_WIDTH", true, 1, 4096, &UserKernelLaunch::tileWidth},
    {"CONVSCOPE_TILE_HEIGHT", true, 1, 4096, &UserKernelLaunch::tileHeight},
    {"CONVSCOPE_MAX_KERNEL", false, 1, 1024, &UserKernelLaunch::maxKernel},
    {"CONVSCOPE_MAX_STRIDE", false, 1, 1024, &UserKernelLaunch::maxStride},
};

int ceilDiv(int a, int b) {
  return (a + b - 1) / b;
}

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// One line "#define CONVSCOPE_NAME value // comment" (blanks anywhere between; the comment may be
// left out): the name and the value's text, blanks around it dropped. False for any other line.
// Read by hand, not with std::regex, whose matcher recurses per character and overflows the stack
// on a long line.
bool readContractMacro(std::string_view line, std::string* name, std::string* value) {
  size_t at = 0;
  const auto skipSpaces = [&] {
    const size_t from = at;
    while (at < line.size() && isSpace(line[at])) ++at;
    return at > from;
  };
  const auto take = [&](std::string_view word) {
    if (line.substr(at, word.size()) != word) return false;
    at += word.size();
    return true;
  };
  skipSpaces();
  if (!take("#")) return false;
  skipSpaces();
  if (!take("define") || !skipSpaces()) return false;
  const size_t nameAt = at;
  if (!take("CONVSCOPE_")) return false;
  const size_t suffixAt = at;
  while (at < line.size() && ((line[at] >= 'A' && line[at] <= 'Z') || line[at] == '_')) ++at;
  if (at == suffixAt) return false;
  // The name ends there: "CONVSCOPE_BLOCK_X1" is another name.
  if (at < line.size() && ((line[at] >= 'a' && line[at] <= 'z') || (line[at] >= '0' && line[at] <= '9'))) return false;
  *name = std::string(line.substr(nameAt, at - nameAt));
  std::string_view rest = line.substr(at);
  rest = rest.substr(0, rest.find("//"));  // a comment after the value
  while (!rest.empty() && isSpace(rest.front())) rest.remove_prefix(1);
  while (!rest.empty() && isSpace(rest.back())) rest.remove_suffix(1);
  *value = std::string(rest);
  return true;
}

}  // namespace

std::string KernelDiagnostic::text() const {
  return line > 0 ? file + ":" + std::to_string(line) + ": " + message : file + ": " + message;
}

std::string UserKernelLaunch::unsupportedReason(const ConvProblem& problem) const {
  if (maxKernel > 0 && (problem.kernelHeight > maxKernel || problem.kernelWidth > maxKernel))
    return "the kernel file handles kernels up to " + std::to_string(maxKernel) + "x" + std::to_string(maxKernel) +
           " (CONVSCOPE_MAX_KERNEL)";
  if (maxStride > 0 && (problem.strideHeight > maxStride || problem.strideWidth > maxStride))
    return "the kernel file handles strides up to " + std::to_string(maxStride) + " (CONVSCOPE_MAX_STRIDE)";
  // The launcher splits a batch so that images x output channels stays within the grid's z.
  if (problem.outChannels > 65535)
    return std::to_string(problem.outChannels) + " output channels exceed the grid's 65,535 z blocks";
  return {};
}

KernelLaunchGeometry UserKernelLaunch::geometry(const ConvProblem& problem) const {
  KernelLaunchGeometry g;
  g.kernel = kUserKernelName;
  g.gridX = ceilDiv(problem.outWidth(), tileWidth);
  g.gridY = ceilDiv(problem.outHeight(), tileHeight);
  g.gridZ = problem.batch * problem.outChannels;
  g.blockX = blockX;
  g.blockY = blockY;
  g.tileWidth = tileWidth;
  g.tileHeight = tileHeight;
  g.order = BlockOrder::kGridTiles;
  g.mapping = "blockIdx.x, blockIdx.y: a " + std::to_string(tileWidth) + "x" + std::to_string(tileHeight) +
              " output tile; blockIdx.z: image x output channel (the file's CONVSCOPE_* macros)";
  return g;
}

UserKernelSource parseUserKernelSource(const std::filesystem::path& path, const std::string& text) {
  UserKernelSource source;
  source.path = path;
  source.text = text;
  source.displayName = path.filename().string();
  source.id = "user-" + path.stem().string();
  const std::string file = path.string();

  // #define NAME value, at the start of a line. The value must be a plain whole number: ConvScope
  // reads it without a preprocessor.
  std::map<std::string, std::pair<int, std::string>> found;  // name -> line, value text
  int number = 0;
  for (size_t lineStart = 0; lineStart < text.size();) {
    const size_t newline = text.find('\n', lineStart);
    const size_t lineEnd = newline == std::string::npos ? text.size() : newline;
    ++number;
    std::string name, value;
    if (readContractMacro(std::string_view(text).substr(lineStart, lineEnd - lineStart), &name, &value))
      found[name] = {number, value};
    lineStart = lineEnd + 1;
  }
  for (const MacroRule& rule : kRules) {
    const auto it = found.find(rule.name);
    if (it == found.end()) {
      if (rule.required)
        source.problems.push_back({file, 0,
                                   std::string("the launch geometry macro ") + rule.name +
                                       " is missing (the contract, docs/your-kernel.md: #define " + rule.name +
                                       " <whole number>)"});
      continue;
    }
    const auto& [line, value] = it->second;
    size_t used = 0;
    long parsed = -1;
    try {
      parsed = std::stol(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size() || parsed < rule.least || parsed > rule.most) {
      source.problems.push_back({file, line,
                                 std::string(rule.name) + " is '" + value + "'; it must be a whole number from " +
                                     std::to_string(rule.least) + " to " + std::to_string(rule.most)});
      continue;
    }
    source.launch.*rule.field = static_cast<int>(parsed);
  }
  if (source.launch.blockX > 0 && source.launch.blockY > 0 && source.launch.blockX * source.launch.blockY > 1024)
    source.problems.push_back({file, found["CONVSCOPE_BLOCK_Y"].first,
                               "a block of " + std::to_string(source.launch.blockX) + " x " +
                                   std::to_string(source.launch.blockY) +
                                   " threads exceeds CUDA's 1,024 threads per block"});
  source.refusedIncludes = refusedKernelIncludes(file, text);
  source.problems.insert(source.problems.end(), source.refusedIncludes.begin(), source.refusedIncludes.end());
  return source;
}

UserKernelSource readUserKernelSource(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error))
    throw Error("the kernel file '" + path.string() + "' is not a regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxKernelFileBytes)
    throw Error("the kernel file '" + path.string() + "' has " + std::to_string(size) +
                " bytes; a kernel file may have at most " + std::to_string(kMaxKernelFileBytes) + " (1 MiB)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read the kernel file '" + path.string() + "'");
  // At most the limit, also if the file grew since its size was read.
  std::string text(kMaxKernelFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxKernelFileBytes)
    throw Error("the kernel file '" + path.string() + "' has more than " + std::to_string(kMaxKernelFileBytes) +
                " bytes (1 MiB), the most a kernel file may have");
  return parseUserKernelSource(path, text);
}

ConvVariant userKernelVariantRow(const UserKernelSource& source) {
  ConvVariant v;
  v.id = source.id;
  v.displayName = source.displayName;
  v.description = "Your kernel, compiled at run time from " + source.path.string() + ".";
  v.courseStep = "Your own kernel";
  v.sourceFile = source.path.string();
  v.requirements.gpu = true;
  const UserKernelLaunch launch = source.launch;
  v.unsupportedReason = [launch](const ConvProblem& problem) { return launch.unsupportedReason(problem); };
  v.launchGeometry = [launch](const ConvProblem& problem) {
    return std::vector<KernelLaunchGeometry>{launch.geometry(problem)};
  };
  return v;
}

}  // namespace convscope
