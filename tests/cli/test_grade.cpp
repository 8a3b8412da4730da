// convscope-cli grade as course staff run it (docs/class-mode.md): a folder of submissions graded
// into a results folder, checked against the per-submission JSON files the grader wrote (the
// leaderboard's rows, CSV and HTML recomputed here), the ranking on made-up timed results, the
// anonymized board, the incremental re-run, the Slurm scripts of --dry-run, the refusal of links
// and FIFOs, the seed each grading draws, and a timing that shares the machine with nothing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "app/core/device/gpu_platform.h"
#include "app/core/grading/class_leaderboard.h"
#include "app/core/util/hashing.h"
#include "gpu/user_kernel.h"
#include "tests/core/test_support.h"

namespace {

namespace fs = std::filesystem;
using convscope::testing::TempDir;
using nlohmann::json;

struct Outcome {
  int exitCode;
  std::string output;
};

// `withGpu` false hides every GPU from the program (CUDA_VISIBLE_DEVICES empty): the grading
// steps any machine runs, fast on the GPU machine too.
Outcome runCli(const std::string& arguments, bool withGpu = false) {
  const std::string command =
      std::string(withGpu ? "" : "CUDA_VISIBLE_DEVICES= ") + "'" + CONVSCOPE_CLI_PATH + "' " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buffer{};
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string readText(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeText(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

json readJson(const fs::path& path) {
  return json::parse(readText(path));
}

const fs::path kExamples = fs::path(CONVSCOPE_SOURCE_DIR) / "examples/kernels";
const fs::path kTestKernels = fs::path(CONVSCOPE_SOURCE_DIR) / "tests/data/kernels";

std::string quoted(const fs::path& p) {
  std::string text = "'";
  text += p.string();
  text += '\'';
  return text;
}

// A small class: every status this machine can tell apart, and two entries that are no submission.
struct SmallClass {
  TempDir temp;
  fs::path dir = temp.path() / "class";
  fs::path results = temp.path() / "results";
  SmallClass() {
    fs::create_directories(dir);
    fs::copy_file(kExamples / "naive_conv.cu", dir / "alice-naive.cu");
    fs::create_directories(dir / "bob-tiled");
    fs::copy_file(kExamples / "tiled_conv.cu", dir / "bob-tiled/my_conv.cu");
    fs::copy_file(kTestKernels / "forgets_left_padding.cu", dir / "carol-padding.cu");
    fs::copy_file(kTestKernels / "syntax_error.cu", dir / "dave-syntax.cu");
    fs::copy_file(kTestKernels / "wrong_signature.cu", dir / "erin-signature.cu");
    // The contract's macros: one missing (the file compiles, but its launch is not stated).
    std::string noBlock = readText(kExamples / "naive_conv.cu");
    noBlock = std::regex_replace(noBlock, std::regex("#define CONVSCOPE_BLOCK_X[^\n]*\n"), "");
    writeText(dir / "frank-macro.cu", noBlock);
    writeText(dir / "grace-notes.txt", "not a kernel\n");
    fs::create_directories(dir / "heidi-twice");
    fs::copy_file(kExamples / "naive_conv.cu", dir / "heidi-twice/a.cu");
    fs::copy_file(kExamples / "tiled_conv.cu", dir / "heidi-twice/b.cu");
  }
  Outcome grade(const std::string& extra = "") const {
    return runCli("grade " + quoted(dir) + " --out " + quoted(results) + " --jobs 2 " + extra);
  }
};

const std::vector<std::string> kIds = {"alice-naive", "bob-tiled",      "carol-padding",
                                       "dave-syntax", "erin-signature", "frank-macro"};

// Simple CSV reading: quoted fields with "" for a quote, commas and newlines inside quotes.
std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool inQuotes = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inQuotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        inQuotes = false;
      else
        field += c;
    } else if (c == '"') {
      inQuotes = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field), field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

TEST(Grade, EverySubmissionGetsItsStatusAndMessageAndStrayEntriesAreSkippedByName) {
  const SmallClass c;
  const Outcome r = c.grade();
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::map<std::string, std::string> expected = {
      {"alice-naive", "compiled, not run: no GPU"},   {"bob-tiled", "compiled, not run: no GPU"},
      {"carol-padding", "compiled, not run: no GPU"}, {"dave-syntax", "does not compile"},
      {"erin-signature", "breaks the contract"},      {"frank-macro", "breaks the contract"}};
  // A build or machine without a CUDA compiler grades nothing past the contract's macros (frank's
  // are malformed): the others are not the students' fault.
  if (!convscope::gpu::userKernelCompilerUnavailableReason().empty())
    for (const char* id : {"alice-naive", "bob-tiled", "carol-padding", "dave-syntax", "erin-signature"})
      expected[id] = convscope::kGradeNoCompiler;
  for (const auto& [id, status] : expected) {
    const json s = readJson(c.results / "submissions" / (id + ".json"));
    EXPECT_EQ(s["schema"], 1) << id;
    EXPECT_EQ(s["id"], id);
    EXPECT_EQ(s["status"], status) << id << ": " << s["message"];
    // One line per finished submission on the terminal: id and status.
    EXPECT_NE(r.output.find(id + "  " + status), std::string::npos) << r.output;
    // A message names the student's file as the student knows it, never the grader's folders.
    EXPECT_EQ(s["message"].get<std::string>().find(c.temp.path().string()), std::string::npos) << s["message"];
    EXPECT_NE(std::stoull(s["seed"].get<std::string>()), 0u);
  }
  const bool compiled = convscope::gpu::userKernelCompilerUnavailableReason().empty();
  if (compiled) {  // the compiler's and the contract's words
    EXPECT_NE(
        readJson(c.results / "submissions/dave-syntax.json")["message"].get<std::string>().find("dave-syntax.cu:"),
        std::string::npos);
    EXPECT_NE(readJson(c.results / "submissions/erin-signature.json")["message"].get<std::string>().find("parameters"),
              std::string::npos);
  } else {  // why nothing was compiled
    EXPECT_NE(readJson(c.results / "submissions/dave-syntax.json")["message"].get<std::string>().find("not compiled"),
              std::string::npos);
  }
  EXPECT_NE(
      readJson(c.results / "submissions/frank-macro.json")["message"].get<std::string>().find("CONVSCOPE_BLOCK_X"),
      std::string::npos);
  // The folder's file is the submission (the folder's name is the id); compiled ones have figures.
  EXPECT_EQ(readJson(c.results / "submissions/bob-tiled.json")["file"], "bob-tiled/my_conv.cu");
  // Its absolute path too, where the window's Class tab opens it from (the results do not record DIR).
  EXPECT_TRUE(fs::equivalent(readJson(c.results / "submissions/bob-tiled.json")["path"].get<std::string>(),
                             c.dir / "bob-tiled/my_conv.cu"));
  EXPECT_EQ(convscope::submissionSource(c.results, "alice-naive").file, fs::absolute(c.dir / "alice-naive.cu"));
  EXPECT_NE(convscope::submissionSource(c.results, "nobody").problem.find("nobody.json"), std::string::npos);
  EXPECT_EQ(readJson(c.results / "submissions/alice-naive.json")["registers"].is_number(), compiled);
  EXPECT_EQ(fs::exists(c.results / "submissions/grace-notes.json"), false);
  EXPECT_EQ(fs::exists(c.results / "submissions/heidi-twice.json"), false);
  const json board = readJson(c.results / "leaderboard.json");
  std::set<std::string> skipped;
  for (const json& s : board["skipped"]) skipped.insert(s["path"].get<std::string>());
  EXPECT_EQ(skipped, (std::set<std::string>{"grace-notes.txt", "heidi-twice"}));
  EXPECT_NE(r.output.find("heidi-twice: a submission folder must hold exactly one .cu file; this one holds 2"),
            std::string::npos)
      << r.output;
  // Each submission's grading drew its own seed (no seed shared by a run, none kept for later runs).
  std::set<std::string> seeds;
  for (const std::string& id : kIds) seeds.insert(readJson(c.results / "submissions" / (id + ".json"))["seed"]);
  EXPECT_EQ(seeds.size(), kIds.size());
  EXPECT_FALSE(fs::exists(c.results / "grading-run.json"));
  // Compiled once, in a process that says whether it held its sandbox; each step's time is kept.
  const json alice = readJson(c.results / "submissions/alice-naive.json");
  if (compiled) {
    ASSERT_TRUE(alice["sandbox"].is_object()) << alice.dump(1);
    EXPECT_TRUE(alice["sandbox"]["enforced"].is_boolean());
    EXPECT_TRUE(alice["sandbox"]["reason"].is_string());
    EXPECT_FALSE(alice["sandbox"]["description"].get<std::string>().empty());
    ASSERT_EQ(alice["steps"].size(), 1u) << alice.dump(1);  // no GPU: compiled only
    EXPECT_EQ(alice["steps"][0]["step"], "compile");
    EXPECT_LE(alice["steps"][0]["startedAt"].get<double>(), alice["steps"][0]["endedAt"].get<double>());
  }
  EXPECT_NE(r.output.find("6 submissions: 0 correct, 0 correct and faster than cuDNN"), std::string::npos) << r.output;
  EXPECT_EQ(board["groups"][0]["reference"], nullptr);
  EXPECT_NE(readText(c.results / "leaderboard.html").find("No reference lines"), std::string::npos);
}

// A link must not grade another student's work (or any file of the machine) under this student's
// name, and a FIFO must not make the grader wait: each is refused by name, whatever it points to.
TEST(Grade, SymbolicLinksFifosAndLinkedFoldersAreRefusedByNameAndNeverGraded) {
  TempDir temp;
  const fs::path dir = temp.path() / "class", results = temp.path() / "results";
  fs::create_directories(dir / "bob-tiled");
  fs::copy_file(kExamples / "naive_conv.cu", dir / "alice-naive.cu");
  fs::copy_file(kExamples / "tiled_conv.cu", dir / "bob-tiled/my_conv.cu");
  fs::create_symlink("alice-naive.cu", dir / "mallory.cu");  // a file that is a link
  fs::create_directory_symlink("bob-tiled", dir / "oscar");  // a folder that is a link
  fs::create_directories(dir / "peggy");                     // a link inside a real folder
  fs::create_symlink("../bob-tiled/my_conv.cu", dir / "peggy/k.cu");
  fs::create_directories(dir / "sybil");  // a real file beside a linked one: the folder is refused
  fs::copy_file(kExamples / "naive_conv.cu", dir / "sybil/a.cu");
  fs::create_symlink("/etc/passwd", dir / "sybil/b.cu");
  ASSERT_EQ(mkfifo((dir / "trent.cu").c_str(), 0600), 0);  // nothing ever writes to it
  fs::create_directories(dir / "victor");
  ASSERT_EQ(mkfifo((dir / "victor/k.cu").c_str(), 0600), 0);

  const Outcome r = runCli("grade " + quoted(dir) + " --out " + quoted(results) + " --jobs 2");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::set<std::string> graded;
  for (const auto& entry : fs::directory_iterator(results / "submissions")) graded.insert(entry.path().stem());
  EXPECT_EQ(graded, (std::set<std::string>{"alice-naive", "bob-tiled"}));
  const json board = readJson(results / "leaderboard.json");
  std::map<std::string, std::string> skipped;
  for (const json& s : board["skipped"]) skipped[s["path"]] = s["reason"];
  const std::map<std::string, std::string> expected = {{"mallory.cu", "a symbolic link (to alice-naive.cu)"},
                                                       {"oscar", "a symbolic link (to bob-tiled)"},
                                                       {"peggy/k.cu", "a symbolic link (to ../bob-tiled/my_conv.cu)"},
                                                       {"sybil/b.cu", "a symbolic link (to /etc/passwd)"},
                                                       {"trent.cu", "a named pipe (FIFO)"},
                                                       {"victor/k.cu", "a named pipe (FIFO)"}};
  ASSERT_EQ(skipped.size(), expected.size()) << board["skipped"].dump(1);
  for (const auto& [path, what] : expected) {
    ASSERT_TRUE(skipped.count(path)) << path << " not skipped: " << board["skipped"].dump(1);
    EXPECT_EQ(skipped[path].rfind(what + ", not a regular file: refused", 0), 0u) << path << ": " << skipped[path];
    // Printed as it is found, by the path the student knows.
    EXPECT_NE(r.output.find("skipped " + path + ": " + what), std::string::npos) << r.output;
  }
  // Asked for by id, a refused entry says why it is not graded.
  const Outcome only = runCli("grade " + quoted(dir) + " --out " + quoted(results) + " --only peggy");
  EXPECT_NE(only.exitCode, 0);
  EXPECT_NE(only.output.find("'peggy' is not graded: peggy/k.cu: a symbolic link"), std::string::npos) << only.output;
  EXPECT_FALSE(fs::exists(results / "submissions/peggy.json"));
}

// Every grading draws its own seed, --only included: a submission graded again gets a new one.
TEST(Grade, EachGradingDrawsItsOwnSeedAlsoWithOnly) {
  const SmallClass c;
  ASSERT_EQ(c.grade().exitCode, 0);
  const std::string first = readJson(c.results / "submissions/alice-naive.json")["seed"];
  std::set<std::string> seeds = {first};
  for (int again = 0; again < 3; ++again) {
    fs::remove(c.results / "submissions/alice-naive.json");  // else kept: its file did not change
    const Outcome r = runCli("grade " + quoted(c.dir) + " --out " + quoted(c.results) + " --only alice-naive");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const std::string seed = readJson(c.results / "submissions/alice-naive.json")["seed"];
    EXPECT_NE(std::stoull(seed), 0u);
    EXPECT_TRUE(seeds.insert(seed).second) << "seed " << seed << " came again";
  }
  EXPECT_FALSE(fs::exists(c.results / "grading-run.json"));
}

TEST(Grade, TheLeaderboardJsonCsvAndHtmlAgreeWithTheSubmissionsFiles) {
  const SmallClass c;
  ASSERT_EQ(c.grade().exitCode, 0);
  std::map<std::string, json> submissions;
  for (const auto& entry : fs::directory_iterator(c.results / "submissions")) {
    const json s = readJson(entry.path());
    submissions[s["id"]] = s;
  }
  ASSERT_EQ(submissions.size(), kIds.size());
  const json board = readJson(c.results / "leaderboard.json");
  ASSERT_EQ(board["schema"], 1);
  std::vector<json> rows;
  for (const json& g : board["groups"])
    for (const json& row : g["rows"]) rows.push_back(row);
  ASSERT_EQ(rows.size(), submissions.size());
  for (const json& row : rows) {
    const json& s = submissions.at(row["id"]);
    EXPECT_EQ(row["status"], s["status"]);
    EXPECT_EQ(row["message"], s["message"]);
    EXPECT_EQ(row["registers"], s["registers"]);
    EXPECT_EQ(row["occupancy"], s["occupancy"]);
  }
  // Compiled submissions rank above those that do not compile or break the contract.
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i]["status"] == "compiled, not run: no GPU") {
      EXPECT_EQ(rows[i - 1]["status"], "compiled, not run: no GPU") << rows[i]["id"];
    }
  }
  const auto csv = parseCsv(readText(c.results / "leaderboard.csv"));
  ASSERT_EQ(csv.size(), rows.size() + 1);
  EXPECT_EQ(csv[0][1], "rank");
  EXPECT_EQ(csv[0][2], "id");
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(csv[i + 1].size(), csv[0].size()) << i;
    EXPECT_EQ(csv[i + 1][1], std::to_string(rows[i]["rank"].get<int>()));
    EXPECT_EQ(csv[i + 1][2], rows[i]["id"]);
    EXPECT_EQ(csv[i + 1][3], rows[i]["status"]);
    EXPECT_EQ(csv[i + 1][4], rows[i]["message"]);
  }
  // The html's table holds the rows in the same order, and needs nothing from the network.
  const std::string html = readText(c.results / "leaderboard.html");
  size_t at = 0;
  for (const json& row : rows) {
    at = html.find("<td>" + row["id"].get<std::string>() + "</td>", at);
    ASSERT_NE(at, std::string::npos) << row["id"];
  }
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
}

// Made-up timed results (as a GPU machine writes them) and the course's reference times: the
// merge ranks the correct ones by their op-time sum at 10,000, computes the speed-ups and the
// summary, and never ranks two GPUs' results together.
TEST(Grade, MergeRanksCorrectFirstThenByOpTimeWithSpeedUpsAndOneTablePerGpu) {
  TempDir temp;
  const fs::path results = temp.path();
  const auto submission = [&](const std::string& id, const std::string& status, const std::string& gpu,
                              std::optional<double> time) {
    json s = {{"schema", 1},
              {"kind", "convscope-class-submission"},
              {"id", id},
              {"status", status},
              {"message", "m " + id},
              {"gpu", {{"name", gpu}}},
              {"opTimeSeconds", json::object()}};
    if (time) s["opTimeSeconds"] = {{"100", *time / 100}, {"1000", *time / 10}, {"10000", *time}};
    writeText(results / "submissions" / (id + ".json"), s.dump());
  };
  submission("slow", "passed", "H100", 0.030);
  submission("fast", "passed", "H100", 0.010);
  submission("middle", "passed", "H100", 0.020);
  submission("wrong-but-fast", "wrong", "H100", 0.001);
  submission("faulty", "faulted", "H100", std::nullopt);
  submission("elsewhere", "passed", "A100", 0.005);
  writeText(results / "reference.json",
            json({{"schema", 1},
                  {"gpu", {{"name", "H100"}}},
                  {"variants",
                   {{{"id", "gpu-baseline"}, {"displayName", "Baseline"}, {"opTimeSeconds", {{"10000", 0.060}}}},
                    {{"id", "cudnn"}, {"displayName", "cuDNN"}, {"opTimeSeconds", {{"10000", 0.015}}}}}}})
                .dump());
  writeText(results / "submissions/broken.json", "{\"schema\": 1, \"id\": ");  // a task killed mid-write
  const Outcome r = runCli("grade merge " + quoted(results));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const json board = readJson(results / "leaderboard.json");
  ASSERT_EQ(board["groups"].size(), 2u) << board.dump(1);
  // A file that cannot be read is named and left out, and the rest are still ranked.
  ASSERT_EQ(board["unreadable"].size(), 1u);
  EXPECT_EQ(board["unreadable"][0]["file"], "broken.json");
  EXPECT_NE(r.output.find("not merged: broken.json"), std::string::npos) << r.output;
  std::map<std::string, json> byGpu;
  for (const json& g : board["groups"]) byGpu[g["gpu"]] = g;
  std::vector<std::string> order;
  for (const json& row : byGpu["H100"]["rows"]) order.push_back(row["id"]);
  EXPECT_EQ(order, (std::vector<std::string>{"fast", "middle", "slow", "wrong-but-fast", "faulty"}));
  const json& fast = byGpu["H100"]["rows"][0];
  EXPECT_EQ(fast["rank"], 1);
  EXPECT_NEAR(fast["speedupOverGpuBaseline"].get<double>(), 0.060 / 0.010, 1e-12);
  EXPECT_NEAR(fast["speedupOverCudnn"].get<double>(), 0.015 / 0.010, 1e-12);
  // Only "fast" (0.010 s) is correct and under cuDNN's 0.015 s; "wrong-but-fast" does not count.
  EXPECT_EQ(byGpu["H100"]["summary"], "5 submissions: 3 correct, 1 correct and faster than cuDNN on H100");
  EXPECT_EQ(byGpu["A100"]["rows"].size(), 1u);
  EXPECT_EQ(byGpu["A100"]["reference"], nullptr);  // timed on the H100: no line on the A100's table
  EXPECT_EQ(byGpu["A100"]["rows"][0]["speedupOverCudnn"], nullptr);
  EXPECT_NE(r.output.find("separate tables"), std::string::npos) << r.output;
  const std::string html = readText(results / "leaderboard.html");
  EXPECT_NE(html.find("class=\"reference\""), std::string::npos);  // the reference lines are drawn
  size_t dots = 0;
  for (size_t at = html.find("class=\"submission\""); at != std::string::npos;
       at = html.find("class=\"submission\"", at + 1))
    ++dots;
  EXPECT_EQ(dots, 5u);  // the four timed H100 results and the A100's one
}

// The re-timing of the top (retime.json, as a GPU machine writes it): the ranking stays by the
// first timing; the table says whether the order held and, when not, which swapped;
// a re-timing that failed flags the row; a re-timing of a changed file or from another GPU is
// not used; a broken retime.json is named and the ranking goes on without it.
TEST(Grade, MergeRanksTheRetimedTopByTheMeanOfBothTimingsAndSaysWhetherTheOrderHeld) {
  TempDir temp;
  const fs::path results = temp.path();
  const auto submission = [&](const std::string& id, const std::string& gpu, double time) {
    writeText(results / "submissions" / (id + ".json"), json({{"schema", 1},
                                                              {"kind", "convscope-class-submission"},
                                                              {"id", id},
                                                              {"status", "passed"},
                                                              {"message", "m " + id},
                                                              {"contentHash", "hash-" + id},
                                                              {"gpu", {{"name", gpu}}},
                                                              {"opTimeSeconds", {{"10000", time}}}})
                                                            .dump());
  };
  submission("ada", "H100", 0.0100);
  submission("bea", "H100", 0.0102);
  submission("cal", "H100", 0.0300);
  submission("dan", "H100", 0.0400);
  submission("eve", "H100", 0.0500);
  submission("far", "A100", 0.0010);
  const auto retime = [&](const json& entries, const std::string& gpu) {
    writeText(results / "retime.json",
              json({{"schema", 1}, {"gpu", gpu}, {"batch", 10000}, {"submissions", entries}}).dump());
    const Outcome r = runCli("grade merge " + quoted(results));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    const json board = readJson(results / "leaderboard.json");
    for (const json& g : board["groups"])
      if (g["gpu"] == "H100") return g;
    ADD_FAILURE() << "no H100 table: " << r.output;
    return json({{"rows", json::array()}});
  };
  const auto order = [](const json& group) {
    std::vector<std::string> ids;
    for (const json& row : group["rows"]) ids.push_back(row["id"]);
    return ids;
  };
  // The second timing agrees: the order holds.
  json h100 = retime(json::array({{{"id", "ada"}, {"contentHash", "hash-ada"}, {"seconds", 0.0098}},
                                  {{"id", "bea"}, {"contentHash", "hash-bea"}, {"seconds", 0.0104}},
                                  {{"id", "cal"}, {"contentHash", "hash-cal"}, {"seconds", 0.0310}}}),
                     "H100");
  EXPECT_EQ(order(h100), (std::vector<std::string>{"ada", "bea", "cal", "dan", "eve"}));
  EXPECT_EQ(h100["retimeSummary"],
            "the top 3 re-timed (a submission's two timings differ by up to 3.33 %): the second timing kept the order");
  EXPECT_NEAR(h100["rows"][0]["retimedSeconds"].get<double>(), 0.0098, 1e-15);
  EXPECT_EQ(h100["rows"][3]["retimedSeconds"], nullptr);  // dan was not re-timed
  // It swaps ada and bea: said, with the spread; the ranking stays the first timing's.
  h100 = retime(json::array({{{"id", "ada"}, {"contentHash", "hash-ada"}, {"seconds", 0.0120}},
                             {{"id", "bea"}, {"contentHash", "hash-bea"}, {"seconds", 0.0100}}}),
                "H100");
  EXPECT_EQ(order(h100), (std::vector<std::string>{"ada", "bea", "cal", "dan", "eve"}));
  const std::string summary = h100["retimeSummary"];
  EXPECT_EQ(
      summary.rfind("the top 2 re-timed (a submission's two timings differ by up to 20.00 %): the order changed (", 0),
      0u)
      << summary;
  EXPECT_NE(summary.find("are ties of the timer: look before publishing the order"), std::string::npos) << summary;
  EXPECT_NE(summary.find("bea came before ada (10.000 ms against 12.000 ms, first 10.200 ms against 10.000 ms)"),
            std::string::npos)
      << summary;
  // A failed re-timing flags the row; a changed file's re-timing is not used.
  h100 = retime(json::array({{{"id", "ada"}, {"contentHash", "hash-ada"}, {"failure", "ada.cu: wrong output"}},
                             {{"id", "bea"}, {"contentHash", "an older file"}, {"seconds", 0.0001}}}),
                "H100");
  EXPECT_EQ(order(h100), (std::vector<std::string>{"bea", "cal", "dan", "eve", "ada"}));
  EXPECT_EQ(h100["rows"][4]["status"], "flagged for review");
  EXPECT_NE(h100["rows"][4]["message"].get<std::string>().find("its re-timing failed: ada.cu: wrong output"),
            std::string::npos);
  EXPECT_EQ(h100["rows"][0]["retimedSeconds"], nullptr);
  EXPECT_EQ(h100["retimeSummary"], "");
  // Re-timed on another GPU: not this table's.
  h100 = retime(json::array({{{"id", "eve"}, {"contentHash", "hash-eve"}, {"seconds", 0.0001}}}), "A100");
  EXPECT_EQ(order(h100), (std::vector<std::string>{"ada", "bea", "cal", "dan", "eve"}));
  // A broken file is named, and the first timings rank.
  writeText(results / "retime.json", "{\"schema\": 1, \"gpu\": 7}");
  const Outcome broken = runCli("grade merge " + quoted(results));
  EXPECT_NE(broken.output.find("not merged: retime.json"), std::string::npos) << broken.output;
  const std::string csv = readText(results / "leaderboard.csv");
  EXPECT_NE(csv.find(",retimed_10000_s,"), std::string::npos);
  // Without a GPU, --retime-top says why nothing was re-timed.
  if (!convscope::gpuInfo().usable) {
    const Outcome r = runCli("grade merge " + quoted(results) + " --retime-top 3");
    EXPECT_NE(r.output.find("the top of the ranking is not re-timed: no GPU here"), std::string::npos) << r.output;
  }
}

TEST(Grade, AnonymizeLeaksNoIdIntoTheHtmlOrCsvAndKeepsItsPseudonymsStable) {
  const SmallClass c;
  ASSERT_EQ(c.grade("--anonymize").exitCode, 0);
  const std::string html = readText(c.results / "leaderboard.html");
  const std::string csv = readText(c.results / "leaderboard.csv");
  for (const char* name : {"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"}) {
    EXPECT_EQ(html.find(name), std::string::npos) << name;
    EXPECT_EQ(csv.find(name), std::string::npos) << name;
  }
  const json first = readJson(c.results / "leaderboard.json");
  ASSERT_EQ(first["anonymized"], true);
  std::set<std::string> pseudonyms;
  for (const json& row : first["groups"][0]["rows"]) pseudonyms.insert(row["id"]);
  EXPECT_EQ(pseudonyms.size(), kIds.size());
  // The mapping stays in the results folder; a second merge gives the same names.
  const std::string mapping = readText(c.results / "pseudonyms.csv");
  for (const std::string& id : kIds) EXPECT_NE(mapping.find(id + ",student-"), std::string::npos) << id;
  ASSERT_EQ(runCli("grade merge " + quoted(c.results) + " --anonymize").exitCode, 0);
  std::set<std::string> again;
  const json second = readJson(c.results / "leaderboard.json");
  for (const json& row : second["groups"][0]["rows"]) again.insert(row["id"]);
  EXPECT_EQ(again, pseudonyms);
}

// Issue 34's leaks, each one: an id inside another word ("ed" in "expected"), a folder
// submission's file name (a student's name), another student's id named in a message, an
// unreadable result's file name, the secret and the mapping readable by others, and a later merge
// without the flag that published the real ids again. Every published file is searched for every
// id as a whole token and for the file name.
TEST(Grade, AnonymizeReplacesWholeIdsAndFileNamesKeepsItsFilesPrivateAndStaysChosen) {
  TempDir temp;
  const fs::path results = temp.path();
  const auto submission = [&](const std::string& id, const std::string& file, const std::string& message) {
    writeText(results / "submissions" / (id + ".json"), json({{"schema", 1},
                                                              {"kind", "convscope-class-submission"},
                                                              {"id", id},
                                                              {"file", file},
                                                              {"status", "does not compile"},
                                                              {"message", message}})
                                                            .dump());
  };
  submission("ed", "ed.cu", "ed.cu:3: error: expected a \";\" (ed, see ed.cu)");
  submission("ann", "ann/john_smith_milestone1.cu",
             "ann/john_smith_milestone1.cu:9: error: identifier \"tile\" is undefined; "
             "john_smith_milestone1.cu was compiled as ann's kernel, like ed's");
  submission("ann-marie", "ann-marie.cu", "ann-marie.cu:1: error: planned");
  writeText(results / "submissions" / "zoe.json", "{ broken");
  const Outcome r = runCli("grade merge " + quoted(results) + " --anonymize");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto published = [&] {
    std::string text;
    for (const char* file : {"leaderboard.json", "leaderboard.csv", "leaderboard.html"})
      text += readText(results / file);
    return text;
  };
  const auto wholeTokenAt = [](const std::string& text, const std::string& id) {
    const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t at = text.find(id); at != std::string::npos; at = text.find(id, at + 1))
      if ((at == 0 || !word(text[at - 1])) && (at + id.size() == text.size() || !word(text[at + id.size()]))) return at;
    return std::string::npos;
  };
  std::string text = published();
  for (const std::string id : {"ed", "ann", "ann-marie", "zoe"})
    EXPECT_EQ(wholeTokenAt(text, id), std::string::npos) << id << " in: " << text.substr(wholeTokenAt(text, id), 80);
  EXPECT_EQ(text.find("john_smith"), std::string::npos);
  EXPECT_EQ(text.find("zoe"), std::string::npos);
  // Words that hold an id are left whole, and the messages still read.
  EXPECT_NE(text.find("expected a"), std::string::npos);
  EXPECT_NE(text.find("is undefined"), std::string::npos);
  const json board = readJson(results / "leaderboard.json");
  EXPECT_EQ(board["unreadable"], nullptr);
  EXPECT_EQ(board["unreadableCount"], 1);
  std::map<std::string, std::string> names;  // the mapping, id -> pseudonym
  {
    std::istringstream mapping(readText(results / "pseudonyms.csv"));
    std::string line;
    std::getline(mapping, line);
    while (std::getline(mapping, line)) names[line.substr(0, line.find(','))] = line.substr(line.find(',') + 1);
  }
  ASSERT_EQ(names.size(), 3u);
  // Each message names its own pseudonym's file, and the other student it mentions by theirs.
  for (const json& row : board["groups"][0]["rows"])
    if (row["id"] == names["ann"]) {
      const std::string message = row["message"];
      EXPECT_EQ(message.rfind(names["ann"] + ".cu:9: error", 0), 0u) << message;
      EXPECT_NE(message.find("like " + names["ed"] + "'s"), std::string::npos) << message;
    }
  // The secret and the mapping: the owner's alone, checked on every run.
  for (const char* file : {".anonymize-secret", "pseudonyms.csv"})
    EXPECT_EQ(fs::status(results / file).permissions() & (fs::perms::group_all | fs::perms::others_all),
              fs::perms::none)
        << file;
  // A later merge without the flag keeps the choice; --no-anonymize publishes ids again.
  ASSERT_EQ(runCli("grade merge " + quoted(results)).exitCode, 0);
  EXPECT_EQ(readJson(results / "leaderboard.json")["anonymized"], true);
  EXPECT_EQ(wholeTokenAt(published(), "ann"), std::string::npos);
  ASSERT_EQ(runCli("grade merge " + quoted(results) + " --no-anonymize").exitCode, 0);
  EXPECT_EQ(readJson(results / "leaderboard.json")["anonymized"], false);
  EXPECT_NE(wholeTokenAt(published(), "ann"), std::string::npos);
  ASSERT_EQ(runCli("grade merge " + quoted(results)).exitCode, 0);
  EXPECT_EQ(readJson(results / "leaderboard.json")["anonymized"], false);
  // A mapping that others can read is refused, naming it and what to do.
  fs::permissions(results / "pseudonyms.csv", fs::perms::others_read, fs::perm_options::add);
  const Outcome exposed = runCli("grade merge " + quoted(results) + " --anonymize");
  EXPECT_NE(exposed.exitCode, 0);
  EXPECT_NE(exposed.output.find("pseudonyms.csv: others can read it (mode 0604)"), std::string::npos) << exposed.output;
  EXPECT_NE(exposed.output.find("chmod 600"), std::string::npos) << exposed.output;
}

// What students get: one file each (status, message, figures, rank, the seed that repeats the
// check, their pseudonym), the owner's alone until sent; and a page with a title, the date, times
// in milliseconds, named dots and a viewport for phones.
TEST(Grade, ExportWritesOneFilePerStudentAndTheBoardReadsOnAPhone) {
  TempDir temp;
  const fs::path results = temp.path() / "results", out = temp.path() / "for-students";
  const auto submission = [&](const std::string& id, const std::string& status, double time) {
    json s = {{"schema", 1},
              {"kind", "convscope-class-submission"},
              {"id", id},
              {"file", id + ".cu"},
              {"status", status},
              {"message", id + ".cu: " + status},
              {"seed", "1234567890123456789"},
              {"gpu", {{"name", "NVIDIA H100 80GB HBM3"}}},
              {"accuracy", 0.9171},
              {"opTimeSeconds", {{"100", time / 50}, {"1000", time / 8}, {"10000", time}}}};
    if (status != "passed") s["opTimeSeconds"] = json::object();
    writeText(results / "submissions" / (id + ".json"), s.dump());
  };
  submission("ann", "passed", 0.00125);
  submission("bob", "wrong", 0);
  ASSERT_EQ(runCli("grade merge " + quoted(results) + " --anonymize --title 'Milestone 2: conv1 and conv2'").exitCode,
            0);
  const Outcome r = runCli("grade export " + quoted(results) + " --out " + quoted(out));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string pseudonyms = readText(results / "pseudonyms.csv");
  const std::string annPseudonym = pseudonyms.substr(pseudonyms.find("ann,") + 4, 18);
  ASSERT_EQ(annPseudonym.rfind("student-", 0), 0u) << pseudonyms;
  const json ann = readJson(out / "ann.json");
  EXPECT_EQ(ann["status"], "passed");
  EXPECT_EQ(ann["rank"], 1);
  EXPECT_EQ(ann["of"], 2);
  EXPECT_EQ(ann["pseudonym"], annPseudonym);
  EXPECT_EQ(ann["seed"], "1234567890123456789");
  EXPECT_NEAR(ann["opTimeSeconds"]["10000"].get<double>(), 0.00125, 1e-12);
  const std::string bobText = readText(out / "bob.txt");
  EXPECT_NE(bobText.find("Status:  wrong"), std::string::npos) << bobText;
  EXPECT_NE(bobText.find("Rank:    2 of 2 on NVIDIA H100 80GB HBM3"), std::string::npos) << bobText;
  EXPECT_NE(bobText.find("convscope-cli kernel check bob.cu --seed 1234567890123456789"), std::string::npos) << bobText;
  EXPECT_NE(bobText.find("Your pseudonym on the published leaderboard: student-"), std::string::npos) << bobText;
  EXPECT_EQ(bobText.find("ann"), std::string::npos) << "another student's id in bob's file: " << bobText;
  for (const char* file : {"ann.txt", "ann.json", "bob.txt", "bob.json"})
    EXPECT_EQ(fs::status(out / file).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none)
        << file;
  const std::string html = readText(results / "leaderboard.html");
  EXPECT_NE(html.find("<meta name=\"viewport\" content=\"width=device-width"), std::string::npos);
  EXPECT_NE(html.find("<h1>Milestone 2: conv1 and conv2</h1>"), std::string::npos);
  EXPECT_TRUE(std::regex_search(html, std::regex(R"(<p class="merged">Merged \d{4}-\d\d-\d\d \d\d:\d\d UTC\.</p>)")));
  EXPECT_NE(html.find("op time at 10000 (ms)"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">1.2500</td>"), std::string::npos) << "1.25 ms in milliseconds";
  EXPECT_NE(html.find("<title>" + annPseudonym + ": 1.250 ms</title>"), std::string::npos) << "the dot names itself";
  // The title stays for a merge that does not repeat it.
  ASSERT_EQ(runCli("grade merge " + quoted(results)).exitCode, 0);
  EXPECT_NE(readText(results / "leaderboard.html").find("<h1>Milestone 2: conv1 and conv2</h1>"), std::string::npos);
}

TEST(Grade, ARerunKeepsUnchangedSubmissionsAndRegradesOnlyAChangedFile) {
  const SmallClass c;
  ASSERT_EQ(c.grade().exitCode, 0);
  std::map<std::string, std::string> firstText;
  for (const std::string& id : kIds) firstText[id] = readText(c.results / "submissions" / (id + ".json"));
  const Outcome second = c.grade();
  ASSERT_EQ(second.exitCode, 0) << second.output;
  for (const std::string& id : kIds) {
    EXPECT_NE(second.output.find(id + "  "), std::string::npos);
    EXPECT_EQ(readText(c.results / "submissions" / (id + ".json")), firstText[id]) << id << " was regraded";
  }
  size_t kept = 0;
  for (size_t at = second.output.find("unchanged, kept"); at != std::string::npos;
       at = second.output.find("unchanged, kept", at + 1))
    ++kept;
  EXPECT_EQ(kept, kIds.size()) << second.output;
  // Dave fixes his syntax error: only his file is graded again.
  fs::copy_file(kExamples / "naive_conv.cu", c.dir / "dave-syntax.cu", fs::copy_options::overwrite_existing);
  const Outcome third = c.grade();
  ASSERT_EQ(third.exitCode, 0) << third.output;
  for (const std::string& id : kIds) {
    const bool regraded = readText(c.results / "submissions" / (id + ".json")) != firstText[id];
    EXPECT_EQ(regraded, id == "dave-syntax") << id << "\n" << third.output;
  }
  EXPECT_NE(readJson(c.results / "submissions/dave-syntax.json")["status"], "does not compile");
  EXPECT_EQ(third.output.find("dave-syntax  does not compile"), std::string::npos);
}

// The parts --dry-run prints, each under its "# PATH (...)" line: the manifest, the array's
// script (absent when nothing is to be graded) and the merge job's.
struct DryRun {
  std::string manifest, array, merge;
};
DryRun dryRunParts(const std::string& output) {
  DryRun parts;
  std::string* part = nullptr;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# /", 0) == 0 && line.find("(not ") != std::string::npos) {
      part = line.find("manifest.txt") != std::string::npos         ? &parts.manifest
             : line.find("grade-array.sbatch") != std::string::npos ? &parts.array
                                                                    : &parts.merge;
      continue;
    }
    if (part) *part += line + "\n";
  }
  // The blank line printed between the parts belongs to none.
  for (std::string* text : {&parts.manifest, &parts.array, &parts.merge})
    while (text->size() >= 2 && text->compare(text->size() - 2, 2, "\n\n") == 0) text->pop_back();
  return parts;
}

TEST(Grade, SlurmDryRunPrintsAThrottledArrayAndAMergeThatWaitsForItAndWritesNothing) {
  const SmallClass c;
  const Outcome r = c.grade("--slurm --dry-run --max-parallel 3 --partition gpu --gres gpu:1");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const DryRun parts = dryRunParts(r.output);
  const std::string& array = parts.array;
  const std::string& merge = parts.merge;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(array, m, std::regex(R"(#SBATCH --array=(\d+)-(\d+)%(\d+))"))) << r.output;
  EXPECT_EQ(m[1], "0");
  EXPECT_EQ(std::stoi(m[2]), int(kIds.size()) - 1);
  EXPECT_EQ(m[3], "3");
  EXPECT_TRUE(std::regex_search(array, std::regex(R"(#SBATCH --output=\S*_%A_%a\.out)"))) << array;
  EXPECT_NE(array.find("#SBATCH --partition=gpu"), std::string::npos);
  EXPECT_NE(array.find("#SBATCH --gres=gpu:1"), std::string::npos);
  EXPECT_NE(array.find("'--only' \"$id\""), std::string::npos) << array;
  EXPECT_TRUE(std::regex_search(merge, std::regex(R"(#SBATCH --dependency=afterok:ARRAY_JOB_ID)"))) << merge;
  EXPECT_NE(merge.find("'grade' 'merge'"), std::string::npos) << merge;
  // A GPU asked for: the merge job fails when no task got one.
  EXPECT_NE(merge.find("'--expect-gpu'"), std::string::npos) << merge;
  // The manifest's lines are the array's task ids: one submission each, the skipped left out.
  std::istringstream manifest(parts.manifest);
  std::vector<std::string> lines;
  for (std::string line; std::getline(manifest, line);) lines.push_back(line);
  EXPECT_EQ(lines, kIds);
  EXPECT_EQ(r.output.find("submitted array job"), std::string::npos);
  // No seed is chosen for the tasks: each draws its own when its grading starts.
  EXPECT_EQ(array.find("--seed"), std::string::npos) << array;
  // Nothing written: not even the results folder.
  EXPECT_FALSE(fs::exists(c.results)) << "a dry run wrote into " << c.results;
}

// Without --gres every task and the merge job ask for a GPU of their own (without one the whole
// class would end "compiled, not run"); --gres none asks for nothing, on a cluster without GPUs.
TEST(Grade, SlurmAsksForAGpuOfItsOwnPerTaskUnlessToldNone) {
  const SmallClass c;
  const Outcome asked = c.grade("--slurm --dry-run");
  ASSERT_EQ(asked.exitCode, 0) << asked.output;
  for (const std::string& script : {dryRunParts(asked.output).array, dryRunParts(asked.output).merge})
    EXPECT_NE(script.find("\n#SBATCH --gres=gpu:1\n"), std::string::npos) << script;
  const Outcome none = c.grade("--slurm --dry-run --gres none");
  ASSERT_EQ(none.exitCode, 0) << none.output;
  for (const std::string& script : {dryRunParts(none.output).array, dryRunParts(none.output).merge}) {
    EXPECT_EQ(script.find("--gres"), std::string::npos) << script;
    EXPECT_EQ(script.find("--expect-gpu"), std::string::npos) << script;
  }
}

// What a site's cluster needs in every job: its sbatch options and module loads, in both scripts,
// before the grader; anything but an option's name and value is refused, naming it.
TEST(Grade, SlurmTakesTheSitesSbatchOptionsAndPrologLines) {
  const SmallClass c;
  const Outcome r = c.grade(
      "--slurm --dry-run --sbatch-arg account=course42 qos=normal cpus-per-task=4 --prolog 'module load cuda/13.0'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const DryRun parts = dryRunParts(r.output);
  for (const std::string& script : {parts.array, parts.merge}) {
    for (const char* line : {"#SBATCH --account=course42\n", "#SBATCH --qos=normal\n", "#SBATCH --cpus-per-task=4\n"})
      EXPECT_NE(script.find(line), std::string::npos) << line << " in " << script;
    const size_t module = script.find("\nmodule load cuda/13.0\n");
    ASSERT_NE(module, std::string::npos) << script;
    EXPECT_LT(module, script.find("\nexec ")) << script;
  }
  for (const char* bad : {"'--account=x'", "'account=x; rm -rf ~'", "'Account=x'"}) {
    const Outcome refused = c.grade(std::string("--slurm --dry-run --sbatch-arg ") + bad);
    EXPECT_NE(refused.exitCode, 0) << bad;
    EXPECT_NE(refused.output.find("--sbatch-arg"), std::string::npos) << refused.output;
  }
}

// After a local grading nothing has changed: a Slurm run submits no task (the dry run says 0 of
// 6), and after one file changes, that one alone.
TEST(Grade, SlurmSubmitsOnlyNewOrChangedSubmissions) {
  const SmallClass c;
  ASSERT_EQ(c.grade().exitCode, 0);
  const Outcome unchanged = c.grade("--slurm --dry-run");
  ASSERT_EQ(unchanged.exitCode, 0) << unchanged.output;
  EXPECT_NE(unchanged.output.find("0 of 6 submissions new or changed"), std::string::npos) << unchanged.output;
  EXPECT_TRUE(dryRunParts(unchanged.output).array.empty()) << unchanged.output;
  writeText(c.dir / "alice-naive.cu", readText(c.dir / "alice-naive.cu") + "\n// a late fix\n");
  const Outcome changed = c.grade("--slurm --dry-run");
  EXPECT_EQ(dryRunParts(changed.output).manifest, "alice-naive\n") << changed.output;
  EXPECT_NE(dryRunParts(changed.output).array.find("#SBATCH --array=0-0%"), std::string::npos) << changed.output;
}

// The Slurm merge job of a class where no task had a GPU fails, saying what to ask for.
TEST(Grade, AMergeThatExpectedAGpuFailsWhenNoTaskHadOne) {
  TempDir temp;
  const fs::path results = temp.path();
  writeText(results / "submissions" / "ada.json", json({{"schema", 1},
                                                        {"kind", "convscope-class-submission"},
                                                        {"id", "ada"},
                                                        {"status", "compiled, not run: no GPU"},
                                                        {"message", "compiled for sm_90; not run"}})
                                                      .dump());
  EXPECT_EQ(runCli("grade merge " + quoted(results)).exitCode, 0);
  const Outcome r = runCli("grade merge " + quoted(results) + " --expect-gpu");
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("no task of this grading had a GPU"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--gres"), std::string::npos) << r.output;
}

// Ctrl+C while grading: the children stop, every finished result is kept, and the leaderboard is
// written from exactly those.
TEST(Grade, InterruptKeepsTheFinishedResultsAndMergesThem) {
  TempDir temp;
  const fs::path dir = temp.path() / "class", results = temp.path() / "results";
  for (int i = 0; i < 10; ++i)
    writeText(dir / (std::to_string(i) + "-student.cu"), readText(kExamples / "naive_conv.cu"));
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(pipeFds[1], STDOUT_FILENO);
    dup2(pipeFds[1], STDERR_FILENO);
    close(pipeFds[0]);
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    execl(CONVSCOPE_CLI_PATH, CONVSCOPE_CLI_PATH, "grade", dir.c_str(), "--out", results.c_str(), "--jobs", "1",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipeFds[1]);
  FILE* out = fdopen(pipeFds[0], "r");
  std::string output;
  char line[4096];
  // The first finished submission's line, then Ctrl+C.
  while (fgets(line, sizeof line, out)) {
    output += line;
    if (std::string(line).find("-student  ") != std::string::npos) break;
  }
  kill(pid, SIGINT);
  while (fgets(line, sizeof line, out)) output += line;
  fclose(out);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 130) << output;
  EXPECT_NE(output.find("interrupted: the finished results are kept"), std::string::npos) << output;
  std::set<std::string> kept;
  for (const auto& entry : fs::directory_iterator(results / "submissions")) kept.insert(entry.path().stem());
  EXPECT_GE(kept.size(), 1u);
  EXPECT_LT(kept.size(), 10u) << output;
  const json board = readJson(results / "leaderboard.json");
  std::set<std::string> ranked;
  for (const json& g : board["groups"])
    for (const json& row : g["rows"]) ranked.insert(row["id"]);
  EXPECT_EQ(ranked, kept);
}

// On a GPU: a correct kernel passes with its op times and speed-ups against the course's
// reference timed on the same GPU; a wrong one, a faulting one and an endless one get their
// statuses; grading goes on after each.
TEST(Grade, OnAGpuCorrectIsTimedAndRankedAndWrongFaultingAndEndlessKernelsGetTheirStatus) {
  if (!convscope::gpuInfo().usable) GPU_TEST_SKIP() << "needs a GPU: " << convscope::gpuInfo().unusableReason;
  TempDir temp;
  const fs::path dir = temp.path() / "class", results = temp.path() / "results";
  fs::create_directories(dir);
  fs::copy_file(kExamples / "tiled_conv.cu", dir / "right.cu");
  fs::copy_file(kTestKernels / "forgets_left_padding.cu", dir / "wrong.cu");
  fs::copy_file(kTestKernels / "traps.cu", dir / "traps.cu");
  fs::copy_file(kTestKernels / "endless_loop.cu", dir / "spins.cu");
  const Outcome r = runCli("grade " + quoted(dir) + " --out " + quoted(results) + " --time-limit 30", true);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto status = [&](const std::string& id) {
    return readJson(results / "submissions" / (id + ".json"))["status"].get<std::string>();
  };
  EXPECT_EQ(status("right"), "passed") << r.output;
  EXPECT_EQ(status("wrong"), "wrong");
  // A failure's message carries the seed that repeats its check.
  const json wrong = readJson(results / "submissions/wrong.json");
  EXPECT_NE(wrong["message"].get<std::string>().find("convscope-cli kernel check wrong.cu --seed " +
                                                     wrong["seed"].get<std::string>()),
            std::string::npos)
      << wrong["message"];
  EXPECT_EQ(status("traps"), "faulted");
  EXPECT_EQ(status("spins"), "time limit");
  const json right = readJson(results / "submissions/right.json");
  EXPECT_EQ(right["gpu"]["name"], convscope::gpuInfo().name);
  // The GPU, its driver and its clocks go into every result.
  EXPECT_FALSE(right["gpu"]["driver"].get<std::string>().empty()) << right["gpu"].dump();
  EXPECT_GT(right["gpu"]["clocks"]["smPeakMHz"].get<int>(), 0) << right["gpu"].dump();
  EXPECT_GT(right["gpu"]["clocks"]["memoryPeakMHz"].get<int>(), 0) << right["gpu"].dump();
  for (const char* batch : {"100", "1000", "10000"}) EXPECT_GT(right["opTimeSeconds"][batch].get<double>(), 0.0);
  const json reference = readJson(results / "reference.json");
  EXPECT_EQ(reference["gpu"]["name"], convscope::gpuInfo().name);
  const json board = readJson(results / "leaderboard.json");
  ASSERT_EQ(board["groups"].size(), 1u);
  const json& first = board["groups"][0]["rows"][0];
  EXPECT_EQ(first["id"], "right");
  double baseline = 0;
  for (const json& v : reference["variants"])
    if (v["id"] == "gpu-baseline") baseline = v["opTimeSeconds"]["10000"];
  ASSERT_GT(baseline, 0.0);
  // The top of the ranking was timed again (retime.json); its speed-ups stay the first timing's.
  const json retime = readJson(results / "retime.json");
  EXPECT_EQ(retime["gpu"], convscope::gpuInfo().name);
  ASSERT_EQ(retime["submissions"].size(), 1u) << retime.dump(1);
  EXPECT_EQ(retime["submissions"][0]["id"], "right");
  const double second = retime["submissions"][0]["seconds"].get<double>();
  EXPECT_GT(second, 0.0);
  EXPECT_EQ(first["retimedSeconds"].get<double>(), second);
  const std::string retimeSummary = board["groups"][0]["retimeSummary"];
  EXPECT_EQ(retimeSummary.rfind("the top 1 re-timed (a submission's two timings differ by up to ", 0), 0u)
      << retimeSummary;
  EXPECT_NE(retimeSummary.find("): the second timing kept the order"), std::string::npos) << retimeSummary;
  EXPECT_NEAR(first["speedupOverGpuBaseline"].get<double>(), baseline / right["opTimeSeconds"]["10000"].get<double>(),
              1e-9);
}

// The GPU locks of docs/class-mode.md ("Timings share nothing"), held here as a timing holds them:
// a compile waits while a timing holds its GPU's lock, and while a timing waits for that lock (it
// then holds the turnstile), so that a stream of compiles cannot starve it. Any machine: the
// grading child is told of one GPU (--gpu-slots 1, what the parent passes) and compiles only.
TEST(Grade, ACompileWaitsWhileATimingHoldsOrAwaitsItsGpu) {
  for (const char* held : {".gpu-0.lock", ".gpu-0.turnstile"}) {
    TempDir temp;
    const fs::path dir = temp.path() / "class", results = temp.path() / "results";
    fs::create_directories(results);
    writeText(dir / "alice.cu", readText(kExamples / "naive_conv.cu"));
    const int lock = open((results / held).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(lock, 0);
    ASSERT_EQ(flock(lock, LOCK_EX), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
      setenv("CUDA_VISIBLE_DEVICES", "", 1);
      execl(CONVSCOPE_CLI_PATH, CONVSCOPE_CLI_PATH, "grade", dir.c_str(), "--out", results.c_str(), "--only", "alice",
            "--gpu-slots", "1", static_cast<char*>(nullptr));
      _exit(127);
    }
    sleep(3);
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, WNOHANG), 0) << held << ": the grading did not wait";
    EXPECT_FALSE(fs::exists(results / "submissions/alice.json")) << held;
    close(lock);  // the timing ends
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << held;
    const json alice = readJson(results / "submissions/alice.json");
    ASSERT_GE(alice["steps"].size(), 1u) << alice.dump(1);
    EXPECT_EQ(alice["steps"][0]["step"], "compile");
    EXPECT_GT(alice["steps"][0]["waitedSeconds"].get<double>(), 1.0) << held << ": " << alice["steps"].dump();
  }
}

// --jobs on a GPU: submissions compile and are checked side by side, but while one is timed no
// step of another runs on the machine (and no other timing on its GPU). Each result keeps when its
// steps held the machine (`steps`); the intervals of different submissions are compared here.
TEST(Grade, OnAGpuATimingSharesTheMachineWithNoOtherSubmissionsStep) {
  if (!convscope::gpuInfo().usable) GPU_TEST_SKIP() << "needs a GPU: " << convscope::gpuInfo().unusableReason;
  TempDir temp;
  const fs::path dir = temp.path() / "class", results = temp.path() / "results";
  for (int i = 0; i < 6; ++i)
    writeText(
        dir / ("s" + std::to_string(i) + ".cu"),
        readText(kExamples / (i % 2 == 0 ? "naive_conv.cu" : "tiled_conv.cu")) + "\n// " + std::to_string(i) + "\n");
  const Outcome r =
      runCli("grade " + quoted(dir) + " --out " + quoted(results) + " --jobs 4 --retime-top 0 --time-limit 60", true);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  struct Step {
    std::string id, step, device;
    double start, end;
  };
  std::vector<Step> steps;
  int timings = 0;
  for (int i = 0; i < 6; ++i) {
    const std::string id = "s" + std::to_string(i);
    const json s = readJson(results / "submissions" / (id + ".json"));
    EXPECT_EQ(s["status"], "passed") << id << ": " << s["message"];
    for (const json& step : s["steps"]) {
      steps.push_back({id, step["step"], step.value("gpuDevice", std::string()), step["startedAt"], step["endedAt"]});
      timings += step["step"] == "timing";
    }
  }
  EXPECT_EQ(timings, 6);
  for (const Step& t : steps) {
    if (t.step != "timing") continue;
    for (const Step& other : steps) {
      if (other.id == t.id) continue;
      // Another timing may run beside it only on another GPU (with several GPUs).
      if (other.step == "timing" && other.device != t.device) continue;
      EXPECT_FALSE(other.start < t.end && t.start < other.end)
          << other.id << "'s " << other.step << " [" << other.start << ", " << other.end << "] ran while " << t.id
          << " was timed [" << t.start << ", " << t.end << "]";
    }
  }
}

// The pseudonyms' keyed hash is SipHash-2-4: the reference vectors of Aumasson and Bernstein's
// paper (key 00 01 .. 0f; messages 00 01 .. of length 0 and 15).
TEST(Grade, ThePseudonymsHashIsSipHash24AsPublished) {
  const uint64_t key0 = 0x0706050403020100ULL, key1 = 0x0f0e0d0c0b0a0908ULL;
  std::string message;
  EXPECT_EQ(convscope::sipHash24(message, key0, key1), 0x726fdb47dd0e0e31ULL);
  for (int i = 0; i < 15; ++i) message += char(i);
  EXPECT_EQ(convscope::sipHash24(message, key0, key1), 0xa129ca6149be45e5ULL);
  EXPECT_EQ(convscope::hex64(0xa129ca6149be45e5ULL), "a129ca6149be45e5");
}

// Every option the usage lines name is described below them, and no line runs past 100 columns.
TEST(Grade, HelpDescribesEveryOptionItsUsageLinesName) {
  const Outcome r = runCli("grade --help");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const size_t blank = r.output.find("\n\n");
  ASSERT_NE(blank, std::string::npos) << r.output;
  const std::string usage = r.output.substr(0, blank), described = r.output.substr(blank);
  const std::regex option(R"(\[(--[a-z-]+))");
  int options = 0;
  for (auto it = std::sregex_iterator(usage.begin(), usage.end(), option); it != std::sregex_iterator(); ++it) {
    ++options;
    EXPECT_NE(described.find((*it)[1].str()), std::string::npos) << (*it)[1] << " is not described:\n" << r.output;
  }
  EXPECT_GE(options, 16);
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
}

TEST(Grade, BadInputIsRefusedNamingTheFolder) {
  TempDir temp;
  const Outcome missing = runCli("grade " + quoted(temp.path() / "nothing") + " --out " + quoted(temp.path() / "r"));
  EXPECT_NE(missing.exitCode, 0);
  EXPECT_NE(missing.output.find((temp.path() / "nothing").string() + ": not a folder of submissions"),
            std::string::npos)
      << missing.output;
  const Outcome noOut = runCli("grade " + quoted(temp.path()));
  EXPECT_NE(noOut.exitCode, 0);
  EXPECT_NE(noOut.output.find("--out RESULTS"), std::string::npos) << noOut.output;
  const Outcome noMerge = runCli("grade merge " + quoted(temp.path() / "nothing"));
  EXPECT_NE(noMerge.exitCode, 0);
  EXPECT_NE(noMerge.output.find("not a results folder"), std::string::npos) << noMerge.output;
}

}  // namespace
