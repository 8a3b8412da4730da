#include "gpu/user_kernel.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>

#include "app/core/conv/compiler_messages.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/util/error.h"
#include "gpu/user_kernel_inspect.h"

#ifdef CONVSCOPE_HAVE_CUDA
#include <nvrtc.h>

#include "examples/kernels/convscope_kernel.h"
#include "gpu/conv_kernel.h"
#include "gpu/cuda_check.h"
#include "gpu/user_kernel_header.inc"  // kConvScopeKernelHeader: examples/kernels/convscope_kernel.h, generated
#endif

namespace convscope::gpu {

#ifndef CONVSCOPE_HAVE_CUDA

std::string userKernelCompilerUnavailableReason() {
  return "this build of ConvScope has no CUDA toolkit, so it cannot compile kernels (rebuild with "
         "-DCONVSCOPE_WITH_CUDA=ON)";
}

CompiledUserKernel compileUserKernel(const UserKernelSource& source, const UserKernelBuildOptions&) {
  return compileUserKernel(source);
}

CompiledUserKernel compileUserKernel(const UserKernelSource& source) {
  CompiledUserKernel kernel;
  kernel.source = source;
  kernel.errors.push_back({source.path.filename().string(), 0, userKernelCompilerUnavailableReason()});
  return kernel;
}

const ConvVariant& installUserKernel(const CompiledUserKernel& kernel) {
  throw Error(kernel.source.path.string() + ": " + userKernelCompilerUnavailableReason());
}

const std::vector<std::filesystem::path>& toolkitIncludeFolders() {
  static const std::vector<std::filesystem::path> none;
  return none;
}

void warmUpUserKernelCompiler(const std::string&) {}

std::string brokenContextError() {
  return {};
}

#else

std::string brokenContextError() {
  // A sticky error is what every later call returns, this one included. Only the errors a kernel's
  // own execution raises count: a kernel still running (not ready), a launch refused (too many
  // resources) or no GPU at all broke nothing the kernel did.
  const cudaError_t status = cudaStreamQuery(nullptr);
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
      return cudaGetErrorString(status);
    default:
      return {};
  }
}

namespace {

// Appended to the student's file: the contract's signature, checked by the compiler. Its errors
// name the file "convscope-contract", which compileUserKernel turns into the contract's words.
constexpr const char* kContractCheck = R"(
#line 1 "convscope-contract"
namespace convscope_contract {
template <class A, class B> struct same { static const bool value = false; };
template <class A> struct same<A, A> { static const bool value = true; };
static_assert(same<decltype(&convscope_conv), void (*)(const float*, const float*, float*, ConvShape)>::value,
              "convscope_conv has the wrong parameters");
}
)";

std::string nvrtcLog(nvrtcProgram program) {
  size_t size = 0;
  nvrtcGetProgramLogSize(program, &size);
  std::string log(size, '\0');
  if (size > 0) nvrtcGetProgramLog(program, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  // The assembler's part is joined to NVRTC's with a NUL (CUDA 13): a line of its own.
  std::replace(log.begin(), log.end(), '\0', '\n');
  return log;
}

// The contract's refusal, on the line of convscope_conv's declaration where the file has one.
KernelDiagnostic contractRefusal(const std::string& file, const std::string& text, const std::string& what) {
  return {file, kernelDeclarationLines(text).first,
          "breaks the contract (docs/your-kernel.md): " + what + "; it must be declared as " + kUserKernelSignature};
}

// NVRTC's "file(line): error: text" lines, the contract's turned into what the contract asks, and
// the assembler's refusals in the student's terms (compiler_messages.h). A broken contract comes
// first; when the kernel's parameters are wrong, the errors they cause in its body (every use of
// a parameter of another type) are left out: only those on the declaration's own lines stay.
std::vector<KernelDiagnostic> parseErrors(const std::string& log, const std::string& file, const std::string& text,
                                          const std::string& architecture) {
  std::vector<KernelDiagnostic> errors;
  static const std::regex line(R"(^(.*)\((\d+)\): (?:catastrophic )?error[^:]*: (.*)$)");
  std::istringstream in(log);
  bool contractBroken = false;
  std::string contractDetail;
  for (std::string row; std::getline(in, row);) {
    std::smatch m;
    if (!std::regex_match(row, m, line)) continue;
    // The contract's check, and NVRTC's lookup of the kernel's name (__nv_name_map).
    if (m[1].str() == "convscope-contract" || m[1].str() == "__nv_name_map") {
      if (!contractBroken) contractDetail = m[3].str();
      contractBroken = true;
      continue;
    }
    errors.push_back({m[1].str(), std::stoi(m[2].str()), "error: " + m[3].str()});
  }
  if (contractBroken) {
    const bool wrongParameters = contractDetail.find("wrong parameters") != std::string::npos;
    const std::string what = contractDetail.find("\"convscope_conv\" is undefined") != std::string::npos
                                 ? "it has no kernel named convscope_conv"
                             : wrongParameters ? "convscope_conv has the wrong parameters"
                             : contractDetail.find("non-__global__") != std::string::npos
                                 ? "convscope_conv is not a __global__ kernel"
                                 : "convscope_conv is not what the contract asks (" + contractDetail + ")";
    if (wrongParameters) {
      const LineRange declaration = kernelDeclarationLines(text);
      errors.erase(std::remove_if(errors.begin(), errors.end(),
                                  [&](const KernelDiagnostic& e) { return !declaration.contains(e.line); }),
                   errors.end());
    }
    errors.insert(errors.begin(), contractRefusal(file, text, what));
  }
  if (errors.empty()) errors = assemblerErrors(log, file, text, architecture);
  if (errors.empty()) errors.push_back({file, 0, "did not compile:\n" + studentCompilerLog(log)});
  return errors;
}

std::string targetArchitecture() {
  const GpuInfo& gpu = gpuInfo();
  if (gpu.usable) return "sm_" + std::to_string(gpu.computeMajor) + std::to_string(gpu.computeMinor);
  return "compute_75";
}

// What the row runs: the latest compiled image, loaded into the process's CUDA context the first
// time it is launched after a (re)compile.
struct LoadedUserKernel {
  std::mutex mutex;
  std::string file;
  UserKernelLaunch launch;
  std::vector<char> image;
  std::string loweredName;
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;

  cudaKernel_t get() {
    if (!kernel) {
      CONVSCOPE_CUDA_CHECK(cudaLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      CONVSCOPE_CUDA_CHECK(cudaLibraryGetKernel(&kernel, library, loweredName.c_str()));
    }
    return kernel;
  }
  void replace(const CompiledUserKernel& compiled) {
    if (library) {
      // The old code may still be running on some stream.
      cudaDeviceSynchronize();
      cudaLibraryUnload(library);
    }
    library = nullptr;
    kernel = nullptr;
    launch = compiled.source.launch;
    image = compiled.image;
    loweredName = compiled.loweredName;
  }
};

std::mutex& installedMutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<std::pair<std::string, std::shared_ptr<LoadedUserKernel> > >& installed() {
  static std::vector<std::pair<std::string, std::shared_ptr<LoadedUserKernel> > > kernels;
  return kernels;
}

void launchUserKernel(LoadedUserKernel& loaded, Device& device, const ConvProblem& p, const float* input,
                      const float* weights, float* output, const ConvEpilogue& epilogue) {
  if (!epilogue.empty()) throw Error("internal: an epilogue was planned for a student's kernel, which fuses nothing");
  const std::lock_guard lock(loaded.mutex);
  if (const std::string reason = loaded.launch.unsupportedReason(p); !reason.empty())
    throw Error(loaded.file + ": " + reason);
  // The grid's z covers image x output channel, at most 65,535: a larger batch goes in chunks of
  // images, each launch seeing its chunk as the whole batch (the contract's shape.batch).
  const int chunk = std::max(1, std::min(p.batch, 65535 / std::max(1, p.outChannels)));
  const int64_t inPerImage = int64_t{p.inChannels} * p.inHeight * p.inWidth;
  const int64_t outPerImage = int64_t{p.outChannels} * p.outHeight() * p.outWidth();
  const cudaKernel_t kernel = loaded.get();
  for (int first = 0; first < p.batch; first += chunk) {
    ConvProblem part = p;
    part.batch = std::min(chunk, p.batch - first);
    const KernelLaunchGeometry g = loaded.launch.geometry(part);
    ConvShape shape{part.batch,       part.inChannels, part.inHeight,     part.inWidth,     part.outChannels,
                    part.outHeight(), part.outWidth(), part.kernelHeight, part.kernelWidth, part.strideHeight,
                    part.strideWidth, part.padTop,     part.padLeft};
    const float* in = input + first * inPerImage;
    float* out = output + first * outPerImage;
    void* args[] = {&in, &weights, &out, &shape};
    CONVSCOPE_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(g.gridX, g.gridY, g.gridZ),
                                          dim3(g.blockX, g.blockY, 1), args, 0, contextOf(device).stream()));
    CONVSCOPE_CUDA_CHECK_LAUNCH();
  }
}

// The CUDA toolkit's header folders and its C++ library's (cccl), found where the build found
// them or where CUDA_HOME / CUDA_PATH point.
std::vector<std::filesystem::path> findToolkitIncludeFolders() {
  std::vector<std::filesystem::path> roots;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(variable); home && *home)
      roots.push_back(std::filesystem::path(home) / "include");
#ifdef CONVSCOPE_CUDA_INCLUDE_DIR
  roots.emplace_back(CONVSCOPE_CUDA_INCLUDE_DIR);
#endif
  roots.emplace_back("/usr/local/cuda/include");
  std::error_code error;
  for (const std::filesystem::path& root : roots) {
    if (!std::filesystem::exists(root / "mma.h", error)) continue;
    std::vector<std::filesystem::path> folders = {root};
    if (std::filesystem::is_directory(root / "cccl", error)) folders.push_back(root / "cccl");
    return folders;
  }
  return {};
}

}  // namespace

std::string userKernelCompilerUnavailableReason() {
  return {};
}

const std::vector<std::filesystem::path>& toolkitIncludeFolders() {
  static const std::vector<std::filesystem::path> folders = findToolkitIncludeFolders();
  return folders;
}

void warmUpUserKernelCompiler(const std::string& architecture) {
  // NVRTC loads its builtins library at its first compile, and ptxas its tables at the first
  // cubin: one small kernel, compiled as a student's is, loads everything before the sandbox.
  const UserKernelSource warm = parseUserKernelSource(
      "convscope-warm-up.cu",
      "#define CONVSCOPE_BLOCK_X 1\n#define CONVSCOPE_BLOCK_Y 1\n#define CONVSCOPE_TILE_WIDTH 1\n"
      "#define CONVSCOPE_TILE_HEIGHT 1\nextern \"C\" __global__ void convscope_conv(const float* input, "
      "const float* weights, float* output, ConvShape shape) { output[0] = input[0] * weights[0]; }\n");
  UserKernelBuildOptions options;
  options.architecture = architecture;
  options.ptxasInfo = true;
  options.keepPtx = true;
  (void)compileUserKernel(warm, options);
}

CompiledUserKernel compileUserKernel(const UserKernelSource& source) {
  return compileUserKernel(source, UserKernelBuildOptions{});
}

CompiledUserKernel compileUserKernel(const UserKernelSource& source, const UserKernelBuildOptions& build) {
  CompiledUserKernel kernel;
  kernel.source = source;
  // The path as given, so that errors read "path/file.cu:12: ..." wherever the file lives.
  const std::string file = source.path.string();
  kernel.errors = source.problems;
  kernel.architecture = build.architecture.empty() ? targetArchitecture() : build.architecture;
  if (!source.refusedIncludes.empty()) return kernel;  // NVRTC would open the files they name

  const std::string text = source.text + kContractCheck;
  const char* headerSources[] = {kConvScopeKernelHeader};
  const char* headerNames[] = {"convscope_kernel.h"};
  nvrtcProgram program = nullptr;
  if (nvrtcCreateProgram(&program, text.c_str(), file.c_str(), 1, headerSources, headerNames) != NVRTC_SUCCESS) {
    kernel.errors.push_back({file, 0, "NVRTC could not create a program from it"});
    return kernel;
  }
  const std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> owner(&program,
                                                                     [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });
  nvrtcAddNameExpression(program, kUserKernelName);
  const std::string arch = "--gpu-architecture=" + kernel.architecture;
  // --no-cache: NVRTC (12.9 on) answers a program it compiled before from the driver's compute
  // cache, a file outside the compiler's sandbox shared by every submission, and such an answer
  // carries no ptxas report (registers and shared memory would read 0).
  std::vector<const char*> options = {arch.c_str(), "--std=c++17", "--pre-include=convscope_kernel.h", "-lineinfo",
                                      "--no-cache"};
  // The toolkit's device headers (<mma.h>, <cuda_fp16.h>, ...), the only files a kernel may
  // include besides ConvScope's header (kernel_includes.h refused every other before this).
  std::vector<std::string> includeOptions;
  for (const std::filesystem::path& folder : toolkitIncludeFolders()) includeOptions.push_back("-I" + folder.string());
  for (const std::string& option : includeOptions) options.push_back(option.c_str());
  if (build.ptxasInfo) options.push_back("--ptxas-options=-v");
  const nvrtcResult compiled = nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
  kernel.log = nvrtcLog(program);
  if (compiled != NVRTC_SUCCESS) {
    for (KernelDiagnostic& e : parseErrors(kernel.log, file, source.text, kernel.architecture))
      kernel.errors.push_back(std::move(e));
    // What the student reads as the compiler's output: without ConvScope's additions, and, for
    // wrong parameters, without the errors they cause in the body.
    const LineRange declaration = kernelDeclarationLines(source.text);
    const bool declarationOnly =
        !kernel.errors.empty() && kernel.errors.front().message.find("wrong parameters") != std::string::npos;
    kernel.log = studentCompilerLog(kernel.log, declarationOnly ? &declaration : nullptr);
    return kernel;
  }
  // A kernel that compiled and is refused: the refusal, and of the compiler's output only what a
  // student can act on (its warnings; not the assembler's report).
  const auto refuse = [&](KernelDiagnostic refusal) {
    kernel.errors.push_back(std::move(refusal));
    kernel.log = studentCompilerLog(kernel.log);
    kernel.ptx.clear();
    return kernel;
  };
  const char* lowered = nullptr;
  if (nvrtcGetLoweredName(program, kUserKernelName, &lowered) != NVRTC_SUCCESS || !lowered)
    return refuse(contractRefusal(file, source.text, "convscope_conv is not a __global__ kernel"));
  kernel.loweredName = lowered;
  // Without extern "C" the name is mangled (C++'s "_Z..."); it would run, but the contract (and
  // every tool that looks the kernel up by name) asks for an unmangled name. A macro may rename
  // the kernel (the compiled name is the one launched): that is not a mangled name.
  if (kernel.loweredName.rfind("_Z", 0) == 0)
    return refuse(contractRefusal(
        file, source.text,
        "convscope_conv is not declared extern \"C\" (the compiler named it " + kernel.loweredName + ")"));
  if (size_t ptxSize = 0; nvrtcGetPTXSize(program, &ptxSize) == NVRTC_SUCCESS && ptxSize > 0) {
    kernel.ptx.resize(ptxSize);
    if (nvrtcGetPTX(program, kernel.ptx.data()) != NVRTC_SUCCESS) kernel.ptx.clear();
    while (!kernel.ptx.empty() && kernel.ptx.back() == '\0') kernel.ptx.pop_back();
  }
  // Dynamic shared memory (extern __shared__) is read from the PTX, which no macro can disguise:
  // ConvScope launches every kernel with 0 bytes of it, so any use would read and write outside.
  if (kernel.ptx.find(".extern .shared") != std::string::npos) {
    const std::vector<int> lines = sharedDeclarationLines(source.text, true);
    return refuse({file, lines.empty() ? kernelDeclarationLines(source.text).first : lines.front(),
                   "breaks the contract (docs/your-kernel.md): it declares dynamic shared memory "
                   "(extern __shared__), and ConvScope launches kernels with none; declare a __shared__ "
                   "array of a fixed size instead"});
  }
  if (!build.keepPtx) kernel.ptx.clear();
  size_t size = 0;
  const bool cubin = kernel.architecture.rfind("sm_", 0) == 0;
  if (cubin ? nvrtcGetCUBINSize(program, &size) : nvrtcGetPTXSize(program, &size)) {
    kernel.errors.push_back({file, 0, "NVRTC compiled it but returned no code"});
    return kernel;
  }
  kernel.image.resize(size);
  if (cubin ? nvrtcGetCUBIN(program, kernel.image.data()) : nvrtcGetPTX(program, kernel.image.data()))
    kernel.errors.push_back({file, 0, "NVRTC compiled it but returned no code"});
  return kernel;
}

const ConvVariant& installUserKernel(const CompiledUserKernel& compiled) {
  if (!compiled.ok()) throw Error(compiled.source.path.string() + " did not compile:\n" + compiled.errorText());
  const std::lock_guard lock(installedMutex());
  for (auto& [id, loaded] : installed())
    if (id == compiled.source.id) {
      const std::lock_guard kernelLock(loaded->mutex);
      loaded->replace(compiled);
      return findConvVariant(id);
    }
  auto loaded = std::make_shared<LoadedUserKernel>();
  loaded->file = compiled.source.path.filename().string();
  loaded->replace(compiled);
  ConvVariant row = userKernelVariantRow(compiled.source);
  // The row reads the shape limits and geometry of the latest compile, not the first one.
  row.unsupportedReason = [loaded](const ConvProblem& p) {
    const std::lock_guard kernelLock(loaded->mutex);
    return loaded->launch.unsupportedReason(p);
  };
  row.launchGeometry = [loaded](const ConvProblem& p) {
    const std::lock_guard kernelLock(loaded->mutex);
    return std::vector<KernelLaunchGeometry>{loaded->launch.geometry(p)};
  };
  row.runOnDevice = [loaded](Device& device, const ConvProblem& p, const float* input, const float* weights,
                             float* output, const ConvEpilogue& epilogue) {
    launchUserKernel(*loaded, device, p, input, weights, output, epilogue);
  };
  const ConvVariant& added = addUserConvVariant(std::move(row));
  installed().emplace_back(compiled.source.id, loaded);
  return added;
}

#endif

namespace {

// The window reaches the compiler through the core only (app/core/conv/user_kernel_compiler.h).
const bool registeredWithTheCore = [] {
  // compileUserKernel is overloaded (build options): the one-argument form is the interface's.
  installUserKernelCompiler({userKernelCompilerUnavailableReason,
                             static_cast<CompiledUserKernel (*)(const UserKernelSource&)>(compileUserKernel),
                             installUserKernel, inspectUserKernel, inspectCompiledUserKernel,
                             defaultInspectionArchitecture});
  return true;
}();

}  // namespace
}  // namespace convscope::gpu
