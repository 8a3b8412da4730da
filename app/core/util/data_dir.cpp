#include "app/core/util/data_dir.h"

#include <filesystem>
#include <string>
#include <system_error>

// Set by app/core/CMakeLists.txt for this file only:
//   CONVSCOPE_INSTALLED_DATA_FROM_BIN  the installed data folder relative to the installed
//                                      programs' folder ("../share/convscope" for GNU dirs)
//   CONVSCOPE_TEMPLATES_DIR            the source tree's examples/kernels
// (CONVSCOPE_MODELS_DIR, the source tree's data/models, is given to this file alone: see
// app/core/CMakeLists.txt.)

namespace convscope {
namespace {

// The installed data folder's <sub> beside this program, or "" when this program is not installed
// (it runs from the build tree, or the data were not installed with it).
std::string installedDataDir(const char* sub) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  const std::filesystem::path dir = (self.parent_path() / CONVSCOPE_INSTALLED_DATA_FROM_BIN / sub).lexically_normal();
  return std::filesystem::is_directory(dir, error) ? dir.string() : std::string();
}

std::string resolve(const char* installedSub, const char* sourceTreeDir) {
  const std::string installed = installedDataDir(installedSub);
  return installed.empty() ? std::string(sourceTreeDir) : installed;
}

}  // namespace

const char* shippedModelsDir() {
  static const std::string dir = resolve("models", CONVSCOPE_MODELS_DIR);
  return dir.c_str();
}

const char* kernelTemplatesDir() {
  static const std::string dir = resolve("examples/kernels", CONVSCOPE_TEMPLATES_DIR);
  return dir.c_str();
}

}  // namespace convscope
