// Why a student's kernel is slow and what it said, without a GPU: ptxas's report read, the
// occupancy against hand computations from the CUDA guide's limits, the source line -> PTX/SASS
// map, kernel info / ptx / sass on the templates (NVRTC for sm_90; SASS where nvdisasm is), the
// message where nvdisasm is missing, the kernel's output capped and counted, and every fault
// message in the student's terms: their file, no ConvScope path, no CUDA API name.
#include <gtest/gtest.h>

#include <chrono>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <tuple>

#include "app/core/conv/conv_check.h"
#include "app/core/conv/conv_failure_map.h"
#include "app/core/conv/cpu_backends.h"
#include "app/core/conv/kernel_messages.h"
#include "app/core/conv/kernel_resources.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/fair_timing.h"
#include "app/core/engine/user_kernel_job.h"
#include "app/core/util/child_process.h"
#include "gpu/user_kernel.h"
#include "gpu/user_kernel_inspect.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

const std::filesystem::path kTemplates = std::filesystem::path(CONVSCOPE_SOURCE_DIR) / "examples/kernels";
const std::filesystem::path kKernels = std::filesystem::path(CONVSCOPE_TEST_DATA_DIR) / "kernels";

#define SKIP_WITHOUT_NVRTC() \
  if (const std::string reason = gpu::userKernelCompilerUnavailableReason(); !reason.empty()) GPU_TEST_SKIP() << reason

// ---- ptxas's report

TEST(PtxasReport, ReadsTheNamedKernelsFiguresOnly) {
  const std::string log =
      "ptxas info    : 3 bytes gmem\n"
      "ptxas info    : Compiling entry function 'helper' for 'sm_90'\n"
      "ptxas info    : Function properties for helper\n"
      "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 80 registers, used 0 barriers, 64 bytes smem\n"
      "ptxas info    : Compiling entry function 'convscope_conv' for 'sm_90'\n"
      "ptxas info    : Function properties for convscope_conv\n"
      "ptxas         .     48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 4352 bytes smem, 400 bytes cmem[0], 16 bytes cmem[3]\n"
      "ptxas info    : Compile time = 91.875 ms\n";
  const KernelResources r = parsePtxasReport(log, "convscope_conv");
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.registers, 255);
  EXPECT_EQ(r.sharedStaticBytes, 4352);
  EXPECT_EQ(r.localBytes, 48);
  EXPECT_EQ(r.spillStoreBytes, 40);
  EXPECT_EQ(r.spillLoadBytes, 36);
  EXPECT_EQ(r.constantBytes, 16);  // bank 0 is the parameters
  const KernelResources helper = parsePtxasReport(log, "helper");
  EXPECT_EQ(helper.registers, 80);
  EXPECT_EQ(helper.sharedStaticBytes, 64);
  EXPECT_FALSE(parsePtxasReport(log, "absent").found);
}

// ---- occupancy

TEST(Occupancy, MatchesHandComputationsFromTheGuidesLimits) {
  // sm_90 (the CUDA C++ Programming Guide): 64 warps, 32 blocks, 64K registers and 228 KB of
  // shared memory per SM, registers per warp in units of 256 within each quarter of the SM,
  // shared memory in units of 128 bytes with 1 KB reserved per block.
  const auto sm90 = architectureLimits("sm_90");
  ASSERT_TRUE(sm90);
  struct Case {
    int threads, registers, shared, blocks;
    const char* limitedBy;
  };
  const Case cases[] = {
      {256, 32, 0, 8, "warps"},                  // 8 warps a block: 64 / 8
      {256, 64, 0, 4, "registers"},              // 2048 a warp: 16384 / 2048 = 8 a quarter, 32 warps
      {256, 128, 0, 2, "registers"},             // 4096 a warp: 4 a quarter, 16 warps
      {256, 40, 0, 6, "registers"},              // 1280 a warp: 12 a quarter, 48 warps
      {32, 16, 0, 32, "blocks per SM"},          // 1 warp a block: 32 blocks before 64 warps
      {128, 32, 48 * 1024, 4, "shared memory"},  // (48K + 1K) a block: 233472 / 50176 = 4
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.threads) + " threads, " + std::to_string(c.registers) + " registers");
    KernelResources r;
    r.registers = c.registers;
    r.sharedStaticBytes = c.shared;
    const BlockOccupancy o = computeOccupancy(*sm90, c.threads, r);
    EXPECT_EQ(o.blocksPerSm, c.blocks);
    EXPECT_EQ(o.limitedBy, c.limitedBy);
    EXPECT_EQ(o.activeWarps, c.blocks * ((c.threads + 31) / 32));
    EXPECT_DOUBLE_EQ(o.fraction(), o.activeWarps / 64.0);
    EXPECT_TRUE(o.computed);
  }
  // sm_86: 48 warps, 16 blocks, 100 KB; 40 registers: 12 warps a quarter, 48 warps, 6 blocks.
  KernelResources r;
  r.registers = 40;
  const BlockOccupancy o86 = computeOccupancy(*architectureLimits("sm_86"), 256, r);
  EXPECT_EQ(o86.blocksPerSm, 6);
  EXPECT_DOUBLE_EQ(o86.fraction(), 1.0);
  // A block larger than 1024 threads never launches.
  EXPECT_EQ(computeOccupancy(*sm90, 2048, r).blocksPerSm, 0);
  EXPECT_FALSE(architectureLimits("sm_61"));
  // No shared memory on sm_75, which reserves none a block: that resource sets no limit, said in
  // words (never 2147483647).
  const BlockOccupancy o75 = computeOccupancy(*architectureLimits("sm_75"), 256, r);
  EXPECT_EQ(blocksLimitText(o75.blocksByShared), "no limit");
  EXPECT_EQ(blocksLimitText(o86.blocksByShared), std::to_string(o86.blocksByShared));
}

// ---- source lines of a listing

TEST(ListingLines, PtxLocAndSassFileMarkersMapToTheStudentsLines) {
  const std::string ptx =
      ".visible .entry convscope_conv(\n"  // 1
      "{\n"                                // 2
      "\t.loc\t1 14 0\n"                   // 3
      "\tmov.u32 %r1, %tid.x;\n"           // 4
      "\t.loc\t2 3 0\n"                    // 5 another file
      "\tadd.s32 %r2, %r1, 1;\n"           // 6
      "\t.loc\t1 28 9\n"                   // 7
      "\tld.global.f32 %f1, [%rd1];\n"     // 8
      "\tret;\n"                           // 9
      "}\n"                                // 10
      "\t.file\t1 \"/somewhere/kernels/mine.cu\"\n"
      "\t.file\t2 \"convscope_kernel.h\"\n";
  const std::vector<int> lines = sourceLinesOfListing(ptx, ListingKind::Ptx, "kernels/mine.cu");
  ASSERT_EQ(lines.size(), 12u);
  EXPECT_EQ(lines[0], 0);
  EXPECT_EQ(lines[3], 14);
  EXPECT_EQ(lines[5], 0);
  EXPECT_EQ(lines[7], 28);
  EXPECT_EQ(lines[8], 28);
  EXPECT_EQ(lines[9], 0);  // the closing brace ends the function
  EXPECT_EQ(listingLinesOfSourceLine(lines, 28), (std::vector<int>{7, 8, 9}));
  EXPECT_EQ(listingLinesOfSourceLine(lines, 99), std::vector<int>{});

  const std::string sass =
      "//--------------------- .text.convscope_conv --------------------------\n"  // 1
      "\t//## File \"/abs/kernels/mine.cu\", line 15\n"                            // 2
      "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"                // 3
      "\t//## File \"/abs/kernels/mine.cu\", line 29\n"                            // 4
      "        /*0010*/                   FFMA R14, R25, R24, R14 ;\n"             // 5
      "        /*0020*/                   FFMA R14, R27, R26, R14 ;\n"             // 6
      "\t//## File \"/abs/other.h\", line 29\n"                                    // 7
      "        /*0030*/                   EXIT ;\n";                               // 8
  const std::vector<int> sassLines = sourceLinesOfListing(sass, ListingKind::Sass, "kernels/mine.cu");
  EXPECT_EQ(listingLinesOfSourceLine(sassLines, 29), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(listingLinesOfSourceLine(sassLines, 15), (std::vector<int>{2, 3}));
}

// ---- kernel info, ptx, sass on the templates (NVRTC, no GPU needed)

TEST(KernelInfo, TheTemplatesFiguresAndOccupancyForSm90) {
  SKIP_WITHOUT_NVRTC();
  for (const char* name : {"naive_conv.cu", "tiled_conv.cu"}) {
    SCOPED_TRACE(name);
    const UserKernelSource source = readUserKernelSource(kTemplates / name);
    const gpu::UserKernelInspection info = gpu::inspectUserKernel(source, "sm_90");
    ASSERT_TRUE(info.kernel.ok()) << info.kernel.errorText();
    EXPECT_EQ(info.kernel.architecture, "sm_90");
    EXPECT_TRUE(info.resources.found) << info.kernel.log;
    EXPECT_GT(info.resources.registers, 0);
    EXPECT_LE(info.resources.registers, 255);
    if (std::string(name) == "tiled_conv.cu") {
      EXPECT_GT(info.resources.sharedStaticBytes, 0);
    }
    ASSERT_TRUE(info.occupancy);
    // By hand from the sm_90 limits, with the registers the compiler reported.
    const int threads = source.launch.blockX * source.launch.blockY, warps = (threads + 31) / 32;
    const int perWarp = (info.resources.registers * 32 + 255) / 256 * 256;
    const int byRegisters = 16384 / perWarp * 4 / warps;
    const int byShared = 233472 / ((info.resources.sharedStaticBytes + 1024 + 127) / 128 * 128);
    const int blocks = std::min({64 / warps, 32, byRegisters, byShared});
    if (info.occupancy->computed) {  // no GPU of this architecture here
      EXPECT_EQ(info.occupancy->blocksPerSm, blocks);
      EXPECT_NE(info.occupancyFrom.find("computed"), std::string::npos);
    }
    EXPECT_EQ(info.occupancy->activeWarps, info.occupancy->blocksPerSm * warps);
  }
}

// The compiler's figures (ptxas's report in NVRTC's log) for tiled_conv.cu on sm_90: some
// registers, and as shared memory exactly its one static array, patch[PATCH_HEIGHT][PATCH_WIDTH]
// floats of (tile + largest kernel - 1) a side. Compiled twice, as a session compiles a kernel
// again and again: where a GPU driver is loaded, NVRTC (12.9 on) answers a program it compiled
// before from the driver's compute cache, without running ptxas, and the log has no report (on an
// H200 the compiler's figures were then 0 registers and 0 bytes beside the driver's 32 and 1,936).
// Without a driver, as here, NVRTC caches nothing: this catches a parser or an option that loses
// the report; the GPU machine, the cache.
TEST(KernelInfo, EveryCompileForSm90ReportsTheRegistersAndTheStaticSharedArray) {
  SKIP_WITHOUT_NVRTC();
  const UserKernelSource source = readUserKernelSource(kTemplates / "tiled_conv.cu");
  ASSERT_TRUE(source.ok());
  const int patchHeight = source.launch.tileHeight + source.launch.maxKernel - 1;
  const int patchWidth = source.launch.tileWidth + source.launch.maxKernel - 1;
  const int patchBytes = patchHeight * patchWidth * static_cast<int>(sizeof(float));
  ASSERT_EQ(patchBytes, 22 * 22 * 4) << "the template's macros changed: this test's arithmetic reads them";
  gpu::UserKernelBuildOptions options;
  options.architecture = "sm_90";
  options.ptxasInfo = true;
  for (int compile = 1; compile <= 2; ++compile) {
    SCOPED_TRACE("compile " + std::to_string(compile));
    const gpu::CompiledUserKernel kernel = gpu::compileUserKernel(source, options);
    ASSERT_TRUE(kernel.ok()) << kernel.errorText();
    const KernelResources r = parsePtxasReport(kernel.log, kernel.loweredName);
    EXPECT_TRUE(r.found) << "no ptxas report for " << kernel.loweredName << " in NVRTC's log:\n" << kernel.log;
    EXPECT_GT(r.registers, 0) << kernel.log;
    EXPECT_LE(r.registers, 255) << kernel.log;
    EXPECT_EQ(r.sharedStaticBytes, patchBytes) << kernel.log;
  }
}

TEST(KernelInfo, ThePtxNamesTheKernelAndMapsItsLines) {
  SKIP_WITHOUT_NVRTC();
  const UserKernelSource source = readUserKernelSource(kTemplates / "naive_conv.cu");
  gpu::UserKernelBuildOptions options;
  options.architecture = "sm_90";
  options.keepPtx = true;
  const gpu::CompiledUserKernel kernel = gpu::compileUserKernel(source, options);
  ASSERT_TRUE(kernel.ok()) << kernel.errorText();
  EXPECT_NE(kernel.ptx.find(".entry convscope_conv"), std::string::npos);
  // The line that multiplies and adds (naive_conv.cu:28-29) compiles to loads and an FMA.
  const std::vector<int> lines = sourceLinesOfListing(kernel.ptx, ListingKind::Ptx, source.path.string());
  int fromLine28 = 0;
  for (int line : lines) fromLine28 += line == 28;
  EXPECT_GT(fromLine28, 0);
}

TEST(KernelInfo, TheSassHasFusedMultiplyAdds) {
  SKIP_WITHOUT_NVRTC();
  if (!findNvdisasm()) GTEST_SKIP() << nvdisasmMissingMessage();
  const UserKernelSource source = readUserKernelSource(kTemplates / "naive_conv.cu");
  gpu::UserKernelBuildOptions options;
  options.architecture = "sm_90";
  const gpu::CompiledUserKernel kernel = gpu::compileUserKernel(source, options);
  ASSERT_TRUE(kernel.ok());
  const std::string sass = disassembleCubin(kernel.image, source.path.string());
  EXPECT_NE(sass.find("FFMA"), std::string::npos);
  const std::vector<int> lines = sourceLinesOfListing(sass, ListingKind::Sass, source.path.string());
  bool ffmaOnTheSumLines = false;
  std::istringstream in(sass);
  int i = 0;
  for (std::string line; std::getline(in, line); ++i)
    if (line.find("FFMA") != std::string::npos && (lines[i] == 28 || lines[i] == 29)) ffmaOnTheSumLines = true;
  EXPECT_TRUE(ffmaOnTheSumLines);
}

TEST(KernelInfo, WithoutNvdisasmTheCliSaysSoAndWhereToGetIt) {
  SKIP_WITHOUT_NVRTC();
  const std::string command = "CONVSCOPE_NVDISASM=/nonexistent/nvdisasm '" + std::string(CONVSCOPE_CLI_PATH) +
                              "' kernel sass '" + (kTemplates / "naive_conv.cu").string() + "' --arch sm_90";
  const ChildOutcome run = runChildProcess({"/bin/sh", "-c", command}, 120);
  EXPECT_EQ(run.exitCode, 1) << run.output;
  EXPECT_NE(run.output.find("naive_conv.cu: no nvdisasm at /nonexistent/nvdisasm"), std::string::npos) << run.output;
}

TEST(KernelInfo, TheMissingNvdisasmMessageGivesAbsolutePathsAndTheKernelsOwnName) {
  // Unset, ConvScope looks in its own places; the message must be usable from any folder.
  const char* before = std::getenv("CONVSCOPE_NVDISASM");
  const std::string saved = before ? before : "";
  ::unsetenv("CONVSCOPE_NVDISASM");
  const std::string message = nvdisasmMissingMessage("/home/ada/my_conv.cu");
  if (before) ::setenv("CONVSCOPE_NVDISASM", saved.c_str(), 1);
  const std::string script = std::string(CONVSCOPE_SOURCE_DIR) + "/scripts/install-nvdisasm.sh";
  EXPECT_NE(message.find("Install it with " + script), std::string::npos) << message;
  EXPECT_NE(message.find(std::string(CONVSCOPE_SOURCE_DIR) + "/.deps/nvdisasm"), std::string::npos) << message;
  EXPECT_EQ(message.find(" scripts/"), std::string::npos) << message;  // never relative
  EXPECT_NE(message.find("convscope-cli kernel ptx /home/ada/my_conv.cu"), std::string::npos) << message;
  EXPECT_EQ(message.find("FILE.cu"), std::string::npos) << message;
}

TEST(KernelInfo, TheCliPrintsFiguresAndSaysTheOccupancyIsComputed) {
  SKIP_WITHOUT_NVRTC();
  const ChildOutcome run = runChildProcess(
      {CONVSCOPE_CLI_PATH, "kernel", "info", (kTemplates / "tiled_conv.cu").string(), "--arch", "sm_86"}, 120);
  ASSERT_TRUE(run.succeeded()) << run.output;
  EXPECT_TRUE(std::regex_search(run.output, std::regex(R"(registers per thread\s+[1-9]\d*)"))) << run.output;
  EXPECT_NE(run.output.find("computed from sm_86's limits"), std::string::npos) << run.output;
  EXPECT_TRUE(std::regex_search(run.output, std::regex(R"(\d+ blocks per SM, \d+ of 48 warps)"))) << run.output;
  const ChildOutcome bad = runChildProcess(
      {CONVSCOPE_CLI_PATH, "kernel", "info", (kTemplates / "tiled_conv.cu").string(), "--arch", "x"}, 60);
  EXPECT_NE(bad.output.find("--arch: 'x' is not an architecture"), std::string::npos) << bad.output;
  // One that CUDA 13 dropped: refused with the list of those that work, not the compiler's words.
  const ChildOutcome dropped = runChildProcess(
      {CONVSCOPE_CLI_PATH, "kernel", "info", (kTemplates / "tiled_conv.cu").string(), "--arch", "sm_70"}, 60);
  EXPECT_NE(dropped.exitCode, 0);
  EXPECT_NE(dropped.output.find("--arch: 'sm_70' is not an architecture ConvScope can compile for here; these are: "
                                "sm_75, sm_80"),
            std::string::npos)
      << dropped.output;
  EXPECT_EQ(dropped.output.find("nvrtc"), std::string::npos) << dropped.output;
}

// ---- the kernel's output

TEST(KernelOutput, CappedAndCounted) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "line " + std::to_string(i) + "\n";
  text += "Assertion late";  // no newline: still a line
  const KernelOutput output = capKernelOutput(text, 300);
  EXPECT_EQ(output.totalLines, 1001);
  ASSERT_EQ(output.lines.size(), 300u);
  EXPECT_EQ(output.lines[0], "line 0");
  EXPECT_EQ(output.lines[299], "line 299");
  EXPECT_TRUE(output.truncated());
  EXPECT_NE(output.text().find("1001 lines in all; the first 300 shown"), std::string::npos);
  const KernelOutput small = capKernelOutput("a\nb\n", 300);
  EXPECT_EQ(small.totalLines, 2);
  EXPECT_FALSE(small.truncated());
  EXPECT_EQ(small.text(), "a\nb\n");
  EXPECT_EQ(capKernelOutput("", 300).totalLines, 0);

  const std::filesystem::path file = std::filesystem::temp_directory_path() / "convscope-test-kernel-output.txt";
  {
    std::ofstream out(file);
    for (int i = 0; i < 500; ++i) out << "x\n";
    out << "mine.cu:7: void convscope_conv(...): block: [0,0,0], thread: [0,0,0] Assertion `k < 3` failed.\n";
  }
  const KernelOutput read = readKernelOutput(file, 300);
  EXPECT_EQ(read.totalLines, 501);
  ASSERT_EQ(read.lateAssertions.size(), 1u);  // kept past the cap: the fault's message needs it
  EXPECT_EQ(findKernelAssertion(read.textForDiagnosis()).line, 7);
  std::filesystem::remove(file);
  EXPECT_EQ(readKernelOutput(file).totalLines, 0);
}

// ---- faults in the student's terms

// No ConvScope path and no CUDA API name (cudaXxx, cuXxx calls) in a message to the student.
void expectStudentTerms(const std::string& message, const std::string& file) {
  EXPECT_EQ(message.rfind(file, 0), 0u) << message;
  EXPECT_EQ(message.find("gpu/"), std::string::npos) << message;
  EXPECT_EQ(message.find(".cpp"), std::string::npos) << message;
  EXPECT_FALSE(std::regex_search(message, std::regex(R"(\bcu[A-Z]\w*|\bcuda[A-Z]\w*)"))) << message;
}

TEST(KernelFaults, EachFaultInTheStudentsTerms) {
  const std::string file = "kernels/mine.cu";
  // What gpu::CudaError says for each (gpu/cuda_check.h: "path:line: expression failed: what").
  const auto cuda = [](const std::string& what) {
    return "gpu/cuda_device.cu:119: cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream) failed: " +
           what;
  };
  struct Case {
    std::string error, output, expected;
  };
  const Case cases[] = {
      {cuda("an illegal memory access was encountered"), "", "read or wrote outside its buffers"},
      {cuda("unspecified launch failure"), "", "trapped"},
      {cuda("an illegal instruction was encountered"), "", "trapped"},
      {cuda("misaligned address"), "", "misaligned"},
      {cuda("the launch timed out and was terminated"), "", "time limit"},
      {"gpu/user_kernel.cpp:212: kernel launch failed: too many resources requested for launch", "",
       "CONVSCOPE_BLOCK_X x CONVSCOPE_BLOCK_Y"},
      {cuda("device-side assert triggered"),
       "kernels/mine.cu:11: void convscope_conv(const float *, const float *, float *, ConvShape): block: [0,0,0], "
       "thread: [3,0,0] Assertion `s.kernelHeight > 99` failed.\n",
       "kernels/mine.cu:11: assertion failed: s.kernelHeight > 99"},
      {cuda("device-side assert triggered"), "", "an assertion in the kernel failed"},
      {cuda("something new"), "", "the kernel failed on the GPU: something new"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    const std::string message = explainKernelFault(c.error, c.output, file);
    expectStudentTerms(message, file);
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
  // A message ConvScope wrote about the file keeps its words.
  EXPECT_EQ(explainKernelFault("mine.cu: CONVSCOPE_MAX_KERNEL is 3: a 5x5 kernel is declined", "", file),
            "mine.cu: CONVSCOPE_MAX_KERNEL is 3: a 5x5 kernel is declined");
}

TEST(KernelFaults, AnAssertionLineIsFoundInTheOutput) {
  const KernelAssertion a = findKernelAssertion(
      "x = 1\n/home/s/k.cu:42: void convscope_conv(const float *, const float *, float *, ConvShape): block: "
      "[1,0,0], thread: [0,2,0] Assertion `index < n` failed.\nmore\n");
  EXPECT_EQ(a.file, "/home/s/k.cu");
  EXPECT_EQ(a.line, 42);
  EXPECT_EQ(a.condition, "index < n");
  EXPECT_EQ(findKernelAssertion("no assertion here\n").line, 0);
}

TEST(KernelCheckJson, ACompileErrorAndANoGpuRunAreWrittenToo) {
  SKIP_WITHOUT_NVRTC();
  const std::filesystem::path out = std::filesystem::temp_directory_path() / "convscope-test-check.json";
  const std::filesystem::path broken = kKernels / "syntax_error.cu";
  const ChildOutcome failed =
      runChildProcess({CONVSCOPE_CLI_PATH, "kernel", "check", broken.string(), "--json", out.string()}, 120);
  EXPECT_EQ(failed.exitCode, 1) << failed.output;
  nlohmann::json j = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(j["schema"], "convscope-kernel-check/1");
  EXPECT_EQ(j["status"], "compile-error");
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["errors"][0]["file"], broken.string());
  EXPECT_EQ(j["errors"][0]["line"], 11);
  std::filesystem::remove(out);
  if (gpuInfo().usable) return;  // the check itself: tests/gpu/test_user_kernels_gpu.cpp
  const ChildOutcome compiled = runChildProcess(
      {CONVSCOPE_CLI_PATH, "kernel", "check", (kTemplates / "naive_conv.cu").string(), "--json", out.string()}, 120);
  EXPECT_EQ(compiled.exitCode, 0) << compiled.output;
  j = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(j["status"], "not-run");
  EXPECT_NE(j["failure"].get<std::string>().find("cannot run the kernel here"), std::string::npos);
  std::filesystem::remove(out);
}

// Without a GPU, bench --kernel gives kernel time's verdict at once (it used to time the CPU
// variant for most of a minute first, then to exit 1 where kernel check and time exit 0): a kernel
// that compiles is "compiled; not timed", exit 0, one that does not is its errors, exit 1.
TEST(BenchKernelCommand, WithoutAGpuItGivesKernelTimesVerdictAtOnce) {
  SKIP_WITHOUT_NVRTC();
  if (gpuInfo().usable) GTEST_SKIP() << "a GPU is here: the kernel would be timed";
  const std::string file = (kTemplates / "naive_conv.cu").string();
  const auto started = std::chrono::steady_clock::now();
  const ChildOutcome r = runChildProcess({CONVSCOPE_CLI_PATH, "bench", "--kernel", file}, 120);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_LT(seconds, 60.0) << r.output;
  EXPECT_NE(r.output.find(file + ": compiled; not timed: cannot run the kernel here"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("bench: "), std::string::npos) << "no variant ran: " << r.output;
  const ChildOutcome time = runChildProcess({CONVSCOPE_CLI_PATH, "kernel", "time", file, "--no-history"}, 120);
  EXPECT_EQ(time.exitCode, r.exitCode) << time.output;
  EXPECT_NE(time.output.find(file + ": compiled; not timed: cannot run the kernel here"), std::string::npos)
      << time.output;

  const std::string broken = (kKernels / "syntax_error.cu").string();
  const ChildOutcome failed = runChildProcess({CONVSCOPE_CLI_PATH, "bench", "--kernel", file, "--kernel", broken}, 120);
  EXPECT_EQ(failed.exitCode, 1) << failed.output;
  EXPECT_NE(failed.output.find(broken + ": compile FAILED"), std::string::npos) << failed.output;
  EXPECT_NE(failed.output.find(broken + ":"), failed.output.rfind(broken + ":")) << "the error names its line too";
}

TEST(KernelTimeCommand, ACompileErrorAndANoGpuRunAreWrittenAsTimingResults) {
  SKIP_WITHOUT_NVRTC();
  const std::filesystem::path out = std::filesystem::temp_directory_path() / "convscope-test-time.json";
  const std::filesystem::path broken = kKernels / "syntax_error.cu";
  const ChildOutcome failed =
      runChildProcess({CONVSCOPE_CLI_PATH, "kernel", "time", broken.string(), "--json", out.string()}, 120);
  EXPECT_EQ(failed.exitCode, 1) << failed.output;
  nlohmann::json j = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(j["task"], "timing");
  EXPECT_EQ(j["status"], "compile-error");
  EXPECT_NE(j["failure"].get<std::string>().find(broken.string()), std::string::npos) << j.dump();
  std::filesystem::remove(out);
  const ChildOutcome badSeed = runChildProcess(
      {CONVSCOPE_CLI_PATH, "kernel", "time", (kTemplates / "naive_conv.cu").string(), "--seed", "12x"}, 120);
  EXPECT_NE(badSeed.exitCode, 0);
  EXPECT_NE(badSeed.output.find("--seed: '12x' is not a positive whole number"), std::string::npos) << badSeed.output;
  if (gpuInfo().usable) return;  // the timing itself: tests/gpu/test_user_kernels_gpu.cpp
  const ChildOutcome compiled = runChildProcess(
      {CONVSCOPE_CLI_PATH, "kernel", "time", (kTemplates / "naive_conv.cu").string(), "--json", out.string()}, 120);
  EXPECT_EQ(compiled.exitCode, 0) << compiled.output;
  j = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(j["status"], "not-run");
  EXPECT_NE(j["failure"].get<std::string>().find("cannot run the kernel here"), std::string::npos);
  std::filesystem::remove(out);
}

// ---- the parent's side of a job, with a stand-in for the child (no GPU): what it reads back

// A shell script in the child's place (`PROGRAM kernel run-isolated FILE --compiled DIR --secrets
// SEEDS --json OUT --kernel-output KOUT --outputs FOLDER ...`): it prints `lines` lines as the kernel would, copies
// the files of `outputFiles` (a folder) into FOLDER as the kernel's raw outputs, writes `result` as
// its JSON, says `stderrLine` and exits with `exitCode`.
std::filesystem::path fakeChild(const std::string& name, const nlohmann::json& result, int lines,
                                const std::string& stderrLine, int exitCode,
                                const std::filesystem::path& outputFiles = {}, int sleepSeconds = 0) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "convscope-test-fake-child";
  std::filesystem::create_directories(dir);
  const std::filesystem::path json = dir / (name + ".json"), script = dir / (name + ".sh");
  std::ofstream(json) << result.dump();
  std::ofstream out(script);
  out << "#!/bin/sh\nseq " << lines << " | sed 's/^/output /' > \"${11}\"\n";
  if (!outputFiles.empty()) out << "cp '" << outputFiles.string() << "'/* \"${13}\"/\n";
  out << "cp '" << json.string() << "' \"$9\"\necho '" << stderrLine << "' >&2\n";
  if (sleepSeconds > 0) out << "sleep " << sleepSeconds << "\n";
  out << "exit " << exitCode << "\n";
  out.close();
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  return script;
}

// The raw outputs a correct kernel writes for the check of `job` (CPU reference), in a folder of
// their own, and the shapes.
// Output element `flat` of shape `index` as the CPU reference computes it, for `job`'s seed.
float correctAt(const UserKernelJob& job, size_t index, size_t flat) {
  const std::vector<ConvProblem> shapes = checkShapesOf(job, job.seed);
  const auto conv = createConvBackend("cpu-im2col-gemm");  // another implementation than the files'
  float value = 0.0f;
  runConvOnCheckShapes(*conv, shapes, job.seed, {}, [&](size_t i, const std::vector<float>& output) {
    if (i == index) value = output.at(flat);
  });
  return value;
}

std::vector<ConvProblem> correctOutputs(const UserKernelJob& job, const std::filesystem::path& folder) {
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  const std::vector<ConvProblem> shapes = checkShapesOf(job, job.seed);
  const auto conv = createConvBackend("cpu-reference");
  runConvOnCheckShapes(*conv, shapes, job.seed, {}, [&](size_t index, const std::vector<float>& output) {
    writeCheckOutput(checkOutputFile(folder, index), shapes[index], output);
  });
  return shapes;
}

UserKernelJob fakeJob(const std::filesystem::path& program) {
  UserKernelJob job;
  job.program = program;
  job.file = "kernels/mine.cu";
  job.kernel = testing::stubSubmittedKernel("kernels/mine.cu");
  job.seed = 42;
  job.network = false;
  job.timeLimitSeconds = 30;
  return job;
}

TEST(KernelJob, AFaultIsSaidInTheStudentsTermsEverywhereAndTheOutputIsCapped) {
  const std::string raw =
      "gpu/cuda_device.cu:119: cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream) failed: an "
      "illegal memory access was encountered";
  const nlohmann::json result = {{"file", "kernels/mine.cu"}, {"stage", "check"}, {"error", raw}};
  const UserKernelJob job = fakeJob(fakeChild("fault", result, 1000, "error: " + raw, 1));
  const UserKernelJobResult r = runUserKernelJob(job, {});
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.processDied);
  expectStudentTerms(r.failure, "kernels/mine.cu");
  EXPECT_NE(r.failure.find("read or wrote outside its buffers"), std::string::npos) << r.failure;
  // The child's own words, shown by the window and the CLI, are translated too.
  EXPECT_EQ(r.childOutput.find("gpu/"), std::string::npos) << r.childOutput;
  EXPECT_EQ(r.childOutput.find("cudaMemcpy"), std::string::npos) << r.childOutput;
  EXPECT_EQ(r.report.find("gpu/"), std::string::npos) << r.report;
  // 1000 lines printed: 300 kept, all counted, said in the report.
  EXPECT_EQ(r.kernelOutput.totalLines, 1000);
  ASSERT_EQ(r.kernelOutput.lines.size(), 300u);
  EXPECT_EQ(r.kernelOutput.lines[299], "output 300");
  EXPECT_NE(r.report.find("The kernel printed 1000 line(s), the first 300 shown"), std::string::npos) << r.report;
  const nlohmann::json j = userKernelResultToJson(job, r);
  EXPECT_EQ(j["status"], "failed");
  EXPECT_EQ(j["kernelOutput"]["totalLines"], 1000);
  EXPECT_EQ(j["kernelOutput"]["lines"].size(), 300u);
  EXPECT_EQ(j["failure"], r.failure);
}

// After a fault the first call to fail may be cuBLAS's, whose words name no fault; the child adds
// what broke the GPU context, and that makes it a fault (grade: "faulted", not "wrong").
TEST(KernelJob, AFaultFirstNoticedByALibraryIsStillAFault) {
  const std::string raw = "gpu/layer_kernels.cu:88: cublasSgemm_v2(handle, ...) failed: an internal operation failed";
  nlohmann::json result = {{"file", "kernels/mine.cu"}, {"stage", "network"}, {"error", raw}};
  const UserKernelJob plain = fakeJob(fakeChild("library-error", result, 0, "error: " + raw, 1));
  EXPECT_FALSE(runUserKernelJob(plain, {}).processDied) << "no sign of a fault: a library's own failure";
  result["deviceFault"] = "an illegal memory access was encountered";
  const UserKernelJob faulted = fakeJob(fakeChild("library-after-fault", result, 0, "error: " + raw, 1));
  const UserKernelJobResult r = runUserKernelJob(faulted, {});
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.processDied);
  expectStudentTerms(r.failure, "kernels/mine.cu");
  EXPECT_NE(r.failure.find("illegal memory access"), std::string::npos) << r.failure;
}

// A kernel that prints and then runs past the time limit: the message says the printing is the
// likelier cause, with the count of lines the check kept.
TEST(KernelJob, ATimeLimitAfterPrintingBlamesThePrintf) {
  const nlohmann::json result = {{"file", "kernels/mine.cu"}, {"stage", "check"}, {"reached", 0}};
  UserKernelJob job = fakeJob(fakeChild("prints-then-hangs", result, 2000, "running", 0, {}, 30));
  job.timeLimitSeconds = 2;
  const UserKernelJobResult r = runUserKernelJob(job, {});
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.failure.find("time limit"), std::string::npos) << r.failure;
  EXPECT_NE(r.failure.find("it printed 2000 line(s) in the check"), std::string::npos) << r.failure;
  expectStudentTerms(r.failure, "kernels/mine.cu");
  // The same time limit without a printed line says nothing of printf.
  UserKernelJob quiet = fakeJob(fakeChild("hangs", result, 0, "running", 0, {}, 30));
  quiet.timeLimitSeconds = 2;
  const UserKernelJobResult q = runUserKernelJob(quiet, {});
  EXPECT_NE(q.failure.find("time limit"), std::string::npos) << q.failure;
  EXPECT_EQ(q.failure.find("printf"), std::string::npos) << q.failure;
}

TEST(KernelJob, TheParentComparesTheChildsRawOutputsAndBuildsTheFailingMap) {
  UserKernelJob job = fakeJob({});
  job.shapes = 2;
  const std::filesystem::path files = std::filesystem::temp_directory_path() / "convscope-test-fake-outputs-rows";
  const std::vector<ConvProblem> shapes = correctOutputs(job, files);
  // Rows 2-3 of map (image 0, channel 0) of the first shape never written: the poison stays.
  const ConvProblem& p = shapes[0];
  ASSERT_GE(p.outHeight(), 5);
  std::vector<float> output = readCheckOutput(checkOutputFile(files, 0), p);
  for (int h = 2; h <= 3; ++h)
    for (int w = 0; w < p.outWidth(); ++w) output[static_cast<size_t>(h) * p.outWidth() + w] = unwrittenPoison();
  writeCheckOutput(checkOutputFile(files, 0), p, output);
  // The child sends no expected value, no verdict and no map: only that it ran.
  const nlohmann::json result = {
      {"file", "kernels/mine.cu"}, {"stage", "check"}, {"ran", true}, {"declined", {nullptr, nullptr}}};
  job.program = fakeChild("wrong", result, 0, "running the kernel on 2 random shapes (seed 42)", 0, files);
  const UserKernelJobResult r = runUserKernelJob(job, {});
  EXPECT_FALSE(r.passed);
  EXPECT_FALSE(r.processDied);
  ASSERT_TRUE(r.failureMap) << r.report;
  EXPECT_EQ(r.failureMap->badRows(), "2-3");
  EXPECT_EQ(r.failureMap->neverWritten, 2 * p.outWidth());
  EXPECT_EQ(r.failureMap->shapeBad, 2 * p.outWidth());
  EXPECT_EQ(std::tie(r.firstWrongN, r.firstWrongM, r.firstWrongH, r.firstWrongW), std::make_tuple(0, 0, 2, 0));
  EXPECT_TRUE(std::isnan(r.got));
  // The reference value there is the correct kernel's, within FP32 rounding.
  EXPECT_NEAR(r.expected, correctAt(job, 0, 2 * p.outWidth()), 1e-4 * (1.0 + std::fabs(r.expected)));
  EXPECT_NE(r.report.find("where: rows 2-3; all columns"), std::string::npos) << r.report;
  EXPECT_NE(r.report.find("--seed 42"), std::string::npos) << r.report;
  EXPECT_EQ(r.failure.rfind("kernels/mine.cu: wrong results: ", 0), 0u) << r.failure;
  EXPECT_EQ(r.kernelOutput.totalLines, 0);
  // The two random shapes and the model's two layers (checkShapes): the first failed, the rest not run.
  ASSERT_EQ(r.shapes.size(), checkShapesOf(job, job.seed).size());
  ASSERT_EQ(r.shapes.size(), 4u);
  EXPECT_EQ(r.shapes[0].outcome, "failed");
  for (size_t s = 1; s < r.shapes.size(); ++s) EXPECT_EQ(r.shapes[s].outcome, "not run");
  const nlohmann::json j = userKernelResultToJson(job, r);
  EXPECT_EQ(j["schema"], "convscope-kernel-check/1");
  EXPECT_EQ(j["seed"], 42);
  EXPECT_EQ(j["failingMap"]["counts"]["neverWritten"], 2 * p.outWidth());
  EXPECT_EQ(j["failingMap"]["badRows"], "2-3");
  EXPECT_EQ(j["shapes"][0]["outcome"], "failed");
  EXPECT_TRUE(j["network"].is_null());
  std::filesystem::remove_all(files);
}

TEST(KernelJob, CorrectRawOutputsPassAndAClaimOfPassingIsNotBelieved) {
  UserKernelJob job = fakeJob({});
  job.shapes = 3;
  const std::filesystem::path files = std::filesystem::temp_directory_path() / "convscope-test-fake-outputs-right";
  correctOutputs(job, files);
  const nlohmann::json ran = {{"stage", "check"}, {"ran", true}, {"declined", {nullptr, nullptr, nullptr}}};
  job.program = fakeChild("right", ran, 0, "", 0, files);
  const UserKernelJobResult right = runUserKernelJob(job, {});
  EXPECT_TRUE(right.passed) << right.report;
  EXPECT_EQ(right.shapesChecked, 3 + 2);  // and the model's two layers
  // A child that says it passed but wrote no outputs: the parent believes only the files.
  const nlohmann::json claims = {{"stage", "check"}, {"ran", true}, {"passed", true}, {"summary", "passed"}};
  job.program = fakeChild("claims", claims, 0, "", 0);
  const UserKernelJobResult claimed = runUserKernelJob(job, {});
  EXPECT_FALSE(claimed.passed);
  EXPECT_NE(claimed.failure.find("shape-0.f32: the kernel's output of"), std::string::npos) << claimed.failure;
  std::filesystem::remove_all(files);
}

TEST(KernelJob, ATruncatedOutputFileIsRefusedByName) {
  UserKernelJob job = fakeJob({});
  job.shapes = 2;
  const std::filesystem::path files = std::filesystem::temp_directory_path() / "convscope-test-fake-outputs-short";
  const std::vector<ConvProblem> shapes = correctOutputs(job, files);
  std::filesystem::resize_file(checkOutputFile(files, 1), 4);
  const nlohmann::json ran = {{"stage", "check"}, {"ran", true}, {"declined", {nullptr, nullptr}}};
  job.program = fakeChild("short", ran, 0, "", 0, files);
  const UserKernelJobResult r = runUserKernelJob(job, {});
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.failure.find("shape-1.f32: holds 4 bytes, but the output of " + shapes[1].describe()), std::string::npos)
      << r.failure;
  EXPECT_NE(r.report.find("shape-1.f32: holds 4 bytes"), std::string::npos) << r.report;
  std::filesystem::remove_all(files);
}

TEST(KernelJob, AWrongShapeBeforeAFaultIsTheMistakeReportedAsWhenTheCheckStoppedThere) {
  UserKernelJob job = fakeJob({});
  job.shapes = 3;
  const std::filesystem::path files = std::filesystem::temp_directory_path() / "convscope-test-fake-outputs-fault";
  const std::vector<ConvProblem> shapes = correctOutputs(job, files);
  std::filesystem::remove(checkOutputFile(files, 2));  // the process died in shape 2
  const std::string raw = "gpu/cuda_device.cu:119: cudaMemcpy failed: an illegal memory access was encountered";
  const nlohmann::json died = {
      {"stage", "check"}, {"declined", {nullptr, nullptr, nullptr}}, {"reached", 2}, {"error", raw}};
  // Shapes 0 and 1 right: the fault is the message.
  job.program = fakeChild("fault-after-right", died, 0, "error: " + raw, 1, files);
  const UserKernelJobResult fault = runUserKernelJob(job, {});
  EXPECT_FALSE(fault.passed);
  EXPECT_TRUE(fault.processDied);
  EXPECT_FALSE(fault.firstWrong);
  EXPECT_NE(fault.failure.find("read or wrote outside its buffers"), std::string::npos) << fault.failure;
  // Shape 1 wrong: that is the mistake, as when the shapes ran in order and stopped there.
  std::vector<float> output = readCheckOutput(checkOutputFile(files, 1), shapes[1]);
  output[0] += 1.0f;
  writeCheckOutput(checkOutputFile(files, 1), shapes[1], output);
  job.program = fakeChild("fault-after-wrong", died, 0, "error: " + raw, 1, files);
  const UserKernelJobResult wrong = runUserKernelJob(job, {});
  EXPECT_FALSE(wrong.passed);
  EXPECT_FALSE(wrong.processDied);
  ASSERT_TRUE(wrong.firstWrong) << wrong.report;
  EXPECT_EQ(std::tie(wrong.firstWrongN, wrong.firstWrongM, wrong.firstWrongH, wrong.firstWrongW),
            std::make_tuple(0, 0, 0, 0));
  EXPECT_EQ(wrong.failure.rfind("kernels/mine.cu: wrong results: ", 0), 0u) << wrong.failure;
  ASSERT_EQ(wrong.shapes.size(), 3u + 2);  // and the model's two layers
  EXPECT_EQ(wrong.shapes[0].outcome, "passed");
  EXPECT_EQ(wrong.shapes[1].outcome, "failed");
  for (size_t s = 2; s < wrong.shapes.size(); ++s) EXPECT_EQ(wrong.shapes[s].outcome, "not run");
  std::filesystem::remove_all(files);
}

// The child's timing answer for one layer: `repetitions` repetitions of `p` whose sampled values
// are right (from the checker's reference) until `rightUntil`, then the poison (never written).
nlohmann::json timedLayer(const ConvProblem& p, int layer, int batch, const UserKernelJob& job, double seconds,
                          int rightUntil, uint64_t seedOffset = 0) {
  std::vector<TimedRepetition> repetitions;
  for (int r = 0; r < job.repeats; ++r) {
    TimedRepetition t;
    t.repetition = r;
    t.inputSeed = repetitionInputSeed(job.seed, layer, batch, r) + seedOffset;
    t.seconds = seconds;
    t.positions = sampledOutputPositions(job.timingSampleSeed, t.inputSeed, p.outputElements(), job.timingSamples);
    for (const int64_t position : t.positions)
      t.values.push_back(r < rightUntil ? static_cast<float>(sampledReference(p, t.inputSeed, position).expected)
                                        : unwrittenPoison());
    // The child's whole-output check: right, or (from rightUntil on) nothing written at all.
    t.whole = r < rightUntil
                  ? WholeOutputCheck{true, kUserKernelRelativeTolerance, 0, -1, 0.0f}
                  : WholeOutputCheck{true, kUserKernelRelativeTolerance, p.outputElements(), 0, unwrittenPoison()};
    repetitions.push_back(t);
  }
  return {{"batch", batch},
          {"layer", layer},
          {"node", "conv" + std::to_string(layer)},
          {"problem", convProblemToJson(p)},
          {"repetitions", timedRepetitionsToJson(repetitions)}};
}

TEST(KernelJob, TheParentJudgesEveryTimedLayerAndNamesTheGpu) {
  UserKernelJob job = fakeJob({});
  job.task = UserKernelJob::Task::Timing;
  job.seed = 7;
  job.timingSampleSeed = 99;
  job.timingSamples = 8;
  job.repeats = 3;
  job.batches = {100};
  ConvProblem p;  // the course's first layer at batch 100
  p.batch = 100;
  p.inHeight = p.inWidth = 28;
  p.outChannels = 6;
  p.kernelHeight = p.kernelWidth = 5;
  ConvProblem q = p;  // the second
  q.inChannels = 6;
  q.inHeight = q.inWidth = 12;
  q.outChannels = 16;
  // The device as the timing child reports it (deviceFiguresToJson): the parent's peaks come from
  // these figures, not from the GPU's name.
  const nlohmann::json device = {{"name", "NVIDIA H100 80GB HBM3"},
                                 {"uuid", "GPU-0"},
                                 {"compute_capability", "9.0"},
                                 {"driver", "13.0"},
                                 {"runtime", "13.0"},
                                 {"sm_count", 132},
                                 {"sm_clock_mhz", 1980},
                                 {"memory_clock_mhz", 2619},
                                 {"memory_bus_width_bits", 5120}};
  const DevicePeaks peaks = *devicePeaksFromJson(device);
  const double floorP = physicalFloorSeconds(p, peaks), floorQ = physicalFloorSeconds(q, peaks);
  const auto timing = [&](const nlohmann::json& layers) {
    return nlohmann::json{{"stage", "done"}, {"device", device}, {"timing", {{"layers", layers}, {"samples", 8}}}};
  };

  // Layer 0 right and slower than the floor; layer 1 right only on its first repetition (a cache).
  const nlohmann::json declined = {
      {"batch", 100}, {"layer", 2}, {"node", "conv2"}, {"problem", convProblemToJson(p)}, {"declined", "strided"}};
  job.program = fakeChild(
      "timing-cached",
      timing({timedLayer(p, 0, 100, job, 10 * floorP, 3), timedLayer(q, 1, 100, job, 10 * floorQ, 1), declined}), 0, "",
      0);
  UserKernelJobResult r = runUserKernelJob(job, {});
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.timings.size(), 2u) << r.report;
  EXPECT_TRUE(r.timings[0].timing.ranked()) << r.timings[0].timing.rejected;
  EXPECT_DOUBLE_EQ(r.timings[0].timing.time.median, 10 * floorP);
  EXPECT_EQ(r.timings[1].timing.rejected.rfind("kernels/mine.cu: its output at repetition 2 of " + q.describe(), 0), 0u)
      << r.timings[1].timing.rejected;
  EXPECT_NE(r.timings[1].timing.rejected.find("never written"), std::string::npos);
  EXPECT_EQ(r.failure, r.timings[1].timing.rejected);
  ASSERT_EQ(r.fallbacks.size(), 1u);
  EXPECT_NE(r.fallbacks[0].find("strided"), std::string::npos);
  EXPECT_EQ(r.timingDevice.name, "NVIDIA H100 80GB HBM3");
  EXPECT_NE(
      r.report.find(
          "on NVIDIA H100 80GB HBM3 (compute 9.0, driver 13.0, runtime 13.0, clocks 1980 MHz SM, 2619 MHz memory)"),
      std::string::npos)
      << r.report;
  nlohmann::json j = userKernelResultToJson(job, r);
  EXPECT_EQ(j["task"], "timing");
  EXPECT_EQ(j["timing"]["device"]["driver"], "13.0");
  EXPECT_EQ(j["timing"]["device"]["sm_clock_mhz"], 1980);
  EXPECT_EQ(j["timing"]["device"]["memory_clock_mhz"], 2619);
  EXPECT_TRUE(j["timing"]["layers"][0]["rejected"].is_null());
  EXPECT_EQ(j["timing"]["layers"][1]["rejected"], r.timings[1].timing.rejected);
  EXPECT_EQ(j["timing"]["layers"][1]["ranked"], false);

  // Both right, the first faster than the floor: flagged, not ranked, and the timing passes.
  job.program = fakeChild(
      "timing-floor", timing({timedLayer(p, 0, 100, job, 0.5 * floorP, 3), timedLayer(q, 1, 100, job, 2 * floorQ, 3)}),
      0, "", 0);
  r = runUserKernelJob(job, {});
  EXPECT_TRUE(r.passed) << r.report;
  ASSERT_EQ(r.timings.size(), 2u);
  EXPECT_TRUE(r.timings[0].timing.belowPhysicalFloor);
  EXPECT_FALSE(r.timings[0].timing.ranked());
  EXPECT_TRUE(r.timings[1].timing.ranked());
  EXPECT_NE(r.report.find("flagged for review"), std::string::npos) << r.report;
  j = userKernelResultToJson(job, r);
  EXPECT_EQ(j["timing"]["layers"][0]["flag"], "below the physical floor: flagged for review");
  EXPECT_TRUE(j["timing"]["layers"][1]["flag"].is_null());

  // Right values, but for inputs other than those asked for: not accepted.
  job.program = fakeChild("timing-other-inputs",
                          timing(nlohmann::json::array({timedLayer(p, 0, 100, job, 10 * floorP, 3, 1)})), 0, "", 0);
  r = runUserKernelJob(job, {});
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.timings.size(), 1u) << r.failure << r.report;
  EXPECT_NE(r.timings[0].timing.rejected.find("did not come back for the inputs asked for"), std::string::npos)
      << r.timings[0].timing.rejected;
}

}  // namespace
}  // namespace convscope
