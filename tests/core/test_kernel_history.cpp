// A kernel file's history: each compiled source is a version, kept on disk and read back by a
// fresh KernelHistory; an unchanged source is not kept twice; results land on the version they
// belong to; the oldest are dropped past the cap; a broken, foreign or oversized file in the
// folder is skipped with a message naming it, and the others still read.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/core/conv/kernel_history.h"
#include "app/core/engine/benchmark.h"
#include "app/core/util/line_diff.h"
#include "tests/core/test_support.h"

namespace convscope::testing {
namespace {

namespace fs = std::filesystem;

BenchmarkReport reportWithOpTimes(const std::vector<std::pair<int, std::vector<double>>>& batches) {
  BenchmarkReport report;
  for (const auto& [batch, layerSeconds] : batches) {
    BenchmarkRun run;
    run.batch = batch;
    for (double seconds : layerSeconds) {
      LayerBenchmark layer;
      layer.opTime = {seconds, seconds * 0.9, seconds * 1.2};  // median, min, max: the median counts
      run.layers.push_back(layer);
    }
    report.runs.push_back(run);
  }
  return report;
}

void writeText(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(KernelHistory, EachCompiledSourceIsAVersionReadBackInOrder) {
  TempDir root;
  const fs::path kernel = root.path() / "src/my_conv.cu";
  {
    KernelHistory history(kernel, root.path());
    EXPECT_TRUE(history.versions().empty());
    EXPECT_EQ(history.recordCompiled("v1\n", std::string("SASS 1"), ""), 1);
    EXPECT_EQ(history.recordCompiled("v2\n", std::nullopt, "no nvdisasm here"), 2);
    EXPECT_EQ(history.recordCompiled("v3\n", std::string("SASS 3"), ""), 3);
  }
  const KernelHistory reread(kernel, root.path());
  EXPECT_TRUE(reread.skipped().empty());
  ASSERT_EQ(reread.versions().size(), 3u);
  EXPECT_EQ(reread.versions()[0].source, "v1\n");
  EXPECT_EQ(reread.versions()[0].sass, std::optional<std::string>("SASS 1"));
  EXPECT_EQ(reread.versions()[1].source, "v2\n");
  EXPECT_FALSE(reread.versions()[1].sass);
  EXPECT_EQ(reread.versions()[1].sassMissingReason, "no nvdisasm here");
  EXPECT_EQ(reread.versions()[2].number, 3);
  EXPECT_EQ(reread.versions()[2].status(), "compiled");
  EXPECT_EQ(reread.versions()[2].savedAt.size(), std::string("2026-11-26T00:00:00Z").size());
  // Keyed by the absolute path: another file of the same name elsewhere has its own history.
  EXPECT_TRUE(KernelHistory(root.path() / "other/my_conv.cu", root.path()).versions().empty());
  EXPECT_EQ(reread.folder().parent_path(), root.path());
  EXPECT_EQ(reread.folder().filename().string().rfind("my_conv.cu-", 0), 0u);
}

TEST(KernelHistory, ASaveThatChangesNothingIsNotKeptTwice) {
  TempDir root;
  KernelHistory history(root.path() / "k.cu", root.path());
  EXPECT_EQ(history.recordCompiled("same\n", std::nullopt, "no nvdisasm"), 1);
  EXPECT_EQ(history.recordCompiled("same\n", std::string("SASS"), ""), 1);  // the SASS arrives later
  EXPECT_EQ(history.recordCompiled("other\n", std::nullopt, ""), 2);
  EXPECT_EQ(history.recordCompiled("same\n", std::nullopt, ""), 3);  // back to an older text: a new version
  const KernelHistory reread(root.path() / "k.cu", root.path());
  ASSERT_EQ(reread.versions().size(), 3u);
  EXPECT_EQ(reread.versions()[0].sass, std::optional<std::string>("SASS"));
  EXPECT_TRUE(reread.versions()[0].sassMissingReason.empty());
}

TEST(KernelHistory, ResultsAttachToTheirVersion) {
  TempDir root;
  KernelHistory history(root.path() / "k.cu", root.path());
  const int first = history.recordCompiled("first\n", std::nullopt, "");
  const int second = history.recordCompiled("second\n", std::nullopt, "");
  EXPECT_TRUE(history.recordCheck(first, false, "wrong at [n=0][m=1][h=2][w=3]"));
  EXPECT_TRUE(history.recordCheck(second, true, "passed 12 random shapes"));
  // Batches out of order, and three layers each: the op time is the sum of the medians.
  EXPECT_TRUE(history.recordOpTimes(
      second, opTimeSumsPerBatch(reportWithOpTimes({{10000, {0.004, 0.002, 0.001}}, {100, {0.0001, 0.0002}}}))));
  EXPECT_FALSE(history.recordCheck(99, true, "no such version"));

  const KernelHistory reread(root.path() / "k.cu", root.path());
  const KernelVersion* failed = reread.version(first);
  const KernelVersion* passed = reread.version(second);
  ASSERT_TRUE(failed && passed);
  EXPECT_EQ(failed->status(), "failed");
  EXPECT_EQ(failed->checkSummary, "wrong at [n=0][m=1][h=2][w=3]");
  EXPECT_TRUE(failed->opTimes.empty());
  EXPECT_FALSE(failed->chartedOpTime());
  EXPECT_EQ(passed->status(), "passed");
  ASSERT_EQ(passed->opTimes.size(), 2u);
  EXPECT_EQ(passed->opTimes[0].batch, 100);
  EXPECT_DOUBLE_EQ(passed->opTimes[0].seconds, 0.0001 + 0.0002);
  EXPECT_EQ(passed->opTimes[1].batch, 10000);
  EXPECT_DOUBLE_EQ(passed->opTimes[1].seconds, 0.004 + 0.002 + 0.001);
  ASSERT_TRUE(passed->chartedOpTime());
  EXPECT_EQ(passed->chartedOpTime()->batch, 10000);
}

TEST(KernelHistory, WithoutBatch10000TheChartUsesTheLargestBatchTimed) {
  KernelVersion version;
  version.opTimes = {{100, 0.5}, {1000, 2.0}};
  ASSERT_TRUE(version.chartedOpTime());
  EXPECT_EQ(version.chartedOpTime()->batch, 1000);
  EXPECT_DOUBLE_EQ(version.chartedOpTime()->seconds, 2.0);
}

TEST(KernelHistory, KeepsAtMostTheCapDroppingTheOldest) {
  TempDir root;
  {
    KernelHistory history(root.path() / "k.cu", root.path(), 3);
    for (int i = 1; i <= 5; ++i) EXPECT_EQ(history.recordCompiled("v" + std::to_string(i), std::nullopt, ""), i);
    ASSERT_EQ(history.versions().size(), 3u);
  }
  const KernelHistory reread(root.path() / "k.cu", root.path(), 3);
  ASSERT_EQ(reread.versions().size(), 3u);
  EXPECT_EQ(reread.versions().front().number, 3);
  EXPECT_EQ(reread.versions().front().source, "v3");
  EXPECT_EQ(reread.versions().back().source, "v5");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(reread.folder())) files += entry.path().filename() != "kernel.json";
  EXPECT_EQ(files, 3);  // the dropped versions' files are gone
  EXPECT_FALSE(reread.version(1));
}

TEST(KernelHistory, BrokenForeignAndOversizedFilesAreSkippedNamingThem) {
  TempDir root;
  fs::path folder;
  {
    KernelHistory history(root.path() / "k.cu", root.path());
    history.recordCompiled("good one\n", std::nullopt, "");
    history.recordCompiled("good two\n", std::nullopt, "");
    folder = history.folder();
  }
  writeText(folder / "v000010.json", "{\"schema\": \"convscope-kernel-version/1\", \"number\": ");  // cut short
  writeText(folder / "v000011.json", R"({"name": "someone else's file"})");
  writeText(folder / "v000012.json", "");
  writeText(folder / "v000013.json",
            R"({"schema": "convscope-kernel-version/1", "number": 13, "savedAt": "x", "source": 5,
                "sass": null, "check": null, "opTimes": []})");
  writeText(folder / "v000014.json", std::string(KernelHistory::kMaxVersionFileBytes + 1, ' '));
  writeText(folder / "notes.txt", "not a version: ignored");

  KernelHistory history(root.path() / "k.cu", root.path());
  ASSERT_EQ(history.versions().size(), 2u);
  EXPECT_EQ(history.versions()[1].source, "good two\n");
  ASSERT_EQ(history.skipped().size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const std::string name = (folder / ("v00001" + std::to_string(i) + ".json")).string();
    EXPECT_NE(history.skipped()[i].find(name), std::string::npos) << history.skipped()[i];
  }
  EXPECT_NE(history.skipped()[1].find("not a ConvScope kernel version"), std::string::npos) << history.skipped()[1];
  EXPECT_NE(history.skipped()[4].find("larger than a kernel version can be"), std::string::npos);
  // A new version overwrites no file, broken ones included.
  EXPECT_EQ(history.recordCompiled("three\n", std::nullopt, ""), 15);
}

TEST(KernelHistory, ASourceOverTheCapIsRefusedNamingTheFile) {
  TempDir root;
  KernelHistory history(root.path() / "huge.cu", root.path());
  expectError([&] { history.recordCompiled(std::string(KernelHistory::kMaxSourceBytes + 1, 'x'), std::nullopt, ""); },
              {"huge.cu", "more than its history keeps"});
  EXPECT_TRUE(history.versions().empty());
  // SASS over its cap: the version is kept without it, and says why.
  history.recordCompiled("small\n", std::string(KernelHistory::kMaxSassBytes + 1, 's'), "");
  ASSERT_EQ(history.versions().size(), 1u);
  EXPECT_FALSE(history.versions()[0].sass);
  EXPECT_NE(history.versions()[0].sassMissingReason.find("larger than the history keeps"), std::string::npos);
}

// nvdisasm's listing as it prints it: an address before each instruction and its encoding after,
// with a second encoding line under it.
std::string sassListing(const std::vector<std::string>& instructions) {
  std::string listing = "        .text.convscope_conv:\n";
  for (size_t i = 0; i < instructions.size(); ++i) {
    char address[16];
    std::snprintf(address, sizeof address, "/*%04zx*/", i * 16);
    listing += std::string("        ") + address + "                   " + instructions[i] + " ;   /* 0x" +
               std::to_string(1000 + i * 7 + instructions[i].size()) + "a0000017a02 */\n";
    listing +=
        "                                                          /* 0x000fe4000000" + std::to_string(i) + "f00 */\n";
  }
  return listing;
}

TEST(KernelHistory, ComparedSassDiffersOnlyWhereTheInstructionsDo) {
  const std::vector<std::string> before = {"MOV R1, c[0x0][0x28]", "IMAD R2, R3, R4, R5", "STG.E [R6], R2", "EXIT"};
  std::vector<std::string> after = before;
  after.insert(after.begin() + 1, "FFMA R7, R8, R9, R7");  // one instruction more: every later address shifts
  const LineDiff printed = diffLines(sassListing(before), sassListing(after));
  const LineDiff compared = diffLines(comparableSass(sassListing(before)), comparableSass(sassListing(after)));
  EXPECT_GT(printed.added(), 4);  // as printed, each later instruction's line (and encoding) differs
  EXPECT_EQ(compared.added(), 1);
  EXPECT_EQ(compared.removed(), 0);
  const std::string comparable = comparableSass(sassListing(before));
  EXPECT_EQ(
      comparable,
      "  .text.convscope_conv:\n  MOV R1, c[0x0][0x28] ;\n  IMAD R2, R3, R4, R5 ;\n  STG.E [R6], R2 ;\n  EXIT ;\n")
      << comparable;
  EXPECT_EQ(comparableSass(""), "");
}

TEST(KernelHistory, TheRootFollowsTheEnvironment) {
  const char* saved = std::getenv("CONVSCOPE_KERNEL_HISTORY");
  const std::string savedValue = saved ? saved : "";
  unsetenv("CONVSCOPE_KERNEL_HISTORY");
  const char* savedXdg = std::getenv("XDG_DATA_HOME");
  const std::string savedXdgValue = savedXdg ? savedXdg : "";
  setenv("XDG_DATA_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(kernelHistoryRoot(), fs::path("/tmp/xdg-test/ConvScope/convscope/kernel-history"));
  setenv("CONVSCOPE_KERNEL_HISTORY", "/tmp/explicit", 1);
  EXPECT_EQ(kernelHistoryRoot(), fs::path("/tmp/explicit"));
  if (saved)
    setenv("CONVSCOPE_KERNEL_HISTORY", savedValue.c_str(), 1);
  else
    unsetenv("CONVSCOPE_KERNEL_HISTORY");
  if (savedXdg)
    setenv("XDG_DATA_HOME", savedXdgValue.c_str(), 1);
  else
    unsetenv("XDG_DATA_HOME");
}

}  // namespace
}  // namespace convscope::testing
