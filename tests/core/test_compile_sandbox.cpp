// The second wall (app/core/util/file_sandbox.h, app/core/engine/submitted_kernel.h): the process
// that compiles a student's kernel can open nothing but the CUDA toolkit's headers and its own
// private folder. Tested alone, with the #include filter switched off by its test hook: every
// way of naming another file reaches the compiler and must fail to open, and no byte of the file
// it names may come back. Also: a submission is read once, from a regular file, never through a
// symbolic link, and its private folder is the grader's alone.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "app/core/conv/user_kernel_source.h"
#include "app/core/engine/submitted_kernel.h"
#include "app/core/util/file_sandbox.h"
#include "gpu/user_kernel.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

namespace fs = std::filesystem;

const fs::path kTemplates = fs::path(CONVSCOPE_SOURCE_DIR) / "examples/kernels";

#define SKIP_WITHOUT_LANDLOCK() \
  if (landlockAbi() == 0) GTEST_SKIP() << "this Linux kernel has no Landlock: " << restrictFileAccess({}, {}).reason

#define SKIP_WITHOUT_NVRTC() \
  if (const std::string reason = gpu::userKernelCompilerUnavailableReason(); !reason.empty()) GPU_TEST_SKIP() << reason

std::string readAll(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A token nobody could guess, so that finding it anywhere means the file was read.
std::string secretToken() {
  std::random_device random;
  return "SECRET" + std::to_string(random()) + "x" + std::to_string(random());
}

std::string templateText() {
  return readAll(kTemplates / "naive_conv.cu");
}

// The template with `lines` after its first line.
std::string templateWith(const std::string& lines) {
  const std::string text = templateText();
  const size_t firstLineEnd = text.find('\n') + 1;
  return text.substr(0, firstLineEnd) + lines + text.substr(firstLineEnd);
}

SubmittedKernelOptions options(bool filter = true) {
  SubmittedKernelOptions o;
  o.program = CONVSCOPE_CLI_PATH;
  o.architecture = "sm_90";
  o.skipIncludeFilterForTests = !filter;
  return o;
}

// In a child process: restricts itself, then tries each action; exit code bit i set when action i
// did what the wall allows (so the parent sees every outcome at once).
int inRestrictedChild(const std::vector<fs::path>& readOnly, const std::vector<fs::path>& readWrite,
                      const std::vector<std::function<bool()>>& actions) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!restrictFileAccess(readOnly, readWrite).enforced) ::_exit(255);
    int bits = 0;
    for (size_t i = 0; i < actions.size(); ++i)
      if (actions[i]()) bits |= 1 << i;
    ::_exit(bits);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool canRead(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

bool canCreate(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT, 0600);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

TEST(FileSandbox, ARestrictedProcessOpensOnlyBeneathItsFolders) {
  SKIP_WITHOUT_LANDLOCK();
  const testing::TempDir readable, writable, elsewhere;
  std::ofstream(readable.path() / "header.h") << "ok";
  std::ofstream(elsewhere.path() / "secret.txt") << "secret";
  const int outcome = inRestrictedChild(
      {readable.path()}, {writable.path()},
      {[&] { return canRead(readable.path() / "header.h"); },     // 1: allowed
       [&] { return canCreate(writable.path() / "out.json"); },   // 2: allowed
       [&] { return canRead(elsewhere.path() / "secret.txt"); },  // 4: refused
       [&] { return canRead("/etc/passwd"); },                    // 8: refused
       [&] { return canCreate(readable.path() / "planted.h"); },  // 16: refused (read only)
       [&] { return canRead(writable.path() / ".." / fs::path(elsewhere.path()).filename() / "secret.txt"); }});  // 32
  ASSERT_NE(outcome, 255) << "the child could not restrict itself";
  EXPECT_EQ(outcome, 1 | 2) << "bits: 1 header read, 2 result written, 4 secret read, 8 /etc/passwd read, "
                               "16 header planted, 32 secret read through ..";
}

// The report says why where there is no Landlock; where there is, it names the ABI.
TEST(FileSandbox, TheReportNamesTheAbiOrWhyNot) {
  const int abi = landlockAbi();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const SandboxReport report = restrictFileAccess({}, {});
    const bool right = abi > 0 ? report.enforced && report.abi == abi &&
                                     report.describe() == "enforced (Landlock ABI " + std::to_string(abi) + ")"
                               : !report.enforced && !report.reason.empty();
    ::_exit(right ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

struct Bypass {
  std::string name;
  std::string lines;  // put after the template's first line
};

// The second wall alone: with the filter off, every form reaches NVRTC, which must fail to open
// the file; the secret appears nowhere in what comes back.
TEST(SecondWall, EveryBypassFailsToOpenWithTheFilterSwitchedOff) {
  SKIP_WITHOUT_LANDLOCK();
  SKIP_WITHOUT_NVRTC();
  const testing::TempDir classFolder;
  const std::string secret = secretToken();
  // The instructor's solution beside the class, another student's kernel, a note beside the
  // student's own file: none may be read.
  const fs::path solution = classFolder.path() / "solution.h";
  fs::create_directories(classFolder.path() / "alice");
  fs::create_directories(classFolder.path() / "bob");
  std::ofstream(solution) << "#error " << secret << "\n" << secret << "\n";
  std::ofstream(classFolder.path() / "bob" / "kernel.cu") << "#error " << secret << "\n";
  std::ofstream(classFolder.path() / "alice" / "notes.h") << "#error " << secret << "\n";
  const std::string absolute = solution.string();
  const std::string student = (classFolder.path() / "alice" / "kernel.cu").string();
  const std::vector<Bypass> bypasses = {
      {"absolute path", "#include \"" + absolute + "\"\n"},
      {"angle brackets", "#include <" + absolute + ">\n"},
      {"a file beside the submission", "#include \"notes.h\"\n"},
      {"another submission through ..", "#include \"../bob/kernel.cu\"\n"},
      {"backslash and a space", "// a comment \\ \n#include \"" + absolute + "\"\n"},
      {"a comment inside the directive", "# /*\n*/ include \"" + absolute + "\"\n"},
      {"digraph", "%:include \"" + absolute + "\"\n"},
      {"trigraph", "?\?=include \"" + absolute + "\"\n"},
      {"include_next", "#include_next \"" + absolute + "\"\n"},
      {"computed name", "#define WHERE \"" + absolute + "\"\n#include WHERE\n"},
      {"__has_include built by pasting", "#define JOIN(a, b) a##b\n#if JOIN(__has_, include)(\"" + absolute +
                                             "\")\n#error found " + secret.substr(0, 6) + "\n#endif\n"},
  };
  for (const Bypass& bypass : bypasses) {
    SCOPED_TRACE(bypass.name);
    const std::shared_ptr<const SubmittedKernel> kernel =
        submitKernelText(templateWith(bypass.lines), student, options(/*filter=*/false));
    ASSERT_TRUE(kernel->sandbox.enforced) << kernel->sandbox.reason;
    EXPECT_EQ(kernel->compilerFailure, "");
    const std::string everything = kernel->compiled.errorText() + kernel->compiled.log + kernel->compiled.ptx +
                                   std::string(kernel->compiled.image.begin(), kernel->compiled.image.end());
    EXPECT_EQ(everything.find(secret), std::string::npos) << everything;
    EXPECT_EQ(everything.find("found SECRET"), std::string::npos) << everything;
  }
  // The wall is what stopped them: with neither wall (NVRTC in this unrestricted process, the
  // filter's verdict dropped) the same include reads the file and quotes it back.
  UserKernelSource unfiltered = parseUserKernelSource(student, templateWith("#include \"" + absolute + "\"\n"));
  ASSERT_FALSE(unfiltered.refusedIncludes.empty());
  unfiltered.refusedIncludes.clear();
  unfiltered.problems.clear();
  gpu::UserKernelBuildOptions build;
  build.architecture = "sm_90";
  const gpu::CompiledUserKernel unrestricted = gpu::compileUserKernel(unfiltered, build);
  EXPECT_NE(unrestricted.log.find(secret), std::string::npos) << unrestricted.log;
}

// With the filter on, the same file is refused before the compiler sees it, on its line.
TEST(SecondWall, WithTheFilterOnTheRefusalNamesTheStudentsLine) {
  SKIP_WITHOUT_NVRTC();
  const std::shared_ptr<const SubmittedKernel> kernel =
      submitKernelText(templateWith("#include \"/etc/passwd\"\n"), "class/alice/kernel.cu", options());
  ASSERT_FALSE(kernel->ok());
  EXPECT_NE(kernel->compiled.errorText().find("class/alice/kernel.cu:2: #include \"/etc/passwd\" is refused"),
            std::string::npos)
      << kernel->compiled.errorText();
  EXPECT_EQ(kernel->compiled.errorText().find("root:"), std::string::npos);
}

TEST(SubmittedKernel, ACorrectKernelCompilesOnceInTheSandboxWithItsFigures) {
  SKIP_WITHOUT_NVRTC();
  const std::shared_ptr<const SubmittedKernel> kernel =
      submitKernel(kTemplates / "tiled_conv.cu", "alice/tiled_conv.cu", options());
  ASSERT_TRUE(kernel->ok()) << kernel->compiled.errorText() << kernel->compiled.log << kernel->childDetail;
  EXPECT_EQ(kernel->compiled.architecture, "sm_90");
  EXPECT_EQ(kernel->compiled.loweredName, "convscope_conv");
  EXPECT_FALSE(kernel->compiled.image.empty());
  EXPECT_NE(kernel->compiled.ptx.find(".entry convscope_conv"), std::string::npos);
  EXPECT_EQ(kernel->sandbox.enforced, landlockAbi() > 0) << kernel->sandbox.reason;
  // ptxas's report came back with the module: the grader's figures need no second compile.
  EXPECT_TRUE(kernel->inspection.resources.found) << kernel->compiled.log;
  EXPECT_GT(kernel->inspection.resources.registers, 0);
  EXPECT_GT(kernel->inspection.resources.sharedStaticBytes, 0);  // the tiled template stages a tile
  EXPECT_EQ(kernel->source.id, "user-tiled_conv");
  EXPECT_EQ(kernel->contentHash.size(), 16u);
}

TEST(SubmittedKernel, IsReadOnceIntoAPrivateFolderAndLaterChangesDoNothing) {
  SKIP_WITHOUT_NVRTC();
  const testing::TempDir dir;
  const fs::path file = dir.path() / "mine.cu";
  const std::string original = templateText();
  std::ofstream(file) << original;
  fs::path folder;
  {
    const std::shared_ptr<const SubmittedKernel> kernel = submitKernel(file, "mine.cu", options());
    ASSERT_TRUE(kernel->ok()) << kernel->compiled.errorText();
    folder = kernel->folder;
    struct stat status {};
    ASSERT_EQ(::stat(folder.c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 0777, 0700u);
    ASSERT_EQ(::stat(kernel->copy().c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 0777, 0600u);
    // The student changes the file after it was read: the copy, the source and the module stay.
    std::ofstream(file) << "garbage";
    EXPECT_EQ(readAll(kernel->copy()), original);
    EXPECT_EQ(kernel->source.text, original);
    EXPECT_EQ(readCompiledKernel(kernel->folder).image, kernel->compiled.image);
  }
  EXPECT_FALSE(fs::exists(folder));  // the private folder goes with the kernel
}

TEST(SubmittedKernel, ASymbolicLinkAFifoOrAFolderIsRefusedNamingTheStudentsFile) {
  const testing::TempDir dir;
  const fs::path bob = dir.path() / "bob.cu";
  std::ofstream(bob) << templateText();
  fs::create_symlink(bob, dir.path() / "alice.cu");
  testing::expectError([&] { submitKernel(dir.path() / "alice.cu", "alice/kernel.cu", options()); },
                       {"alice/kernel.cu", "symbolic link"});
  ASSERT_EQ(::mkfifo((dir.path() / "fifo.cu").c_str(), 0600), 0);
  testing::expectError([&] { submitKernel(dir.path() / "fifo.cu", "carol/kernel.cu", options()); },
                       {"carol/kernel.cu", "not a regular file"});
  fs::create_directories(dir.path() / "folder.cu");
  testing::expectError([&] { submitKernel(dir.path() / "folder.cu", "dave/kernel.cu", options()); },
                       {"dave/kernel.cu", "not a regular file"});
  testing::expectError([&] { submitKernel(dir.path() / "missing.cu", "erin/kernel.cu", options()); },
                       {"erin/kernel.cu", "cannot open"});
  std::ofstream(dir.path() / "huge.cu") << std::string(kMaxKernelFileBytes + 1, ' ');
  testing::expectError([&] { submitKernel(dir.path() / "huge.cu", "frank/kernel.cu", options()); },
                       {"frank/kernel.cu", "1 MiB"});
}

}  // namespace
}  // namespace convscope
