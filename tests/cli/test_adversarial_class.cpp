// The held-out adversaries of issue 35 (tests/data/adversarial-class/, expected.json): a class whose
// submissions attack the grader (files the compiler would open, links to another student's work,
// kernels that tell a timed run from a checked one, cache, skip, spin, print, fault) graded as one
// class by convscope-cli grade, run from inside the class folder as course staff might. Each
// submission must get the status the manifest gives for this machine (with or without a GPU), the
// grader must end normally, and no byte of what the attacks aim at (a secret beside the class
// folder and in /tmp, the instructor's solution, another student's file, /etc/passwd's first line)
// may appear in any file under the results folder or in the grader's output.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "app/core/conv/user_kernel_source.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/grading/class_leaderboard.h"
#include "gpu/user_kernel.h"
#include "tests/core/test_support.h"

namespace {

namespace fs = std::filesystem;
using convscope::testing::TempDir;
using nlohmann::json;

const fs::path kClass = fs::path(CONVSCOPE_SOURCE_DIR) / "tests/data/adversarial-class";
const fs::path kNaiveTemplate = fs::path(CONVSCOPE_SOURCE_DIR) / "examples/kernels/naive_conv.cu";
// What inc-absolute-path.cu and inc-digraph.cu include: a fixed name, since a committed file cannot
// know a temporary folder's.
const fs::path kTmpSecret = "/tmp/convscope-adversarial-secret.txt";
// Not a status: the entry has no result and is listed in leaderboard.json's "skipped".
constexpr const char* kSkipped = "skipped";
// /etc/passwd's first line on every Linux machine: what the include attacks on it would show.
constexpr const char* kPasswdCanary = "root:x:0:0";
// What printf-flood.cu prints in every line.
constexpr const char* kKernelOutputMarker = "FORGED-BY-KERNEL";

std::string readBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void writeBytes(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A token nobody could guess or have in a file by chance: 32 hex digits after a prefix.
std::string randomToken(const std::string& prefix) {
  std::random_device random;
  std::string token = prefix;
  for (int i = 0; i < 4; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(random()));
    token += part;
  }
  return token;
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A secret file outside the temporary folder, removed when the test ends however it ends.
struct ScopedFile {
  fs::path path;
  ScopedFile(const fs::path& where, const std::string& bytes) : path(where) { writeBytes(path, bytes); }
  ~ScopedFile() {
    std::error_code ignored;
    fs::remove(path, ignored);
  }
};

struct Outcome {
  int exitCode;
  std::string output;  // stdout and stderr
};

Outcome runShell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buffer{};
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// The entries the test writes: what git cannot hold (a NUL byte in a text file, symbolic links,
// FIFOs), files of a megabyte, and a name that starts with "--". Each is listed in the manifest
// with createdByTest.
void addRunTimeEntries(const fs::path& dir) {
  const std::string naive = readBytes(kNaiveTemplate);
  // A NUL byte, then an include: nothing after the NUL may reach the compiler unread.
  writeBytes(dir / "inc-nul-byte.cu", naive + std::string(1, '\0') + "\n#include \"../secret.txt\"\n");
  // A kernel file of one byte over the limit, and one just under it, both of #define lines.
  std::string macros = naive;
  for (int i = 0; macros.size() < 1'040'000; ++i) macros += "#define FILLER_" + std::to_string(1'000'000 + i) + " 1\n";
  writeBytes(dir / "macros-under-limit.cu", macros);
  std::string over = naive;
  while (over.size() <= convscope::kMaxKernelFileBytes) over += "#define FILLER_OVER 1\n";
  writeBytes(dir / "over-size-limit.cu", over);
  // The landed #include filter looked past every "*/" to the end of the line: quadratic here.
  std::string comments;
  for (int i = 0; i < 250'000; ++i) comments += "/**/";
  writeBytes(dir / "filter-quadratic.cu", naive + comments + "\n");
  // The landed contract reader's std::regex recursed once per character of a line.
  writeBytes(dir / "long-define-line.cu", naive + "#define CONVSCOPE_NOTE " + std::string(900'000, 'x') + "\n");
  // An id the grader hands its child after --only.
  writeBytes(dir / "--rank-me-first.cu", naive);
  // Symbolic links: another student's file, their whole folder, a file outside DIR, an endless file.
  fs::create_directories(dir / "link-other-student");
  fs::create_symlink("../victim/kernel.cu", dir / "link-other-student/kernel.cu");
  fs::create_directory_symlink("victim", dir / "link-folder");
  fs::create_symlink("../secret.txt", dir / "link-secret.cu");
  fs::create_symlink("/dev/zero", dir / "link-dev-zero.cu");
  // FIFOs: a grader that opens one for reading waits for a writer that never comes.
  ASSERT_EQ(::mkfifo((dir / "fifo.cu").c_str(), 0644), 0);
  fs::create_directories(dir / "fifo-folder");
  ASSERT_EQ(::mkfifo((dir / "fifo-folder/kernel.cu").c_str(), 0644), 0);
}

// The manifest's statuses for this machine: its column, the statuses it also accepts there, and,
// in a build without a CUDA compiler, "not graded: no CUDA compiler here" for every status that
// needs the compiler (only the filter's and the contract's refusals, and what discovery skips, are
// said without it).
std::set<std::string> allowedStatuses(const json& entry, bool gpu, bool compiler) {
  const std::string column = gpu ? "gpu" : "noGpu";
  std::set<std::string> allowed = {entry.at(column).get<std::string>()};
  for (const json& status : entry.value("alsoAccepted", json::object()).value(column, json::array()))
    allowed.insert(status.get<std::string>());
  if (compiler) return allowed;
  // Without a compiler a contract is still refused where the file's text breaks it; a break that
  // only the compiled code shows ("contractInCompiledCode": a mangled name, extern __shared__ read
  // from the PTX) is not seen, and the kernel is "not graded".
  const bool seenInText = !entry.value("contractInCompiledCode", false);
  std::set<std::string> withoutCompiler;
  for (const std::string& status : allowed)
    withoutCompiler.insert((status == convscope::kGradeBreaksContract && seenInText) || status == kSkipped
                               ? status
                               : std::string(convscope::kGradeNoCompiler));
  return withoutCompiler;
}

// What became of a submission: its result's status, "skipped" when discovery listed it (a folder
// by its name, or the refused file inside it), or a description of its absence.
std::string statusOf(const fs::path& results, const json& board, const std::string& id) {
  const fs::path file = results / "submissions" / (id + ".json");
  if (fs::exists(file)) return json::parse(readBytes(file)).value("status", "(a result without a status)");
  for (const json& skipped : board.value("skipped", json::array())) {
    const std::string path = skipped.value("path", "");
    if ((path == id || path == id + ".cu" || path.rfind(id + "/", 0) == 0) && !skipped.value("reason", "").empty())
      return kSkipped;
  }
  return "(no result, and not listed as skipped)";
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

TEST(AdversarialClass, EveryAttackGetsItsStatusAndNoSecretReachesAResultFileOrTheGradersOutput) {
  const bool gpu = convscope::gpuInfo().usable;
  if (!gpu && convscope::testing::gpuRequired())
    FAIL() << "CONVSCOPE_REQUIRE_GPU is set but no GPU is usable (" << convscope::gpuInfo().unusableReason
           << "): the manifest's GPU column would not be checked";
  const bool compiler = convscope::gpu::userKernelCompilerUnavailableReason().empty();
  const json manifest = json::parse(readBytes(kClass / "expected.json"));
  ASSERT_EQ(manifest.at("schema"), 1);

  // The class, the secrets the attacks name, and the results, in one temporary folder.
  TempDir temp;
  const fs::path dir = temp.path() / "class", results = temp.path() / "results";
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(kClass))
    if (entry.path().filename() != "expected.json")
      fs::copy(entry.path(), dir / entry.path().filename(), fs::copy_options::recursive);
  ASSERT_NO_FATAL_FAILURE(addRunTimeEntries(dir));
  const std::string secret = randomToken("convscope-secret-");
  const std::string instructorToken = randomToken("convscope-instructor-");
  const std::string victimToken = randomToken("convscope-victim-");
  // Compiled, a secret file's second line stops the compiler with the token in its message.
  const std::string secretText = "the course's secret is " + secret + "\n#error " + secret + "\n";
  writeBytes(temp.path() / "secret.txt", secretText);
  const ScopedFile tmpSecret(kTmpSecret, secretText);
  writeBytes(temp.path() / "instructor/solution.cu",
             "// The instructor's solution: " + instructorToken + "\n" + readBytes(kNaiveTemplate));
  writeBytes(dir / "victim/kernel.cu", readBytes(dir / "victim/kernel.cu") + "// " + victimToken + "\n");

  // The attacks' bytes survived the checkout (no editor, formatter or line-end conversion undid
  // them), and the folder holds exactly the manifest's entries.
  EXPECT_EQ(readBytes(dir / "inc-cr-only.cu").find('\n'), std::string::npos) << "inc-cr-only.cu holds an LF";
  EXPECT_NE(readBytes(dir / "inc-backslash-space-splice.cu").find("\\ \n#include"), std::string::npos);
  EXPECT_NE(readBytes(dir / "inc-backslash-tab-crlf.cu").find("\\\t\r\n#include"), std::string::npos);
  EXPECT_NE(readBytes(dir / "inc-trigraph.cu").find("?\?=include"), std::string::npos);
  std::set<std::string> listed, present;
  for (const json& entry : manifest.at("submissions"))
    listed.insert(fs::path(entry.at("file").get<std::string>()).begin()->string());
  for (const auto& entry : fs::directory_iterator(dir)) present.insert(entry.path().filename().string());
  ASSERT_EQ(present, listed) << "every entry of the class folder needs a row in expected.json, and every row an entry";

  // One class, graded from inside its folder: a relative path in a kernel is then relative to the
  // class, where another student's file and the secret beside the folder are.
  const std::string command = "cd " + quoted(dir.string()) + " && " + (gpu ? "" : "CUDA_VISIBLE_DEVICES= ") +
                              "timeout -k 30 3300 " + quoted(CONVSCOPE_CLI_PATH) + " grade " + quoted(dir.string()) +
                              " --out " + quoted(results.string()) + " --jobs 2 --time-limit 60 --retime-top 2";
  const Outcome r = runShell(command);
  ASSERT_NE(r.exitCode, 124) << "the grader did not finish within 55 minutes:\n" << r.output;
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const json board = json::parse(readBytes(results / "leaderboard.json"));

  // Each submission's status, as the manifest gives it for this machine.
  for (const json& entry : manifest.at("submissions")) {
    const std::string id = entry.at("id");
    const std::set<std::string> allowed = allowedStatuses(entry, gpu, compiler);
    const std::string status = statusOf(results, board, id);
    std::string wanted;
    for (const std::string& s : allowed) wanted += (wanted.empty() ? "'" : " or '") + s + "'";
    const fs::path resultFile = results / "submissions" / (id + ".json");
    // The grader's own words, so that a wrong status shows why it was given.
    const std::string said = fs::exists(resultFile) ? json::parse(readBytes(resultFile)).value("message", "") : "";
    EXPECT_EQ(allowed.count(status), 1u) << id << " (" << entry.value("attack", "") << "): '" << status
                                         << "', expected " << wanted << " (" << entry.value("stoppedBy", "")
                                         << "); the grader said: " << said;
    if (status == kSkipped) continue;
    // One progress line per graded submission, and a message naming the student's file, never the
    // grader's folders.
    EXPECT_NE(r.output.find(id + "  " + status), std::string::npos) << id;
    EXPECT_EQ(said.find(temp.path().string()), std::string::npos) << id << ": " << said;
  }

  // Nothing the attacks aim at, in any file of the results folder (hidden ones too) or in what the
  // grader printed.
  const std::map<std::string, std::string> canaries = {{"the secret beside the class folder and in /tmp", secret},
                                                       {"the instructor's solution", instructorToken},
                                                       {"the victim's file", victimToken},
                                                       {"/etc/passwd's first line", kPasswdCanary}};
  size_t filesRead = 0;
  for (const auto& entry : fs::recursive_directory_iterator(results)) {
    if (!fs::is_regular_file(entry.symlink_status())) continue;
    const std::string bytes = readBytes(entry.path());
    ++filesRead;
    for (const auto& [what, canary] : canaries)
      EXPECT_EQ(bytes.find(canary), std::string::npos) << entry.path() << " holds " << what;
  }
  EXPECT_GE(filesRead, 3u);  // the submissions' results and the leaderboard at least
  for (const auto& [what, canary] : canaries)
    EXPECT_EQ(r.output.find(canary), std::string::npos) << "the grader's output holds " << what;

  // What a kernel prints is its own: not the grader's lines, not the published leaderboard.
  EXPECT_EQ(r.output.find(kKernelOutputMarker), std::string::npos) << "a kernel's printf reached the grader's output";
  for (const char* file : {"leaderboard.json", "leaderboard.csv", "leaderboard.html"})
    EXPECT_EQ(readBytes(results / file).find(kKernelOutputMarker), std::string::npos) << file;

  // A compiler message is text in the published page, never markup: the forged row, the script and
  // the image of error-html-injection.cu are escaped (the page's own sorting script aside).
  const std::string html = readBytes(results / "leaderboard.html");
  EXPECT_EQ(lowercase(html).find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert("), std::string::npos);
  EXPECT_EQ(html.find("<td>error-html-injection</td><td>passed</td>"), std::string::npos);
  const fs::path injected = results / "submissions/error-html-injection.json";
  const std::string injectedMessage =
      fs::exists(injected) ? json::parse(readBytes(injected)).value("message", "") : std::string();
  if (injectedMessage.find("<script>alert(") != std::string::npos) {
    EXPECT_NE(html.find("&lt;script&gt;alert("), std::string::npos) << "its message is missing from the page";
  }
}

}  // namespace
