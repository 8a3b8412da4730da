// convscope-cli as a user runs it: the course's output format, CSV export, help, and a clear
// message with a non-zero exit code for every bad input.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "app/core/conv/kernel_history.h"
#include "app/core/data/image_file.h"
#include "app/core/data/image_set.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/kernel_profile_json.h"
#include "tests/cli/cli_runner.h"
#include "tests/core/model_builder.h"
#include "tests/core/test_support.h"

namespace {

using convscope::testing::TempDir;

using Outcome = convscope::testing::CliOutcome;
using convscope::testing::runCli;

const std::string kModels = CONVSCOPE_MODELS_DIR;

TEST(Cli, ClassifyPrintsTheCourseFormat) {
  const Outcome r = runCli("classify --model '" + kModels + "/course-high.onnx' --count 200");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("Loading fashion-mnist data... done\nLoading model... done\nNew Inference\n"),
            std::string::npos)
      << r.output;
  const std::regex opTime("Op Time: [0-9]+\\.[0-9]+\n");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.output.begin(), r.output.end(), opTime), std::sregex_iterator()), 2)
      << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("Correctness: 0\\.[0-9]{4} Model: course-high Batch: 200\n")))
      << r.output;
}

TEST(Cli, ClassifyWritesOneCsvRowPerImage) {
  TempDir dir;
  const std::string csv = (dir.path() / "predictions.csv").string();
  const Outcome r =
      runCli("classify --model '" + kModels + "/lenet5.onnx' --count 25 --variant cpu-reference --csv '" + csv + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("index,source,label,label_name,predicted,predicted_name,p_T-shirt/top,", 0), 0u) << header;
  int rows = 0;
  while (std::getline(in, line)) {
    if (rows == 0) {
      EXPECT_EQ(line.rfind("0,,9,Ankle boot,", 0), 0u) << line;  // first test image: an ankle boot
    }
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 15) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 25);
}

TEST(Cli, ClassifiesImageFilesLikeTheDataSetImagesTheyShow) {
  if (!convscope::imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV to read image files";
  // Test images 0 and 2 (an ankle boot and a trouser) written as PGM files, once as they are and
  // once dark-on-light, which --invert must undo.
  const convscope::ImageSet set = convscope::ImageSet::loadIdxFolder(convscope::defaultDataFolder());
  TempDir dir;
  std::string files, invertedFiles;
  for (int index : {0, 2}) {
    const convscope::Picture image = set.image(index);
    std::vector<uint8_t> plain, inverted;
    const std::string header = "P5\n28 28\n255\n";
    plain.assign(header.begin(), header.end());
    inverted = plain;
    for (float v : image.pixels) {
      plain.push_back(static_cast<uint8_t>(v * 255.0f + 0.5f));
      inverted.push_back(static_cast<uint8_t>(255 - plain.back()));
    }
    files += " '" + dir.write("image" + std::to_string(index) + ".pgm", plain).string() + "'";
    invertedFiles += " '" + dir.write("inverted" + std::to_string(index) + ".pgm", inverted).string() + "'";
  }
  // The window's rule (a light border: inverted) is the command line's default too, so the
  // dark-on-light files need no flag; --invert forces it and --no-invert turns it off.
  const std::string classify = "classify --model '" + kModels + "/course-high.onnx' ";
  std::vector<std::string> predictions;
  for (const std::string& arguments : {classify + "--images" + files, classify + "--invert --images" + invertedFiles,
                                       classify + "--images" + invertedFiles}) {
    const Outcome r = runCli(arguments);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("Correctness: n/a (no labels) Model: course-high Batch: 2"), std::string::npos) << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex("0\\.pgm: Ankle boot \\(\\d+\\.\\d%\\)"))) << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex("2\\.pgm: Trouser \\(\\d+\\.\\d%\\)"))) << r.output;
    std::smatch percent;
    ASSERT_TRUE(std::regex_search(r.output, percent, std::regex("Ankle boot \\((\\d+\\.\\d)%\\)")));
    predictions.push_back(percent[1]);
    const bool saysInverted = r.output.find("(inverted") != std::string::npos;
    EXPECT_EQ(saysInverted, arguments.find("inverted0") != std::string::npos) << r.output;
  }
  EXPECT_EQ(predictions[0], predictions[1]);
  EXPECT_EQ(predictions[1], predictions[2]) << "the automatic rule inverts as --invert does";
  const Outcome automatic = runCli(classify + "--images" + invertedFiles);
  EXPECT_NE(automatic.output.find("inverted0.pgm: Ankle boot"), std::string::npos);
  EXPECT_NE(automatic.output.find("(inverted: light background)"), std::string::npos) << automatic.output;
  const Outcome off = runCli(classify + "--no-invert --images" + invertedFiles);
  ASSERT_EQ(off.exitCode, 0) << off.output;
  EXPECT_EQ(off.output.find("(inverted"), std::string::npos) << off.output;
  EXPECT_EQ(off.output.find("inverted0.pgm: Ankle boot (" + predictions[0] + "%)"), std::string::npos)
      << "dark-on-light, not inverted, is a different picture: " << off.output;
  const Outcome both = runCli(classify + "--invert --no-invert --images" + invertedFiles);
  EXPECT_EQ(both.exitCode, 1);
  EXPECT_NE(both.output.find("either --invert or --no-invert"), std::string::npos) << both.output;
}

TEST(Cli, InfoPrintsTheLayerTable) {
  const Outcome r = runCli("info --model '" + kModels + "/course-high.onnx'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("Conv +\\[1x12x42x42\\] +600 +2,095,632"))) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("Conv +\\[1x24x15x15\\] +14,136 +6,355,800"))) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("Total +166,682"))) << r.output;
}

TEST(Cli, VariantsListsTheRegistryAndTheDevice) {
  const Outcome r = runCli("variants");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("cpu-reference"), std::string::npos);
  EXPECT_NE(r.output.find("cpu-im2col-gemm"), std::string::npos);
  EXPECT_NE(r.output.find("GPU:"), std::string::npos);
}

TEST(Cli, EveryCommandHasHelp) {
  for (const std::string command : {"--help", "info --help", "classify --help", "variants --help"}) {
    const Outcome r = runCli(command);
    EXPECT_EQ(r.exitCode, 0) << command;
    EXPECT_NE(r.output.find("usage: convscope-cli"), std::string::npos) << command << "\n" << r.output;
  }
}

// The subcommands as the one list names them (app/cli/subcommand_list.inc, read here through the
// same macro as the program reads it): name and help line.
struct ListedSubcommand {
  std::string name, help;
};
const std::vector<ListedSubcommand> kListedSubcommands = {
#define CONVSCOPE_SUBCOMMAND(name, run, help) {name, help},
#include "app/cli/subcommand_list.inc"
#undef CONVSCOPE_SUBCOMMAND
};

// The lines of the "Commands:" section of the usage text, up to the blank line after it.
std::vector<std::string> commandLines(const std::string& usage) {
  std::vector<std::string> lines;
  std::istringstream in(usage);
  std::string line;
  bool inSection = false;
  while (std::getline(in, line)) {
    if (line == "Commands:") {
      inSection = true;
    } else if (inSection) {
      if (line.empty()) break;
      lines.push_back(line);
    }
  }
  return lines;
}

TEST(Cli, EveryListedSubcommandIsInHelpAndDispatches) {
  ASSERT_FALSE(kListedSubcommands.empty());
  const Outcome help = runCli("--help");
  ASSERT_EQ(help.exitCode, 0) << help.output;
  const std::vector<std::string> lines = commandLines(help.output);
  // One line per subcommand, in the list's order: "  NAME   HELP".
  ASSERT_EQ(lines.size(), kListedSubcommands.size()) << help.output;
  for (size_t i = 0; i < lines.size(); ++i) {
    const ListedSubcommand& listed = kListedSubcommands[i];
    std::istringstream words(lines[i]);
    std::string name;
    words >> name;
    std::string rest;
    std::getline(words >> std::ws, rest);
    EXPECT_EQ(lines[i].rfind("  ", 0), 0u) << lines[i];
    EXPECT_EQ(name, listed.name) << lines[i];
    EXPECT_EQ(rest, listed.help) << lines[i];
    // It dispatches: its own --help answers, not the unknown-command message.
    const Outcome own = runCli(listed.name + " --help");
    EXPECT_EQ(own.exitCode, 0) << listed.name << ": " << own.output;
    EXPECT_NE(own.output.find("usage: convscope-cli " + listed.name), std::string::npos)
        << listed.name << ": " << own.output;
  }
}

TEST(Cli, AnUnknownSubcommandIsRefusedWithTheList) {
  const Outcome r = runCli("no-such-command");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'no-such-command'"), std::string::npos) << r.output;
  EXPECT_EQ(commandLines(r.output).size(), kListedSubcommands.size()) << r.output;
}

TEST(Cli, BadInputFailsWithAMessageAndNonZeroExit) {
  TempDir dir;
  const std::string garbage = dir.write("garbage.onnx", {1, 2, 3, 4, 5, 6, 7, 8, 9}).string();
  const struct {
    std::string arguments;
    std::string message;
  } cases[] = {
      {"frobnicate", "unknown command 'frobnicate'"},
      {"classify --model /nonexistent/model.onnx", "/nonexistent/model.onnx: file not found"},
      {"classify --model '" + garbage + "'", "garbage.onnx: not a valid ONNX model"},
      {"classify --data /nonexistent/folder", "/nonexistent/folder: data folder not found"},
      {"classify --variant no-such-kernel", "unknown kernel variant 'no-such-kernel'"},
      {"classify --count 0", "--count' needs a whole number of at least 1"},
      {"classify --count 20000", "--count 20000 but"},
      {"classify --count ten", "got 'ten'"},
      {"classify --bogus", "unknown option '--bogus'"},
      {"classify --model", "needs a value"},
      {"classify --images /nonexistent/picture.png", "/nonexistent/picture.png"},
      {"info --model '" + garbage + "'", "garbage.onnx"},
  };
  for (const auto& c : cases) {
    const Outcome r = runCli(c.arguments);
    EXPECT_NE(r.exitCode, 0) << c.arguments;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.arguments << "\n" << r.output;
  }
}

// The output of `command` (stdout and stderr), run by the shell.
std::string shellOutput(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  std::array<char, 4096> buffer{};
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  pclose(pipe);
  return output;
}

// From the first hunk on: what two unified diffs must agree on (their headers name files and times).
std::string hunksOf(const std::string& diff) {
  const size_t at = diff.find("@@");
  return at == std::string::npos ? std::string() : diff.substr(at);
}

// A student on a login node without a window: `kernel check` from the command line records the
// version it compiled and the check's verdict, as the window does; the same source twice is one
// version, an edit a second one; a file that does not compile and --no-history record nothing.
TEST(Cli, KernelCheckFromTheCommandLineJoinsTheHistory) {
  TempDir dir;
  const std::string root = (dir.path() / "history").string();
  const std::string env = "CONVSCOPE_KERNEL_HISTORY='" + root + "'";
  const std::filesystem::path kernel = dir.path() / "my_conv.cu";
  const std::string templateText = [] {
    std::ifstream in(std::filesystem::path(CONVSCOPE_SOURCE_DIR) / "examples/kernels/naive_conv.cu");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  ASSERT_FALSE(templateText.empty());
  std::ofstream(kernel) << templateText;
  const std::string check = "kernel check '" + kernel.string() + "' --no-network --shapes 2";
  // Where a GPU runs the kernel the check passes; elsewhere the version is "compiled".
  const std::string verdict = convscope::gpuInfo().usable ? "passed" : "compiled";
  // A build without the CUDA toolkit compiles no kernel, so it records none (it says so).
  const Outcome first = runCli(check, env);
  if (first.output.find("has no CUDA toolkit") != std::string::npos) GTEST_SKIP() << first.output;
  for (int run = 0; run < 2; ++run) {
    const Outcome r = run == 0 ? first : runCli(check, env);
    EXPECT_EQ(r.exitCode, 0) << r.output;
  }
  Outcome list = runCli("kernel history '" + kernel.string() + "'", env);
  EXPECT_EQ(list.exitCode, 0) << list.output;
  EXPECT_TRUE(std::regex_search(list.output, std::regex("^v1 .* " + verdict + " "))) << list.output;
  EXPECT_EQ(list.output.find("v2"), std::string::npos) << list.output;

  std::ofstream(kernel) << templateText << "// an edit\n";
  EXPECT_EQ(runCli(check, env).exitCode, 0);
  std::ofstream(kernel) << templateText << "// an edit that does not compile\nint x = ;\n";
  EXPECT_EQ(runCli(check, env).exitCode, 1);
  std::ofstream(kernel) << templateText << "// checked without the history\n";
  EXPECT_EQ(runCli(check + " --no-history", env).exitCode, 0);
  list = runCli("kernel history '" + kernel.string() + "'", env);
  EXPECT_TRUE(std::regex_search(list.output, std::regex("(^|\n)v2 .* " + verdict + " "))) << list.output;
  EXPECT_EQ(list.output.find("v3"), std::string::npos) << list.output;
  const Outcome diff = runCli("kernel history '" + kernel.string() + "' --diff 1 2", env);
  EXPECT_NE(diff.output.find("+// an edit"), std::string::npos) << diff.output;
}

TEST(Cli, KernelHistoryListsTheVersionsAndDiffsTwoAsDiffDoes) {
  TempDir dir;
  const std::string root = (dir.path() / "history").string();
  const std::filesystem::path kernel = dir.path() / "my_conv.cu";
  std::string v1, v2;
  for (int i = 1; i <= 12; ++i) {
    v1 += "line " + std::to_string(i) + "\n";
    v2 += (i == 6 ? std::string("acc += in[i] * w[i];") : "line " + std::to_string(i)) + "\n";
  }
  v2 += "no newline at the end";
  {
    convscope::KernelHistory history(kernel, root);
    ASSERT_EQ(history.recordCompiled(v1, std::string("SASS A\nIMAD R1\n"), ""), 1);
    ASSERT_EQ(history.recordCompiled(v2, std::nullopt, "no nvdisasm here"), 2);
    ASSERT_EQ(history.recordCompiled(v2 + "\n// three\n", std::string("SASS A\nFFMA R1\n"), ""), 3);
    history.recordCheck(1, false, "wrong at [n=0][m=0][h=1][w=1]");
    history.recordCheck(3, true, "passed 12 random shapes");
    convscope::BenchmarkReport report;
    for (int batch : {100, 10000}) {
      convscope::BenchmarkRun run;
      run.batch = batch;
      for (double seconds : {0.25e-3 * batch / 100, 0.5e-3 * batch / 100}) {
        convscope::LayerBenchmark layer;
        layer.opTime.median = seconds;
        run.layers.push_back(layer);
      }
      report.runs.push_back(run);
    }
    history.recordOpTimes(3, convscope::opTimeSumsPerBatch(report));
  }
  const std::string env = "CONVSCOPE_KERNEL_HISTORY='" + root + "'";
  const Outcome list = runCli("kernel history '" + kernel.string() + "'", env);
  EXPECT_EQ(list.exitCode, 0) << list.output;
  std::vector<std::string> lines;
  std::istringstream in(list.output);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << list.output;
  EXPECT_TRUE(std::regex_search(lines[0], std::regex(R"(^v1 .* failed .*not timed.*wrong at)"))) << lines[0];
  EXPECT_TRUE(std::regex_search(lines[1], std::regex(R"(^v2 .* compiled .*not timed)"))) << lines[1];
  // 0.25 + 0.5 ms per 100 images, at 10,000: 75 ms.
  EXPECT_TRUE(std::regex_search(lines[2], std::regex(R"(^v3 .* passed .*op time 75\.000 ms at batch 10000)")))
      << lines[2];

  // The source diff: the hunks GNU diff -u prints for the same two texts.
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.path() / name, std::ios::binary) << text;
    return (dir.path() / name).string();
  };
  const std::string expected = hunksOf(shellOutput("diff -u '" + write("a", v1) + "' '" + write("b", v2) + "'"));
  ASSERT_FALSE(expected.empty()) << "diff(1) is needed for this test";
  const Outcome diff = runCli("kernel history '" + kernel.string() + "' --diff 1 v2", env);
  EXPECT_EQ(diff.exitCode, 0) << diff.output;
  EXPECT_NE(diff.output.find("--- my_conv.cu v1\n+++ my_conv.cu v2\n"), std::string::npos) << diff.output;
  EXPECT_EQ(hunksOf(diff.output), expected);
  const Outcome sass = runCli("kernel history '" + kernel.string() + "' --diff 1 3 --sass", env);
  EXPECT_EQ(sass.exitCode, 0) << sass.output;
  EXPECT_EQ(hunksOf(sass.output), "@@ -1,2 +1,2 @@\n SASS A\n-IMAD R1\n+FFMA R1\n");
  // What cannot be shown is said, naming the file.
  const Outcome noSass = runCli("kernel history '" + kernel.string() + "' --diff 1 2 --sass", env);
  EXPECT_NE(noSass.exitCode, 0);
  EXPECT_NE(noSass.output.find("my_conv.cu: version 2 has no SASS (no nvdisasm here)"), std::string::npos)
      << noSass.output;
  const Outcome noVersion = runCli("kernel history '" + kernel.string() + "' --diff 1 7", env);
  EXPECT_NE(noVersion.exitCode, 0);
  EXPECT_NE(noVersion.output.find("no version '7' in its history (it holds v1 to v3"), std::string::npos)
      << noVersion.output;
  const Outcome oneVersion = runCli("kernel history '" + kernel.string() + "' --diff 1", env);
  EXPECT_NE(oneVersion.exitCode, 0);
  EXPECT_NE(oneVersion.output.find("--diff A B"), std::string::npos) << oneVersion.output;
  // A file with no history says so, and where it would be.
  const Outcome none = runCli("kernel history '" + (dir.path() / "other.cu").string() + "'", env);
  EXPECT_EQ(none.exitCode, 0);
  EXPECT_NE(none.output.find("no versions kept yet"), std::string::npos) << none.output;
}

TEST(Cli, ProfileWritesItsKernelTableAsJsonWhereItCanRun) {
  TempDir dir;
  const std::string json = (dir.path() / "profile.json").string();
  const Outcome help = runCli("profile --help");
  EXPECT_NE(help.output.find("--json"), std::string::npos) << help.output;
  const Outcome noFile = runCli("profile --variant gpu-baseline --json");
  EXPECT_NE(noFile.exitCode, 0);
  EXPECT_NE(noFile.output.find("needs a value"), std::string::npos) << noFile.output;

  const Outcome r = runCli("profile --variant gpu-baseline --batch 10 --json '" + json + "'");
  if (!convscope::gpuInfo().usable) {
    EXPECT_NE(r.exitCode, 0) << r.output;
    EXPECT_FALSE(std::filesystem::exists(json)) << "no file without a profile";
    GPU_TEST_SKIP() << "no GPU (" << convscope::gpuInfo().unusableReason << "); the CLI said: " << r.output;
  }
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const convscope::KernelProfile profile = convscope::readKernelProfileJson(json);
  EXPECT_EQ(profile.variant, "gpu-baseline");
  EXPECT_EQ(profile.batch, 10);
  EXPECT_EQ(profile.device, convscope::gpuInfo().name);
  ASSERT_FALSE(profile.rows.empty());
  double shares = 0.0;
  for (const convscope::KernelRow& row : profile.rows) {
    EXPECT_NE(r.output.find(row.name), std::string::npos) << row.name << ": written but not printed";
    shares += row.share;
  }
  EXPECT_NEAR(shares, 1.0, 1e-9);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Malformed input through the CLI: a clear message and exit code 1, never a crash (exit codes
// from signals, 3 for "internal error") or a hang.

namespace malformed {

using convscope::testing::ModelBuilder;

// x (N x 1 x 28 x 28) -> Flatten -> Gemm to `classes` scores, the last class always winning.
void writeClassifier(const std::string& path, int classes) {
  ModelBuilder b;
  b.input("x", {-1, 1, 28, 28}).output("y", {-1, classes});
  b.node("Flatten", {"x"}, {"flat"}, "flatten");
  b.floats("B", {784, classes}, std::vector<float>(static_cast<size_t>(784 * classes), 0.0f));
  std::vector<float> bias(static_cast<size_t>(classes), 0.0f);
  bias.back() = 5.0f;
  b.floats("C", {classes}, bias);
  b.node("Gemm", {"flat", "B", "C"}, {"y"}, "fc");
  b.save(path);
}

TEST(CliMalformed, ModelWithTwelveClassesWritesEveryClassToTheCsv) {
  TempDir dir;
  const std::string model = (dir.path() / "twelve.onnx").string();
  writeClassifier(model, 12);
  const std::string csv = (dir.path() / "out.csv").string();
  const Outcome r = runCli("classify --model '" + model + "' --count 3 --variant cpu-reference --csv '" + csv + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_NE(header.find(",p_Ankle boot,p_class 10,p_class 11"), std::string::npos) << header;
  int rows = 0;
  while (std::getline(in, line)) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 5 + 12) << line;
    EXPECT_NE(line.find(",11,class 11,"), std::string::npos) << line;  // predicted: the last class
    ++rows;
  }
  EXPECT_EQ(rows, 3);
}

TEST(CliMalformed, ModelWithTwelveClassesNamesThePredictionOfAnImageFile) {
  if (!convscope::imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV to read image files";
  TempDir dir;
  const std::string model = (dir.path() / "twelve.onnx").string();
  writeClassifier(model, 12);
  const std::string header = "P5\n2 2\n255\n";
  std::vector<uint8_t> pgm(header.begin(), header.end());
  pgm.insert(pgm.end(), {0, 50, 100, 150});
  const std::string image = dir.write("pic.pgm", pgm).string();
  const Outcome r = runCli("classify --model '" + model + "' --variant cpu-reference --images '" + image + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("pic\\.pgm: class 11 \\([0-9.]+%\\)"))) << r.output;
}

// --labels names a model's many classes and --top K lists each image's K most probable. The
// model's scores are 0 but for the last class's 5, so its softmax is known here: e^5 / (e^5 + 11)
// for the last class and 1 / (e^5 + 11) for each other (a tie, which the lower class wins).
TEST(CliMalformed, TopKListsTheMostProbableClassesByTheLabelsFilesNamesWithTheTrueClassMarked) {
  TempDir dir;
  const std::string model = (dir.path() / "twelve.onnx").string();
  writeClassifier(model, 12);
  std::string names;
  for (int c = 0; c < 11; ++c) names += "kind " + std::to_string(c) + (c == 0 ? ", the first" : "") + "\n";
  names += "tabby \"cat\"";  // the last line without its line end
  const std::string labels = dir.write("labels.txt", std::vector<uint8_t>(names.begin(), names.end())).string();
  const std::string csv = (dir.path() / "out.csv").string();
  const Outcome r = runCli("classify --model '" + model + "' --count 2 --variant cpu-reference --top 3 --labels '" +
                           labels + "' --csv '" + csv + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const convscope::ImageSet images = convscope::ImageSet::loadIdxFolder(convscope::defaultDataFolder());
  const double e5 = std::exp(5.0), winner = 100.0 * e5 / (e5 + 11.0), other = 100.0 / (e5 + 11.0);
  char expected[512];
  for (int i = 0; i < 2; ++i) {
    const int label = images.label(i);
    std::snprintf(expected, sizeof expected,
                  "image %d (true class: kind %d%s):\n  1. tabby \"cat\" %.2f%%\n  2. kind 0, the first %.2f%%%s\n"
                  "  3. kind 1 %.2f%%%s\n",
                  i, label, label == 0 ? ", the first" : "", winner, other, label == 0 ? "  <- true class" : "", other,
                  label == 1 ? "  <- true class" : "");
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\nin:\n" << r.output;
  }
  // The CSV quotes the names that hold a comma or a quote, so its columns stay whole.
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_NE(header.find(",\"p_kind 0, the first\",p_kind 1,"), std::string::npos) << header;
  EXPECT_NE(header.find(",\"p_tabby \"\"cat\"\"\""), std::string::npos) << header;
}

// A model card's "class_names" name the outputs where no --labels is given; a card whose names are
// not the model's is refused naming the card.
TEST(CliMalformed, TheModelCardsClassNamesNameThePredictionsAndAWrongCountIsRefused) {
  TempDir dir;
  const std::string model = (dir.path() / "twelve.onnx").string();
  writeClassifier(model, 12);
  std::string card = R"({"test_accuracy": 0.1, "class_names": [)";
  for (int c = 0; c < 12; ++c) card += (c ? ", \"card " : "\"card ") + std::to_string(c) + "\"";
  card += "]}";
  dir.write("twelve.json", {card.begin(), card.end()});
  const Outcome named = runCli("classify --model '" + model + "' --count 1 --variant cpu-reference --top 2");
  ASSERT_EQ(named.exitCode, 0) << named.output;
  EXPECT_NE(named.output.find("  1. card 11 "), std::string::npos) << named.output;
  EXPECT_NE(named.output.find("  2. card 0 "), std::string::npos) << named.output;
  EXPECT_TRUE(std::regex_search(named.output, std::regex("\\(true class: card [0-9]\\)"))) << named.output;
  const std::string three = R"({"test_accuracy": 0.1, "class_names": ["a", "b", "c"]})";
  dir.write("twelve.json", {three.begin(), three.end()});
  const Outcome refused = runCli("classify --model '" + model + "' --count 1 --variant cpu-reference");
  EXPECT_EQ(refused.exitCode, 1) << refused.output;
  EXPECT_NE(refused.output.find("twelve.json names 3 classes, but the model twelve gives 12"), std::string::npos)
      << refused.output;
}

TEST(CliMalformed, ALabelsFileThatIsNotTheModelsIsRefusedBeforeAnyImageIsClassified) {
  TempDir dir;
  const std::string model = (dir.path() / "twelve.onnx").string();
  writeClassifier(model, 12);
  const std::string ten = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", blank = "a\n\nb\n";
  const struct {
    std::string arguments;
    std::string says;
  } cases[] = {
      {"--labels '" + dir.write("ten.txt", {ten.begin(), ten.end()}).string() + "'",
       "ten.txt names 10 classes, but the model twelve gives 12"},
      {"--labels '" + dir.write("blank.txt", {blank.begin(), blank.end()}).string() + "'",
       "blank.txt, line 2 is empty"},
      {"--labels '" + (dir.path() / "absent.txt").string() + "'", "absent.txt"},
      {"--top 0", "option '--top' needs a whole number of at least 1, got '0'"},
      {"--top many", "option '--top' needs a whole number of at least 1, got 'many'"},
  };
  for (const auto& c : cases) {
    const Outcome r = runCli("classify --model '" + model + "' --count 2 --variant cpu-reference " + c.arguments);
    EXPECT_EQ(r.exitCode, 1) << c.arguments << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.arguments << "\n" << r.output;
    EXPECT_EQ(r.output.find("Op Time"), std::string::npos) << "refused before the run: " << r.output;
  }
}

TEST(CliMalformed, FoldersDevicesAndFifosNamedAsFilesAreSaidToBeSo) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "x.png");
  std::filesystem::create_directories(dir.path() / "x.onnx");
  const std::string fifo = (dir.path() / "fifo.onnx").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string folder = dir.path().string();
  const struct {
    std::string arguments;
    std::string message;
  } cases[] = {
      {"classify --images '" + folder + "/x.png'", "x.png: is a directory"},
      {"classify --images /dev/null", "/dev/null: is a character device"},
      {"info --model '" + folder + "/x.onnx'", "x.onnx: is a directory"},
      {"info --model /dev/zero", "/dev/zero: is a character device"},
      {"info --model '" + fifo + "'", "fifo.onnx: is a named pipe"},
  };
  for (const auto& c : cases) {
    const Outcome r = runCli(c.arguments, "timeout 30");
    EXPECT_EQ(r.exitCode, 1) << c.arguments << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.arguments << "\n" << r.output;
  }
}

TEST(CliMalformed, DataFolderWithAFifoOrDevZeroDoesNotHangOrExhaustMemory) {
  for (const std::string kind : {"fifo", "zero"}) {
    TempDir dir;
    const std::filesystem::path images = dir.path() / "t10k-images-idx3-ubyte";
    if (kind == "fifo")
      ASSERT_EQ(mkfifo(images.c_str(), 0600), 0);
    else
      std::filesystem::create_symlink("/dev/zero", images);
    dir.write("t10k-labels-idx1-ubyte", {0, 0, 8, 1, 0, 0, 0, 1, 3});
    const Outcome r = runCli("classify --data '" + dir.path().string() + "'", "timeout 30");
    EXPECT_EQ(r.exitCode, 1) << kind << "\n" << r.output;
    EXPECT_NE(r.output.find(images.string() + ": is a "), std::string::npos) << kind << "\n" << r.output;
  }
}

TEST(CliMalformed, AbsurdShapesAreRefusedWithTheMemoryTheyNeedNotBadAlloc) {
  TempDir dir;
  const std::string model = (dir.path() / "huge.onnx").string();
  ModelBuilder b;
  b.input("x", {-1, 1, 1 << 20, 1 << 20}).output("y");
  b.weights("W", {2, 1, 3, 3});
  b.node("Conv", {"x", "W"}, {"h"}, "conv1");
  b.node("Flatten", {"h"}, {"y"}, "flat");
  b.save(model);
  const Outcome r = runCli("classify --model '" + model + "' --count 10 --variant cpu-im2col-gemm");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("huge\\.onnx: layer '[^']+' \\([A-Za-z]+\\) needs [0-9.]+ TB "
                                                     "for batch [0-9]+.*the limit is [0-9.]+ GB")))
      << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  // bench runs one batch as a whole: refused before the batch is built, with the same figures.
  const Outcome bench = runCli("bench --model '" + model + "' --variants cpu-reference --batches 10 --repeats 1");
  EXPECT_EQ(bench.exitCode, 1) << bench.output;
  EXPECT_TRUE(std::regex_search(bench.output, std::regex("huge\\.onnx: layer '[^']+' \\([A-Za-z]+\\) needs [0-9.]+ TB "
                                                         "for batch 10.*the limit is")))
      << bench.output;
}

// The header of a PNG whose IHDR says width x height (8-bit gray; CRC and pixel data left out:
// the size is read, and refused, before anything is decoded).
std::vector<uint8_t> pngHeader(uint32_t width, uint32_t height) {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  for (const uint32_t v : {width, height})
    for (int shift = 24; shift >= 0; shift -= 8) png.push_back(static_cast<uint8_t>(v >> shift));
  png.insert(png.end(), {8, 0, 0, 0, 0, 0, 0, 0, 0});
  return png;
}

// The header of a baseline JPEG (SOI, SOF0 of one component) whose frame says width x height.
std::vector<uint8_t> jpegHeader(uint16_t width, uint16_t height) {
  return {0xFF,
          0xD8,
          0xFF,
          0xC0,
          0,
          11,
          8,
          static_cast<uint8_t>(height >> 8),
          static_cast<uint8_t>(height),
          static_cast<uint8_t>(width >> 8),
          static_cast<uint8_t>(width),
          1,
          1,
          0x11,
          0,
          0xFF,
          0xD9};
}

TEST(CliMalformed, PicturesForAModelOf2To24SquaredAreRefusedBeforeTheyAreDecoded) {
  // issue 23: a model whose input is N x 1 x 2^24 x 2^24 and an ordinary picture ended in
  // "internal error: std::bad_alloc" (exit 3), from the resize to the model's input.
  if (!convscope::imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV to read image files";
  TempDir dir;
  const std::string model = (dir.path() / "huge.onnx").string();
  ModelBuilder b;
  b.input("x", {-1, 1, int64_t{1} << 24, int64_t{1} << 24}).output("y");
  b.weights("W", {2, 1, 3, 3});
  b.node("Conv", {"x", "W"}, {"h"}, "conv1");
  b.node("Flatten", {"h"}, {"y"}, "flat");
  b.save(model);
  const std::string pgm = "P5\n2 2\n255\n";
  std::vector<uint8_t> pgmBytes(pgm.begin(), pgm.end());
  pgmBytes.insert(pgmBytes.end(), {0, 85, 170, 255});
  for (const auto& [name, bytes] : {std::pair{"small.pgm", pgmBytes}, std::pair{"small.png", pngHeader(28, 28)},
                                    std::pair{"small.jpg", jpegHeader(28, 28)}}) {
    const std::string picture = dir.write(name, bytes).string();
    const Outcome r = runCli("classify --model '" + model + "' --images '" + picture + "'");
    EXPECT_EQ(r.exitCode, 1) << name << "\n" << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex("huge\\.onnx: layer '[^']+' \\([A-Za-z]+\\) needs [0-9.]+ TB "
                                                       "for batch 1.*the limit is [0-9.]+ GB")))
        << name << "\n"
        << r.output;
    // Refused before any picture was read: the header-only PNG and JPEG would fail to decode.
    EXPECT_EQ(r.output.find("Loading images"), std::string::npos) << name << "\n" << r.output;
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << name << "\n" << r.output;
  }
}

TEST(CliMalformed, PngAndJpegHeadersClaimingHugePicturesAreRefusedBeforeDecoding) {
  if (!convscope::imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV to read image files";
  TempDir dir;
  const struct {
    std::string name;
    std::vector<uint8_t> bytes;
    std::string size, megapixels;
  } cases[] = {{"claims.png", pngHeader(100000, 100000), "100000x100000", "10000.0 megapixels"},
               {"claims.jpg", jpegHeader(65535, 65535), "65535x65535", "4294.8 megapixels"},
               {"wide.png", pngHeader(0xFFFFFFFFu, 1), "4294967295x1", "4295.0 megapixels"}};
  for (const auto& c : cases) {
    const std::string picture = dir.write(c.name, c.bytes).string();
    const Outcome r = runCli("classify --model '" + kModels + "/lenet5.onnx' --images '" + picture + "'");
    EXPECT_EQ(r.exitCode, 1) << c.name << "\n" << r.output;
    EXPECT_NE(r.output.find(picture + ": the "), std::string::npos) << c.name << "\n" << r.output;
    EXPECT_NE(r.output.find(c.size + " (" + c.megapixels + ")"), std::string::npos) << c.name << "\n" << r.output;
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << c.name << "\n" << r.output;
  }
}

// A real photo through a real network, as a teacher would type it: the card's preprocessing is
// used and printed, and the top 5 are PyTorch's (recorded in the card, to the two decimals shown).
TEST(CliPhotos, ChelseaThroughEfficientNetLite0IsACatWithPyTorchsTop5) {
  const char* folder = std::getenv("CONVSCOPE_PHOTOS_DIR");
  const std::string photos = folder && *folder ? folder : "/usr/lib/python3/dist-packages/skimage/data";
  const std::string model = kModels + "/efficientnet-lite0.onnx";
  const Outcome r = runCli("classify --model '" + model + "' --variant cpu-onednn --top 5 --images '" + photos +
                           "/chelsea.png' '" + photos + "/coffee.png'");
  if (r.output.find("no OpenCV") != std::string::npos) GTEST_SKIP() << "this build cannot read image files";
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("Preprocessing: centre crop 0.875, RGB, (x * 255 - 127) / 128\n"), std::string::npos)
      << r.output;
  std::ifstream in(kModels + "/efficientnet-lite0.json");
  const nlohmann::json card = nlohmann::json::parse(in);
  for (const nlohmann::json& photo : card.at("photos")) {
    const std::string file = photo.at("file").get<std::string>();
    if (file != "chelsea.png" && file != "coffee.png") continue;
    std::string expected = photos + "/" + file + ":\n";
    int place = 0;
    for (const nlohmann::json& entry : photo.at("top5")) {
      char line[256];
      std::snprintf(line, sizeof line, "  %d. %s %.2f%%\n", ++place,
                    card.at("class_names").at(entry.at(0).get<size_t>()).get<std::string>().c_str(),
                    100.0 * entry.at(1).get<double>());
      expected += line;
    }
    EXPECT_NE(r.output.find(expected), std::string::npos) << "expected:\n" << expected << "in:\n" << r.output;
  }
  EXPECT_NE(r.output.find("chelsea.png:\n  1. tiger cat"), std::string::npos) << r.output;
}

TEST(CliMalformed, EveryPreprocessingOptionIsCheckedAndAColourModelRefusesTheGrayDataSet) {
  const std::string model = kModels + "/efficientnet-lite0.onnx";
  const std::string pictures = std::string(CONVSCOPE_SOURCE_DIR) + "/tests/data/pictures/";
  const struct {
    std::string options, says;
  } cases[] = {
      {"--resize crop", "--resize crop: it is fit, centre-crop or stretch"},
      {"--channel-order rbg", "--channel-order rbg: it is rgb or bgr"},
      {"--crop-fraction 1.5", "--crop-fraction 1.5: the part of the resized picture kept, above 0 and at most 1"},
      {"--crop-fraction half", "--crop-fraction half: not a number"},
      {"--mean 1,2", "--mean 1,2: one number, or three separated by commas"},
      {"--std 1,0,1", "--std 1,0,1: each value must be above 0"},
      {"--value-range -255", "--value-range -255: it must be above 0"},
      {"--mean 0.5,nan,1", "--mean 0.5,nan,1: \"nan\" is not a number"},
  };
  for (const auto& c : cases) {
    const Outcome r = runCli("classify --model '" + model + "' --images '" + pictures + "rgb.png' " + c.options);
    EXPECT_NE(r.exitCode, 0) << c.options;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.options << "\n" << r.output;
    EXPECT_EQ(r.output.find("Loading model"), std::string::npos) << "checked before anything is loaded";
  }
  const Outcome gray = runCli("classify --model '" + model + "' --count 2 --variant cpu-im2col-gemm");
  EXPECT_NE(gray.exitCode, 0);
  EXPECT_NE(gray.output.find("holds gray pictures, but " + model + " takes 3-channel ones"), std::string::npos)
      << gray.output;
}

// Each kind of picture file a photo comes as reaches a colour model and a gray one: 16 bits,
// alpha, gray, CMYK. Each gets a prediction, none a crash.
TEST(CliPhotos, SixteenBitAlphaGrayAndCmykFilesAreClassifiedByColourAndGrayModels) {
  const std::string pictures = std::string(CONVSCOPE_SOURCE_DIR) + "/tests/data/pictures/";
  std::string files;
  for (const char* name : {"rgb.png", "rgb16.png", "rgba.png", "gray.png", "cmyk.jpg"})
    files += " '" + pictures + name + "'";
  for (const std::string model : {"efficientnet-lite0", "lenet5"}) {
    const Outcome r =
        runCli("classify --model '" + kModels + "/" + model + ".onnx' --variant cpu-im2col-gemm --images" + files);
    if (r.output.find("no OpenCV") != std::string::npos) GTEST_SKIP() << "this build cannot read image files";
    ASSERT_EQ(r.exitCode, 0) << model << "\n" << r.output;
    for (const char* name : {"rgb.png: ", "rgb16.png: ", "rgba.png: ", "gray.png: ", "cmyk.jpg: "})
      EXPECT_NE(r.output.find(pictures + name), std::string::npos) << model << " " << name << "\n" << r.output;
  }
}

// Photos in class subfolders are a data set: the subfolders are the model's classes by name
// (ImageNet's "tiger cat"), or numbered in sorted order for a model without names; a subfolder
// that names no class is refused, naming it.
TEST(CliPhotos, AFolderOfPhotosInClassSubfoldersIsADataSetWithAccuracy) {
  const char* folder = std::getenv("CONVSCOPE_PHOTOS_DIR");
  const std::filesystem::path photos = folder && *folder ? folder : "/usr/lib/python3/dist-packages/skimage/data";
  TempDir dir;
  for (const auto& [kind, photo] : {std::pair{"tiger cat", "chelsea.png"}, std::pair{"espresso", "coffee.png"},
                                    std::pair{"espresso", "astronaut.png"}}) {
    std::filesystem::create_directories(dir.path() / "photos" / kind);
    std::filesystem::copy_file(photos / photo, dir.path() / "photos" / kind / photo);
  }
  dir.write("photos/README.txt", {'n', 'o', 't', 'e'});  // not a picture: skipped
  const std::string data = (dir.path() / "photos").string();
  const std::string model = kModels + "/efficientnet-lite0.onnx";
  const Outcome r = runCli("classify --model '" + model + "' --variant cpu-onednn --data '" + data + "'");
  if (r.output.find("no OpenCV") != std::string::npos) GTEST_SKIP() << "this build cannot read image files";
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("done (3 in 1000 classes)"), std::string::npos) << r.output;
  // chelsea is a tiger cat and coffee an espresso; the astronaut is no espresso.
  EXPECT_NE(r.output.find("Correctness: 0.6667 Model: efficientnet-lite0 Batch: 3"), std::string::npos) << r.output;

  std::filesystem::create_directories(dir.path() / "photos" / "teapots");
  dir.write("photos/teapots/empty.txt", {'x'});
  const Outcome wrong = runCli("classify --model '" + model + "' --variant cpu-onednn --data '" + data + "'");
  EXPECT_NE(wrong.exitCode, 0);
  EXPECT_NE(wrong.output.find(data + "/teapots: the subfolder names no class of the model"), std::string::npos)
      << wrong.output;

  // A model without names numbers the subfolders in order: espresso 0, teapots 1, tiger cat 2.
  const Outcome numbered =
      runCli("classify --model '" + kModels + "/lenet5.onnx' --variant cpu-im2col-gemm --data '" + data + "'");
  ASSERT_EQ(numbered.exitCode, 0) << numbered.output;
  EXPECT_NE(numbered.output.find("done (3 in 3 classes)"), std::string::npos) << numbered.output;
}

}  // namespace malformed
