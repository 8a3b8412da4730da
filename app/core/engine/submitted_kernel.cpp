#include "app/core/engine/submitted_kernel.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/core/util/child_process.h"
#include "app/core/util/error.h"
#include "app/core/util/hashing.h"

namespace convscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The submission's bytes, from one open: O_NOFOLLOW refuses a symbolic link as the last part of
// the path, fstat on the open file (not the path) tells what was really opened, and O_NONBLOCK
// keeps a FIFO from blocking the open.
std::string readSubmissionOnce(const fs::path& file, const std::string& studentFile) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP)
      throw Error(studentFile + ": is a symbolic link; a submission must be the student's own regular file");
    throw Error(studentFile + ": cannot open it: " + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw Error(studentFile + ": cannot read it: " + std::strerror(errno));
  if (!S_ISREG(status.st_mode))
    throw Error(studentFile +
                ": is not a regular file (a FIFO, a device or a folder); a submission must be a .cu file");
  if (static_cast<std::uintmax_t>(status.st_size) > kMaxKernelFileBytes)
    throw Error(studentFile + ": has " + std::to_string(status.st_size) + " bytes; a kernel file may have at most " +
                std::to_string(kMaxKernelFileBytes) + " (1 MiB)");
  // At most the limit, also if the file grows while it is read.
  std::string text(kMaxKernelFileBytes + 1, '\0');
  size_t used = 0;
  while (used < text.size()) {
    const ssize_t got = ::read(fd, text.data() + used, text.size() - used);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error(studentFile + ": cannot read it: " + std::strerror(errno));
    if (got == 0) break;
    used += static_cast<size_t>(got);
  }
  if (used > kMaxKernelFileBytes)
    throw Error(studentFile + ": has more than " + std::to_string(kMaxKernelFileBytes) +
                " bytes (1 MiB), the most a kernel file may have");
  text.resize(used);
  return text;
}

// At most `limit` bytes of `path`; throws naming the file when it is larger.
std::string readBounded(const fs::path& path, std::uintmax_t limit, const std::string& what) {
  std::error_code error;
  const std::uintmax_t size = fs::file_size(path, error);
  if (error) throw Error(path.string() + ": the compiler's " + what + " is missing");
  if (size > limit)
    throw Error(path.string() + ": the compiler's " + what + " has " + std::to_string(size) + " bytes, more than the " +
                std::to_string(limit) + " ConvScope reads");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (static_cast<std::uintmax_t>(in.gcount()) != size) throw Error(path.string() + ": cannot read the " + what);
  return bytes;
}

json diagnosticsToJson(const std::vector<KernelDiagnostic>& diagnostics) {
  json list = json::array();
  for (const KernelDiagnostic& d : diagnostics)
    list.push_back({{"file", d.file}, {"line", d.line}, {"message", d.message}});
  return list;
}

std::string architectureFor(const SubmittedKernelOptions& options) {
  if (!options.architecture.empty()) return options.architecture;
  const UserKernelCompiler& compiler = userKernelCompiler();
  return compiler.defaultArchitecture ? compiler.defaultArchitecture() : std::string("sm_90");
}

std::shared_ptr<const SubmittedKernel> compileSubmitted(const std::string& text, const std::string& studentFile,
                                                        const SubmittedKernelOptions& options,
                                                        const std::function<bool()>& keepGoing) {
  auto kernel = std::make_shared<SubmittedKernel>();
  kernel->studentFile = studentFile;
  kernel->bytes = text.size();
  kernel->contentHash = hex64(sipHash24(text, 0, 0));
  kernel->source = parseUserKernelSource(studentFile, text);
  kernel->compiled.source = kernel->source;
  kernel->folder = makePrivateFolder("convscope-submission-");
  writePrivateFile(kernel->copy(), text);

  const std::string architecture = architectureFor(options);
  kernel->compiled.architecture = architecture;
  if (const std::string why = userKernelCompiler().unavailableReason(); !why.empty()) {
    kernel->compiled.errors.push_back({studentFile, 0, why});
    kernel->inspection.kernel = kernel->compiled;
    return kernel;
  }
  std::vector<std::string> argv = {options.program.string(), "kernel",    "compile-isolated", kernel->folder.string(),
                                   "--student-file",         studentFile, "--arch",           architecture};
  if (options.skipIncludeFilterForTests) argv.push_back("--skip-include-filter-for-tests");
  const ChildOutcome child = runChildProcess(argv, options.compileTimeLimitSeconds, keepGoing, 4'000'000'000);
  try {
    kernel->compiled = readCompiledKernel(kernel->folder);
    kernel->compiled.source = kernel->source;
    const json record = json::parse(readBounded(kernel->compiledFile(), kMaxCompilerLogBytes * 4, "result"));
    const json sandbox = record.value("sandbox", json::object());
    kernel->sandbox.enforced = sandbox.value("enforced", false);
    kernel->sandbox.abi = sandbox.value("abi", 0);
    kernel->sandbox.reason = sandbox.value("reason", std::string());
  } catch (const std::exception& e) {
    // The compiling process did not finish: a compile that never ends, or a compiler crash. The
    // student's file is the cause as far as anyone can tell; the message says which happened.
    kernel->compilerFailure =
        child.timedOut
            ? "the compiler did not finish within " +
                  std::to_string(static_cast<int>(options.compileTimeLimitSeconds)) + " s, so its process was stopped"
        : child.overMemory ? "the compiler's process passed its memory limit and was stopped"
        : child.cancelled
            ? "cancelled"
            : "the compiler's process " + child.describe(options.compileTimeLimitSeconds) + " without a result";
    kernel->compiled = CompiledUserKernel{};
    kernel->compiled.source = kernel->source;
    kernel->compiled.architecture = architecture;
    kernel->compiled.errors.push_back({studentFile, 0, "did not compile: " + kernel->compilerFailure});
    kernel->childDetail = e.what();
  }
  kernel->inspection = kernel->compiled.ok() && userKernelCompiler().inspectCompiled
                           ? userKernelCompiler().inspectCompiled(kernel->compiled)
                           : UserKernelInspection{kernel->compiled, {}, {}, {}, {}};
  return kernel;
}

}  // namespace

// A fresh folder only this user can enter, named by a random number (not a guessable pid), made
// with its final permissions: there is no moment when another user could enter it.
fs::path makePrivateFolder(const std::string& prefix) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    const fs::path folder = fs::temp_directory_path() / (prefix + hex64(secureRandom64()));
    if (::mkdir(folder.c_str(), 0700) == 0) return folder;
    if (errno != EEXIST) throw Error(folder.string() + ": cannot make a private folder: " + std::strerror(errno));
  }
  throw Error("cannot make a private folder in " + fs::temp_directory_path().string());
}

void writePrivateFile(const fs::path& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw Error(path.string() + ": cannot write it: " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      ::close(fd);
      throw Error(path.string() + ": cannot write it: " + std::strerror(errno));
    }
    done += static_cast<size_t>(wrote);
  }
  ::close(fd);
}

SubmittedKernel::~SubmittedKernel() {
  if (folder.empty()) return;
  std::error_code ignored;
  fs::remove_all(folder, ignored);
}

std::shared_ptr<const SubmittedKernel> submitKernel(const fs::path& file, const std::string& studentFile,
                                                    const SubmittedKernelOptions& options,
                                                    const std::function<bool()>& keepGoing) {
  return compileSubmitted(readSubmissionOnce(file, studentFile), studentFile, options, keepGoing);
}

std::shared_ptr<const SubmittedKernel> submitKernelText(const std::string& text, const std::string& studentFile,
                                                        const SubmittedKernelOptions& options,
                                                        const std::function<bool()>& keepGoing) {
  if (text.size() > kMaxKernelFileBytes)
    throw Error(studentFile + ": has " + std::to_string(text.size()) + " bytes; a kernel file may have at most " +
                std::to_string(kMaxKernelFileBytes) + " (1 MiB)");
  return compileSubmitted(text, studentFile, options, keepGoing);
}

int runIsolatedCompile(const IsolatedCompileRequest& request, const std::vector<fs::path>& toolkitFolders,
                       const std::function<void()>& warmUp,
                       const std::function<CompiledUserKernel(const UserKernelSource&, const std::string&)>& compile) {
  if (warmUp) warmUp();
  // The wall goes up before a byte of the student's file is read.
  const SandboxReport sandbox = restrictFileAccess(toolkitFolders, {request.folder});
  json record = {{"schema", "convscope-compiled-kernel/1"},
                 {"sandbox", {{"enforced", sandbox.enforced}, {"abi", sandbox.abi}, {"reason", sandbox.reason}}}};
  const fs::path source = request.folder / "source.cu";
  std::ifstream in(source, std::ios::binary);
  std::string text(kMaxKernelFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  if (!in.eof() || text.size() > kMaxKernelFileBytes)
    throw Error(source.string() + ": cannot read the copy to compile");
  UserKernelSource parsed = parseUserKernelSource(request.studentFile, text);
  if (request.skipIncludeFilter) {
    // Tests of the second wall alone: the compiler sees what the filter refused.
    std::vector<KernelDiagnostic> kept;
    for (const KernelDiagnostic& problem : parsed.problems) {
      bool refused = false;
      for (const KernelDiagnostic& r : parsed.refusedIncludes)
        refused = refused || (r.line == problem.line && r.message == problem.message);
      if (!refused) kept.push_back(problem);
    }
    parsed.problems = kept;
    parsed.refusedIncludes.clear();
  }
  const CompiledUserKernel kernel = compile(parsed, request.architecture);
  std::string log = kernel.log;
  if (log.size() > kMaxCompilerLogBytes) log = log.substr(0, kMaxCompilerLogBytes) + "\n(the rest cut)";
  std::string ptx = kernel.ptx.size() > kMaxCompiledModuleBytes ? std::string() : kernel.ptx;
  record["errors"] = diagnosticsToJson(kernel.errors);
  record["log"] = log;  // bytes of the student's file may be in it: dumped with invalid UTF-8 replaced
  record["architecture"] = kernel.architecture;
  record["loweredName"] = kernel.loweredName;
  record["moduleBytes"] = kernel.image.size();
  writePrivateFile(request.folder / "module.bin", std::string(kernel.image.begin(), kernel.image.end()));
  writePrivateFile(request.folder / "module.ptx", ptx);
  writePrivateFile(request.folder / "compiled.json", record.dump(-1, ' ', false, json::error_handler_t::replace));
  return 0;
}

CompiledUserKernel readCompiledKernel(const fs::path& folder) {
  const fs::path file = folder / "compiled.json";
  json record;
  try {
    record = json::parse(readBounded(file, kMaxCompilerLogBytes * 4, "result"));
  } catch (const json::exception& e) {
    throw Error(file.string() + ": the compiler's result is not JSON: " + e.what());
  }
  if (record.value("schema", std::string()) != "convscope-compiled-kernel/1")
    throw Error(file.string() + ": not a compiled kernel of this ConvScope");
  CompiledUserKernel kernel;
  try {
    for (const json& e : record.at("errors"))
      kernel.errors.push_back(
          {e.at("file").get<std::string>(), e.at("line").get<int>(), e.at("message").get<std::string>()});
    kernel.log = record.at("log").get<std::string>();
    kernel.architecture = record.at("architecture").get<std::string>();
    kernel.loweredName = record.at("loweredName").get<std::string>();
  } catch (const json::exception& e) {
    throw Error(file.string() + ": a field of the compiler's result is missing or wrong: " + e.what());
  }
  const std::string module = readBounded(folder / "module.bin", kMaxCompiledModuleBytes, "module");
  kernel.image.assign(module.begin(), module.end());
  kernel.ptx = readBounded(folder / "module.ptx", kMaxCompiledModuleBytes, "PTX");
  if (kernel.ok() && (kernel.image.empty() || kernel.loweredName.empty()))
    throw Error(file.string() + ": the compiler reported success but left no module");
  return kernel;
}

}  // namespace convscope
