#include "app/core/conv/user_kernel_compiler.h"

#include "app/core/util/error.h"

namespace convscope {
namespace {

constexpr const char* kNoCompiler =
    "this program does not link ConvScope's GPU library (gpu/), so it cannot compile kernels";

UserKernelCompiler noCompiler() {
  UserKernelCompiler none;
  none.unavailableReason = [] { return std::string(kNoCompiler); };
  none.compile = [](const UserKernelSource& source) {
    CompiledUserKernel kernel;
    kernel.source = source;
    kernel.errors.push_back({source.path.filename().string(), 0, kNoCompiler});
    return kernel;
  };
  none.inspect = [](const UserKernelSource& source, const std::string&) {
    UserKernelInspection inspection;
    inspection.kernel.source = source;
    inspection.kernel.errors.push_back({source.path.filename().string(), 0, kNoCompiler});
    return inspection;
  };
  none.inspectCompiled = [](const CompiledUserKernel& kernel) {
    UserKernelInspection inspection;
    inspection.kernel = kernel;
    inspection.kernel.errors.push_back({kernel.source.path.filename().string(), 0, kNoCompiler});
    return inspection;
  };
  none.defaultArchitecture = [] { return std::string("sm_90"); };
  none.install = [](const CompiledUserKernel& kernel) -> const ConvVariant& {
    throw Error(kernel.source.path.string() + ": " + kNoCompiler);
  };
  return none;
}

UserKernelCompiler& installed() {
  static UserKernelCompiler compiler = noCompiler();
  return compiler;
}

}  // namespace

std::string CompiledUserKernel::errorText() const {
  std::string text;
  for (const KernelDiagnostic& e : errors) text += e.text() + "\n";
  return text;
}

void installUserKernelCompiler(UserKernelCompiler compiler) {
  installed() = std::move(compiler);
}

const UserKernelCompiler& userKernelCompiler() {
  return installed();
}

}  // namespace convscope
