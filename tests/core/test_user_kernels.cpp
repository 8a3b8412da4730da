// Students' kernels without a GPU (what CI runs): the contract's templates compile with NVRTC, a
// syntax error comes back with its file and line, a file that breaks the contract gets a message
// that says what the contract asks; the launch macros are read and refused when malformed; the
// check finds an off-by-one halo (in a CPU twin of tests/data/kernels/off_by_one_halo.cu) at the
// coordinates it must; the child process is stopped at its time limit; user rows join the table.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <fstream>
#include <limits>
#include <regex>
#include <tuple>

#include "app/core/conv/conv_check.h"
#include "app/core/conv/cpu_backends.h"
#include "app/core/conv/kernel_includes.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/conv_pixel.h"
#include "app/core/engine/user_kernel_job.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/child_process.h"
#include "gpu/user_kernel.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

const std::filesystem::path kTemplates = std::filesystem::path(CONVSCOPE_SOURCE_DIR) / "examples/kernels";
const std::filesystem::path kKernels = std::filesystem::path(CONVSCOPE_TEST_DATA_DIR) / "kernels";

#define SKIP_WITHOUT_NVRTC() \
  if (const std::string reason = gpu::userKernelCompilerUnavailableReason(); !reason.empty()) GPU_TEST_SKIP() << reason

TEST(UserKernelCompile, TheTemplatesCompile) {
  SKIP_WITHOUT_NVRTC();
  for (const char* name : {"naive_conv.cu", "tiled_conv.cu"}) {
    SCOPED_TRACE(name);
    const gpu::CompiledUserKernel kernel = gpu::compileUserKernel(readUserKernelSource(kTemplates / name));
    EXPECT_TRUE(kernel.ok()) << kernel.errorText() << kernel.log;
    EXPECT_FALSE(kernel.image.empty());
    EXPECT_EQ(kernel.loweredName, "convscope_conv");  // extern "C": the name as written
    EXPECT_EQ(kernel.source.launch.blockX, 16);
    EXPECT_EQ(kernel.source.launch.tileHeight, 16);
  }
}

// The window compiles through the core's interface (app/core/conv/user_kernel_compiler.h): in a
// program that links gpu/, that is gpu/'s compiler, with the same result as calling it directly.
TEST(UserKernelCompile, TheCoresCompilerIsTheOneGpuInstalled) {
  EXPECT_EQ(userKernelCompiler().unavailableReason(), gpu::userKernelCompilerUnavailableReason());
  for (const std::filesystem::path& file : {kTemplates / "naive_conv.cu", kKernels / "syntax_error.cu"}) {
    SCOPED_TRACE(file.string());
    const UserKernelSource source = readUserKernelSource(file);
    const CompiledUserKernel throughTheCore = userKernelCompiler().compile(source);
    const CompiledUserKernel direct = gpu::compileUserKernel(source);
    EXPECT_EQ(throughTheCore.errorText(), direct.errorText());
    EXPECT_EQ(throughTheCore.architecture, direct.architecture);
    EXPECT_EQ(throughTheCore.loweredName, direct.loweredName);
    EXPECT_EQ(throughTheCore.image.size(), direct.image.size());
  }
}

TEST(UserKernelCompile, ASyntaxErrorGivesItsFileAndLine) {
  SKIP_WITHOUT_NVRTC();
  const std::filesystem::path file = kKernels / "syntax_error.cu";
  const gpu::CompiledUserKernel kernel = gpu::compileUserKernel(readUserKernelSource(file));
  ASSERT_FALSE(kernel.ok());
  ASSERT_EQ(kernel.errors.size(), 1u) << kernel.errorText();
  EXPECT_EQ(kernel.errors[0].file, file.string());
  EXPECT_EQ(kernel.errors[0].line, 11);  // the statement after the missing ';'
  EXPECT_NE(kernel.errors[0].message.find("expected a \";\""), std::string::npos) << kernel.errors[0].message;
  EXPECT_EQ(kernel.errors[0].text().rfind(file.string() + ":11: error: ", 0), 0u) << kernel.errors[0].text();
}

TEST(UserKernelCompile, AWrongSignatureSaysWhatTheContractAsks) {
  SKIP_WITHOUT_NVRTC();
  const gpu::CompiledUserKernel kernel = gpu::compileUserKernel(readUserKernelSource(kKernels / "wrong_signature.cu"));
  ASSERT_EQ(kernel.errors.size(), 1u) << kernel.errorText();
  const std::string text = kernel.errors[0].text();
  EXPECT_NE(text.find("wrong_signature.cu"), std::string::npos) << text;
  EXPECT_NE(text.find("breaks the contract"), std::string::npos) << text;
  EXPECT_NE(text.find("convscope_conv has the wrong parameters"), std::string::npos) << text;
  EXPECT_NE(text.find(kUserKernelSignature), std::string::npos) << text;
}

TEST(UserKernelCompile, AMissingOrNonGlobalKernelSaysSo) {
  SKIP_WITHOUT_NVRTC();
  std::string text = readUserKernelSource(kTemplates / "naive_conv.cu").text;
  const std::string renamed = std::regex_replace(text, std::regex("convscope_conv\\("), "my_conv(");
  gpu::CompiledUserKernel kernel = gpu::compileUserKernel(parseUserKernelSource("renamed.cu", renamed));
  ASSERT_EQ(kernel.errors.size(), 1u) << kernel.errorText();
  EXPECT_NE(kernel.errors[0].message.find("no kernel named convscope_conv"), std::string::npos) << kernel.errorText();

  const std::string device = std::regex_replace(text, std::regex("extern \"C\" __global__"), "__device__");
  kernel = gpu::compileUserKernel(parseUserKernelSource("device.cu", device));
  ASSERT_EQ(kernel.errors.size(), 1u) << kernel.errorText();
  EXPECT_NE(kernel.errors[0].message.find("not a __global__ kernel"), std::string::npos) << kernel.errorText();
}

// The template compiled as `kernel check` compiles it, to machine code for sm_90 (the assembler's
// refusals appear with or without a GPU), with `from` replaced by `to`.
gpu::CompiledUserKernel compiledTiledTemplateWith(const std::string& name,
                                                  const std::vector<std::pair<std::string, std::string>>& changes) {
  std::string text = readUserKernelSource(kTemplates / "tiled_conv.cu").text;
  for (const auto& [from, to] : changes) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  gpu::UserKernelBuildOptions options;
  options.architecture = "sm_90";
  return gpu::compileUserKernel(parseUserKernelSource(name, text), options);
}

// The line (1-based) of the template where `text` first appears.
int tiledTemplateLineOf(const std::string& text) {
  const std::string source = readUserKernelSource(kTemplates / "tiled_conv.cu").text;
  return 1 + static_cast<int>(std::count(source.begin(), source.begin() + source.find(text), '\n'));
}

const std::string kTiledDeclaration = "extern \"C\" __global__ void convscope_conv(";
const std::string kTiledPatch = "__shared__ float patch[PATCH_HEIGHT][PATCH_WIDTH];";

// A contract's refusal comes alone: a wrong parameter type makes every use of it in the body an
// error, and those are not the student's mistakes to read first.
TEST(UserKernelCompile, AWrongParameterIsRefusedAloneOnTheDeclarationsLine) {
  SKIP_WITHOUT_NVRTC();
  const gpu::CompiledUserKernel kernel = compiledTiledTemplateWith("int_shape.cu", {{"ConvShape s)", "int s)"}});
  ASSERT_EQ(kernel.errors.size(), 1u) << kernel.errorText();
  EXPECT_EQ(kernel.errors[0].line, tiledTemplateLineOf(kTiledDeclaration));
  EXPECT_NE(kernel.errors[0].message.find("convscope_conv has the wrong parameters"), std::string::npos);
  EXPECT_EQ(kernel.log.find("convscope-contract"), std::string::npos) << kernel.log;
  EXPECT_EQ(kernel.log.find("must have class type"), std::string::npos) << kernel.log;

  // A typing mistake in the parameter list itself stays beside the refusal, after it.
  const gpu::CompiledUserKernel typo =
      compiledTiledTemplateWith("typo.cu", {{"const float* weights", "cosnt float* weights"}});
  ASSERT_GE(typo.errors.size(), 2u) << typo.errorText();
  EXPECT_NE(typo.errors[0].message.find("breaks the contract"), std::string::npos) << typo.errorText();
  EXPECT_EQ(typo.errors[1].line, tiledTemplateLineOf(kTiledDeclaration)) << typo.errorText();
  EXPECT_NE(typo.errorText().find("cosnt"), std::string::npos) << typo.errorText();
}

TEST(UserKernelCompile, AKernelWithoutExternCIsRefusedOnItsLine) {
  SKIP_WITHOUT_NVRTC();
  const gpu::CompiledUserKernel kernel =
      compiledTiledTemplateWith("mangled.cu", {{kTiledDeclaration, "__global__ void convscope_conv("}});
  ASSERT_EQ(kernel.errors.size(), 1u) << kernel.errorText();
  EXPECT_EQ(kernel.errors[0].line, tiledTemplateLineOf(kTiledDeclaration));
  EXPECT_NE(kernel.errors[0].message.find("breaks the contract"), std::string::npos) << kernel.errorText();
  EXPECT_NE(kernel.errors[0].message.find("not declared extern \"C\""), std::string::npos) << kernel.errorText();
  EXPECT_EQ(kernel.log.find("ptxas info"), std::string::npos) << kernel.log;
}

// Dynamic shared memory is read from the PTX: a macro that hides the words is refused too.
TEST(UserKernelCompile, DynamicSharedMemoryIsRefusedOnItsLineHoweverItIsSpelt) {
  SKIP_WITHOUT_NVRTC();
  const std::string dynamic = "extern __shared__ float patch[];";
  for (const auto& [name, declaration] : std::vector<std::pair<std::string, std::string>>{
           {"extern_shared.cu", dynamic}, {"macro_shared.cu", "DYNAMIC_ARRAY(patch);"}}) {
    SCOPED_TRACE(name);
    std::string text = readUserKernelSource(kTemplates / "tiled_conv.cu").text;
    text.replace(text.find(kTiledPatch), kTiledPatch.size(), declaration);
    text = std::regex_replace(text, std::regex(R"(patch\[([^\]]+)\]\[([^\]]+)\])"), "patch[($1) * PATCH_WIDTH + $2]");
    text = (name == "macro_shared.cu" ? "#define DYNAMIC_ARRAY(name) extern __shared__ float name[]\n"
                                      : "// the same words in a comment are no declaration: extern __shared__\n") +
           text;
    gpu::UserKernelBuildOptions options;
    options.architecture = "sm_90";
    const gpu::CompiledUserKernel kernel = gpu::compileUserKernel(parseUserKernelSource(name, text), options);
    ASSERT_EQ(kernel.errors.size(), 1u) << kernel.errorText() << kernel.log;
    EXPECT_NE(kernel.errors[0].message.find("dynamic shared memory"), std::string::npos) << kernel.errorText();
    // The line where the words are: the macro's definition (line 1) or the declaration (one line
    // was put in above the template's).
    EXPECT_EQ(kernel.errors[0].line, name == "macro_shared.cu" ? 1 : tiledTemplateLineOf(kTiledPatch) + 1);
  }
}

// The assembler refuses what NVRTC's front end accepts; `kernel check` compiles to machine code so
// that it says so too, in decimal, on the array's line, without the assembler's report.
TEST(UserKernelCompile, TooMuchSharedMemoryIsRefusedInTheStudentsTerms) {
  SKIP_WITHOUT_NVRTC();
  const gpu::CompiledUserKernel kernel = compiledTiledTemplateWith(
      "big_tile.cu", {{kTiledPatch, kTiledPatch + " __shared__ float spare[65536]; spare[threadIdx.x] = 1;"},
                      {"float sum = 0.0f;", "__syncthreads(); float sum = spare[threadIdx.y * 64];"}});
  ASSERT_EQ(kernel.errors.size(), 1u) << kernel.errorText();
  const std::string& m = kernel.errors[0].message;
  EXPECT_EQ(kernel.errors[0].line, tiledTemplateLineOf(kTiledPatch)) << m;
  // 22 x 22 floats of the patch and 65,536 of the spare array.
  EXPECT_NE(m.find(std::to_string((22 * 22 + 65536) * 4 / 1000) + ","), std::string::npos) << m;
  EXPECT_NE(m.find("49,152 bytes"), std::string::npos) << m;
  EXPECT_EQ(m.find("0x"), std::string::npos) << m;
  EXPECT_EQ(kernel.log.find("ptxas info"), std::string::npos) << kernel.log;
  EXPECT_EQ(kernel.log.find('\0'), std::string::npos);
}

// The template with `lines` put in after its first line (so the refusal's line number is known).
std::string templateWith(const std::string& lines) {
  const std::string text = readUserKernelSource(kTemplates / "naive_conv.cu").text;
  const size_t firstLineEnd = text.find('\n') + 1;
  return text.substr(0, firstLineEnd) + lines + text.substr(firstLineEnd);
}

// Every way of naming a file to the preprocessor is refused, on the line it starts on.
TEST(UserKernelIncludes, EveryWayOfNamingAnotherFileIsRefusedOnItsLine) {
  const std::vector<std::pair<std::string, std::string>> attempts = {
      {"#include </etc/hostname>\n", "#include </etc/hostname>"},
      {"#include \"/etc/hostname\"\n", "#include \"/etc/hostname\""},
      {"#include \"student_notes.cu\"\n", "#include \"student_notes.cu\""},  // NVRTC looks in the current folder
      {"#include <stdio.h>\n", "#include <stdio.h>"},
      {"  # /* hidden */ include <stdio.h>\n", "#include <stdio.h>"},
      {"%:include \"/etc/hostname\"\n", "#include \"/etc/hostname\""},     // a digraph for #
      {"?\?=include \"/etc/hostname\"\n", "trigraph ?\?="},                // a trigraph: refused itself
      {"#inc\\\nlude \"/etc/hostname\"\n", "#include \"/etc/hostname\""},  // a line continued
      {"#define SECRET \"/etc/hostname\"\n#include SECRET\n", "computed name"},
      {"#include_next <mma.h>\n", "#include_next <mma.h>"},
      {"#import \"/etc/hostname\"\n", "#import"},
      {"#embed \"/etc/hostname\"\n", "#embed"},
      {"#if __has_include(\"/etc/shadow\")\n#endif\n", "__has_include(\"/etc/shadow\")"},
      {"#include <cuda_fp16.h/../../../../etc/hostname>\n", "cuda_fp16.h/../"},
      {"/* a comment that ends */ #include \"/etc/hostname\"\n", "#include \"/etc/hostname\""},
      {"#incl\\u0075de \"/etc/hostname\"\n", "escapes"},
  };
  for (const auto& [lines, named] : attempts) {
    SCOPED_TRACE(lines);
    const UserKernelSource source = parseUserKernelSource("student/mine.cu", templateWith(lines));
    // The refused directive starts on line 2 (line 3 for the computed include after its #define).
    const int line = lines.rfind("#define", 0) == 0 ? 3 : 2;
    ASSERT_EQ(source.refusedIncludes.size(), 1u);
    EXPECT_EQ(source.refusedIncludes[0].file, "student/mine.cu");
    EXPECT_EQ(source.refusedIncludes[0].line, line);
    EXPECT_NE(source.refusedIncludes[0].message.find(named), std::string::npos) << source.refusedIncludes[0].message;
    if (named.find("trigraph") == std::string::npos) {  // a trigraph's refusal says what to write instead
      EXPECT_NE(source.refusedIncludes[0].message.find("<mma.h>"), std::string::npos);  // what is allowed
    }
    EXPECT_FALSE(source.ok());  // also among the problems
  }
}

TEST(UserKernelIncludes, TheToolkitsDeviceHeadersAndCommentsPass) {
  const std::string allowed =
      "#include <mma.h>\n"
      "#  include <cuda_fp16.h>  // half precision\n"
      "#include \"convscope_kernel.h\"\n"
      "// #include <stdio.h> would be refused, but this is a line comment\n"
      "#if __has_include(<cuda_bf16.h>)\n#endif\n"
      "__device__ const char* kNote = \"#include <stdio.h>\";  // not a directive: mid-line\n";
  const UserKernelSource source = parseUserKernelSource("mine.cu", templateWith(allowed));
  EXPECT_TRUE(source.refusedIncludes.empty()) << source.refusedIncludes[0].text();
  EXPECT_TRUE(source.ok());
}

// The compiler never sees a refused file: nothing of it comes back in any message.
TEST(UserKernelIncludes, ARefusedFileNeverReachesTheCompiler) {
  SKIP_WITHOUT_NVRTC();
  const testing::TempDir dir;
  const std::filesystem::path secret = dir.path() / "expected_values.txt";
  std::ofstream(secret) << "float kExpected = 31337.25f; // SECRET-MARKER\n";
  const gpu::CompiledUserKernel kernel =
      gpu::compileUserKernel(parseUserKernelSource("mine.cu", templateWith("#include \"" + secret.string() + "\"\n")));
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.log, "");  // NVRTC never ran
  EXPECT_EQ(kernel.errorText().find("SECRET-MARKER"), std::string::npos) << kernel.errorText();
  EXPECT_EQ(kernel.errorText().find("31337"), std::string::npos);
  EXPECT_NE(kernel.errorText().find("mine.cu:2: #include"), std::string::npos) << kernel.errorText();

  // Every allowed header compiles: the toolkit's headers (and their own includes) are found.
  std::string allowed;
  for (const std::string& header : allowedKernelHeaders()) allowed += "#include <" + header + ">\n";
  const gpu::CompiledUserKernel withHeaders =
      gpu::compileUserKernel(parseUserKernelSource("mine.cu", templateWith(allowed)));
  EXPECT_TRUE(withHeaders.ok()) << withHeaders.errorText() << withHeaders.log;
}

TEST(UserKernelSource, AFileLargerThanAKernelIsRefusedBeforeItIsRead) {
  const testing::TempDir dir;
  const std::filesystem::path big = dir.path() / "huge.cu";
  std::ofstream(big) << std::string(kMaxKernelFileBytes + 1, ' ');
  testing::expectError([&] { readUserKernelSource(big); }, {big.string(), "at most"});
  testing::expectError([&] { readUserKernelSource("/dev/zero"); }, {"/dev/zero", "not a regular file"});  // endless
}

TEST(UserKernelSource, ReadsTheLaunchMacrosAndRefusesMalformedOnes) {
  const UserKernelSource tiled = readUserKernelSource(kTemplates / "tiled_conv.cu");
  EXPECT_TRUE(tiled.ok());
  EXPECT_EQ(tiled.id, "user-tiled_conv");
  EXPECT_EQ(tiled.launch.maxKernel, 7);
  EXPECT_EQ(tiled.launch.maxStride, 1);

  const UserKernelSource bad = parseUserKernelSource("bad.cu",
                                                     "// a kernel\n"
                                                     "#define CONVSCOPE_BLOCK_X 64\n"
                                                     "#define CONVSCOPE_BLOCK_Y 32\n"
                                                     "#define CONVSCOPE_TILE_WIDTH (16 * 2)\n");
  ASSERT_EQ(bad.problems.size(), 3u);
  EXPECT_EQ(bad.problems[0].text(),
            "bad.cu:4: CONVSCOPE_TILE_WIDTH is '(16 * 2)'; it must be a whole number from 1 to 4096");
  EXPECT_NE(bad.problems[1].text().find("bad.cu: the launch geometry macro CONVSCOPE_TILE_HEIGHT is missing"),
            std::string::npos);
  EXPECT_EQ(bad.problems[2].line, 3);  // 64 x 32 = 2048 threads
  EXPECT_NE(bad.problems[2].message.find("1,024 threads"), std::string::npos);
}

TEST(UserKernelSource, GeometryCoversEveryOutputAndLimitsAreDeclined) {
  UserKernelLaunch launch;
  launch.blockX = 8;
  launch.blockY = 4;
  launch.tileWidth = 8;
  launch.tileHeight = 8;
  launch.maxKernel = 3;
  ConvProblem p;
  p.batch = 3;
  p.outChannels = 5;
  p.inHeight = 21;  // 17 x 19 outputs with a 5x5 kernel... declined below; 3x3: 19 x 21
  p.inWidth = 23;
  p.kernelHeight = p.kernelWidth = 3;
  const KernelLaunchGeometry g = launch.geometry(p);
  EXPECT_EQ(g.gridX, 3);  // ceil(21 / 8)
  EXPECT_EQ(g.gridY, 3);  // ceil(19 / 8)
  EXPECT_EQ(g.gridZ, 15);
  EXPECT_EQ(g.threadsPerBlock(), 32);
  EXPECT_TRUE(launch.unsupportedReason(p).empty());
  p.kernelHeight = p.kernelWidth = 5;
  EXPECT_NE(launch.unsupportedReason(p).find("CONVSCOPE_MAX_KERNEL"), std::string::npos);
}

// The CPU twin of tests/data/kernels/off_by_one_halo.cu: the reference convolution with the
// input's last column read as zero.
class OffByOneHaloConv final : public ConvBackend {
 public:
  void forward(const ConvProblem& p, const float* input, const float* weights, float* output) override {
    std::vector<float> cut(input, input + p.inputElements());
    for (int64_t row = 0; row < int64_t{p.batch} * p.inChannels * p.inHeight; ++row)
      cut[row * p.inWidth + p.inWidth - 1] = 0;
    reference_->forward(p, cut.data(), weights, output);
  }

 private:
  std::unique_ptr<ConvBackend> reference_ = createConvBackend("cpu-reference");
};

// Leaves the last output element alone: the poisoned NaN must fail.
class ForgetsTheLastElementConv final : public ConvBackend {
 public:
  void forward(const ConvProblem& p, const float* input, const float* weights, float* output) override {
    std::vector<float> all(static_cast<size_t>(p.outputElements()));
    reference_->forward(p, input, weights, all.data());
    std::copy(all.begin(), all.end() - 1, output);
  }

 private:
  std::unique_ptr<ConvBackend> reference_ = createConvBackend("cpu-reference");
};

TEST(ConvCheck, TheReferencePassesOnRandomShapesThatNoTileDivides) {
  const std::vector<ConvProblem> shapes = randomCheckShapes(20261124, 12);
  ASSERT_EQ(shapes.size(), 12u);
  bool strided = false, padded = false;
  for (const ConvProblem& p : shapes) {
    EXPECT_NE(p.inWidth % 2, 0) << p.describe();
    strided |= p.hasStride();
    padded |= p.hasPadding();
  }
  EXPECT_TRUE(strided);
  EXPECT_TRUE(padded);
  const auto conv = createConvBackend("cpu-im2col-gemm");
  const ConvCheckResult result = checkConvAgainstReference(*conv, shapes, 20261124);
  EXPECT_TRUE(result.passed()) << result.summary();
  EXPECT_EQ(result.checked.size(), 12u);
}

// The model's own layers (the course's 7x7, which no random shape reaches) join the check right
// after its first shape, at batch 2; a layer too large to check on the host in a moment is checked
// on a smaller odd-sized image with everything else its own.
TEST(ConvCheck, TheModelsOwnLayersJoinTheRandomShapes) {
  const std::vector<ConvProblem> course =
      modelConvProblems(*loadOnnxModel(std::filesystem::path(CONVSCOPE_SOURCE_DIR) / "data/models/course-high.onnx"));
  ASSERT_EQ(course.size(), 2u);
  const std::vector<ConvProblem> random = randomCheckShapes(77, 12);
  const std::vector<ConvProblem> shapes = checkShapes(77, 12, course);
  ASSERT_EQ(shapes.size(), 14u);
  EXPECT_EQ(shapes[0].describe(), random[0].describe());
  for (size_t i = 0; i < course.size(); ++i) {
    ConvProblem expected = course[i];
    expected.batch = 2;
    EXPECT_EQ(shapes[1 + i].describe(), expected.describe());
    EXPECT_EQ(shapes[1 + i].kernelHeight, 7);
  }
  for (size_t i = 1; i < random.size(); ++i) EXPECT_EQ(shapes[2 + i].describe(), random[i].describe());
  // The same layer twice is checked once.
  EXPECT_EQ(checkShapes(77, 12, {course[0], course[0]}).size(), 13u);

  ConvProblem large;  // a layer of an ImageNet network: 64 -> 64 channels, 3x3, 224x224
  large.inChannels = large.outChannels = 64;
  large.inHeight = large.inWidth = 224;
  large.kernelHeight = large.kernelWidth = 3;
  large.padTop = large.padLeft = large.padBottom = large.padRight = 1;
  large.strideHeight = large.strideWidth = 2;
  const ConvProblem checked = checkShapes(77, 1, {large}).at(1);
  EXPECT_LE(checked.outputElements() * checked.inChannels * 9, 40'000'000);
  EXPECT_LT(checked.inHeight, 224);
  EXPECT_EQ(checked.inHeight % 2, 1);
  EXPECT_EQ(checked.inChannels, 64);
  EXPECT_EQ(checked.outChannels, 64);
  EXPECT_EQ(checked.strideHeight, 2);
  EXPECT_EQ(checked.padLeft, 1);
  // And the reference computes them right (another implementation agrees on every element).
  const auto conv = createConvBackend("cpu-im2col-gemm");
  EXPECT_TRUE(checkConvAgainstReference(*conv, shapes, 77).passed());
}

TEST(ConvCheck, AnOffByOneHaloFailsAtTheFirstOutputWhoseWindowReachesTheLastColumn) {
  for (const uint64_t seed : {1ull, 7ull, 20261124ull}) {
    const std::vector<ConvProblem> shapes = randomCheckShapes(seed, 6);
    OffByOneHaloConv conv;
    const ConvCheckResult result = checkConvAgainstReference(conv, shapes, seed);
    ASSERT_TRUE(result.firstWrong) << result.summary();
    // The first shape (no padding, stride 1): the window of output column w covers input columns
    // w..w+K-1, so the last column is first reached at w = outWidth - 1, in row 0 of map 0.
    const ConvMismatch& m = *result.firstWrong;
    EXPECT_EQ(m.problem.describe(), shapes[0].describe());
    EXPECT_EQ(m.n, 0);
    EXPECT_EQ(m.m, 0);
    EXPECT_EQ(m.h, 0);
    EXPECT_EQ(m.w, shapes[0].outWidth() - 1);
    EXPECT_GT(std::fabs(m.got - m.expected), m.allowed);
    EXPECT_NE(m.text().find("[n=0][m=0][h=0][w=" + std::to_string(shapes[0].outWidth() - 1) + "]"), std::string::npos);
  }
}

TEST(ConvCheck, AnUnwrittenElementFailsAsNaN) {
  ForgetsTheLastElementConv conv;
  const std::vector<ConvProblem> shapes = randomCheckShapes(3, 2);
  const ConvCheckResult result = checkConvAgainstReference(conv, shapes, 3);
  ASSERT_TRUE(result.firstWrong);
  const ConvProblem& p = shapes[0];
  EXPECT_EQ(result.firstWrong->n, p.batch - 1);
  EXPECT_EQ(result.firstWrong->m, p.outChannels - 1);
  EXPECT_EQ(result.firstWrong->h, p.outHeight() - 1);
  EXPECT_EQ(result.firstWrong->w, p.outWidth() - 1);
  EXPECT_TRUE(std::isnan(result.firstWrong->got));
  EXPECT_NE(result.firstWrong->text().find("NaN"), std::string::npos);
}

TEST(ConvCheck, DeclinedShapesAreSkippedAndSaid) {
  const auto conv = createConvBackend("cpu-reference");
  const ConvCheckResult result = checkConvAgainstReference(*conv, randomCheckShapes(5, 8), 5, [](const ConvProblem& p) {
    return p.hasStride() ? std::string("strided") : std::string();
  });
  EXPECT_TRUE(result.passed()) << result.summary();
  for (const ConvProblem& p : result.checked) EXPECT_FALSE(p.hasStride());
  for (const std::string& d : result.declined) EXPECT_NE(d.find("strided"), std::string::npos);
}

TEST(ChildProcess, StopsAChildAtItsTimeLimit) {
  const ChildOutcome outcome = runChildProcess({"/bin/sh", "-c", "echo started; sleep 30"}, 1.0);
  EXPECT_TRUE(outcome.timedOut);
  EXPECT_FALSE(outcome.succeeded());
  EXPECT_LT(outcome.seconds, 10.0);
  EXPECT_NE(outcome.output.find("started"), std::string::npos);
  EXPECT_EQ(outcome.describe(1.0), "stopped at the time limit of 1 s");
}

// The shell holds 200 MB of command substitution in its own memory: past a 50 MB limit it is
// stopped within a few samples, and says the limit and what it held; under a limit it runs on.
TEST(ChildProcess, StopsAChildThatPassesItsMemoryLimit) {
  const std::string grow = "v=$(head -c 200000000 /dev/zero | tr '\\0' a); echo grown; sleep 30";
  const ChildOutcome outcome = runChildProcess({"/bin/sh", "-c", grow}, 60.0, {}, 50'000'000);
  EXPECT_TRUE(outcome.overMemory) << outcome.describe(60);
  EXPECT_FALSE(outcome.timedOut);
  EXPECT_FALSE(outcome.succeeded());
  EXPECT_EQ(outcome.signal, 0);  // the limit's kill, not a fault of the child's
  EXPECT_LT(outcome.seconds, 30.0);
  EXPECT_EQ(outcome.output.find("grown"), std::string::npos);
  EXPECT_GT(outcome.peakResidentBytes, 50'000'000);
  EXPECT_NE(outcome.describe(60).find("stopped at the memory limit of 50 MB (it held "), std::string::npos)
      << outcome.describe(60);

  const ChildOutcome within = runChildProcess(
      {"/bin/sh", "-c", "v=$(head -c 20000000 /dev/zero | tr '\\0' a); echo grown"}, 60.0, {}, 500'000'000);
  EXPECT_TRUE(within.succeeded()) << within.describe(60) << within.output;
  EXPECT_NE(within.output.find("grown"), std::string::npos);
  EXPECT_GT(within.peakResidentBytes, 0);
  EXPECT_LT(within.peakResidentBytes, 500'000'000);
}

// The job's wiring of the limit, without a GPU: a stand-in for the kernel's child process that
// swells; the student is told the limit, in the student's file's name, and the process died.
TEST(UserKernelJob, AChildPastTheMemoryLimitIsStoppedAndTheStudentToldWhy) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / "convscope-test-memory-limit";
  std::filesystem::create_directories(folder);
  const std::filesystem::path swelling = folder / "swelling-child.sh";
  std::ofstream(swelling) << "#!/bin/sh\nv=$(head -c 300000000 /dev/zero | tr '\\0' a)\necho survived\n";
  std::filesystem::permissions(swelling, std::filesystem::perms::owner_all);
  UserKernelJob job;
  job.program = swelling;
  job.file = "students/ada.cu";
  job.kernel = testing::stubSubmittedKernel("students/ada.cu");
  job.timeLimitSeconds = 60;
  job.memoryLimitBytes = 60'000'000;
  const UserKernelJobResult result = runUserKernelJob(job, {});
  EXPECT_FALSE(result.passed);
  EXPECT_TRUE(result.processDied);
  EXPECT_EQ(result.failure.rfind("students/ada.cu: memory limit: its process held more than 60 MB of host memory", 0),
            0u)
      << result.failure;
  EXPECT_EQ(result.childOutput.find("survived"), std::string::npos) << result.childOutput;
  std::filesystem::remove_all(folder);
}

// A grader's child starts the compiler and the kernel in process groups of their own; when that
// child is killed (the window's Cancel, its time limit), what it started must not run on without
// the parent that enforced its limits.
TEST(ChildProcess, WhatAChildStartedDiesWithItEvenInAProcessGroupOfItsOwn) {
  const std::filesystem::path pidFile =
      std::filesystem::temp_directory_path() / ("convscope-test-grandchild-" + std::to_string(getpid()));
  std::filesystem::remove(pidFile);
  const pid_t middle = fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {  // the grader's child: a long "kernel" through runChildProcess, which waits for it
    runChildProcess({"/bin/sh", "-c",
                     "echo $$ > " + pidFile.string() + ".part; mv " + pidFile.string() + ".part " + pidFile.string() +
                         "; exec sleep 120"},
                    300.0);
    _exit(0);
  }
  pid_t grandchild = 0;
  for (int i = 0; i < 1000 && grandchild == 0; ++i) {
    std::ifstream in(pidFile);
    if (!(in >> grandchild)) usleep(10000);
  }
  ASSERT_GT(grandchild, 0);
  // Running (not a zombie nobody reaped, as in a container without an init).
  const auto alive = [&] {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid, name, state;
    return static_cast<bool>(stat >> pid >> name >> state) && state != "Z" && state != "X";
  };
  ASSERT_TRUE(alive());
  kill(middle, SIGKILL);
  waitpid(middle, nullptr, 0);
  for (int i = 0; i < 300 && alive(); ++i) usleep(10000);
  const bool ranOn = alive();
  if (ranOn) kill(grandchild, SIGKILL);
  EXPECT_FALSE(ranOn) << "the grandchild ran on after its parent was killed";
  std::filesystem::remove(pidFile);
}

TEST(ChildProcess, ReportsASignalAndAnExitCode) {
  const ChildOutcome faulted = runChildProcess({"/bin/sh", "-c", "kill -SEGV $$"}, 10.0);
  EXPECT_EQ(faulted.signal, SIGSEGV);
  EXPECT_NE(faulted.describe(10).find("signal 11"), std::string::npos);
  const ChildOutcome exited = runChildProcess({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 10.0);
  EXPECT_EQ(exited.exitCode, 3);
  EXPECT_EQ(exited.signal, 0);
  EXPECT_NE(exited.output.find("out"), std::string::npos);
  EXPECT_NE(exited.output.find("err"), std::string::npos);
  const ChildOutcome missing = runChildProcess({"/nonexistent/program"}, 10.0);
  EXPECT_EQ(missing.exitCode, 127);
  EXPECT_NE(missing.output.find("cannot run /nonexistent/program"), std::string::npos);
}

TEST(UserRows, JoinTheTableAfterItWasReadAndStayFindable) {
  const size_t courseRows = convVariants().size();  // the table is read: course rows are fixed now
  UserKernelSource source = parseUserKernelSource("/tmp/mine.cu", "");
  ConvVariant row = userKernelVariantRow(source);
  row.requirements.gpu = false;  // a host row, so that this test runs without a GPU
  row.createHostBackend = [] { return createConvBackend("cpu-reference"); };
  const ConvVariant& added = addUserConvVariant(row);
  EXPECT_EQ(&findConvVariant("user-mine"), &added);
  EXPECT_EQ(convVariants().size(), courseRows);
  ASSERT_FALSE(userConvVariants().empty());
  EXPECT_EQ(userConvVariants().back(), &added);
  EXPECT_GT(added.courseOrder, convVariants().back().courseOrder);
  testing::expectError([&] { addUserConvVariant(row); }, {"user-mine", "added already"});
  ConvVariant clash = row;
  clash.id = "cpu-reference";
  testing::expectError([&] { addUserConvVariant(clash); }, {"cpu-reference", "course variant"});
}

// `convscope-cli kernel check FILE`: its exit code and everything it printed.
std::pair<int, std::string> kernelCheck(const std::filesystem::path& file) {
  const std::string command = std::string(CONVSCOPE_CLI_PATH) + " kernel check " + file.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
  const int status = pclose(pipe);
  return {WEXITSTATUS(status), output};
}

TEST(UserKernelCheckCommand, PrintsCompileErrorsWithFileAndLineAndTheCompilersText) {
  SKIP_WITHOUT_NVRTC();
  const std::filesystem::path syntax = kKernels / "syntax_error.cu";
  auto [code, output] = kernelCheck(syntax);
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find(syntax.string() + ": compile FAILED"), std::string::npos) << output;
  EXPECT_NE(output.find(syntax.string() + ":11: error: expected a \";\""), std::string::npos) << output;
  EXPECT_NE(output.find("The compiler's output:"), std::string::npos) << output;
  std::tie(code, output) = kernelCheck(kKernels / "wrong_signature.cu");
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find("breaks the contract (docs/your-kernel.md): convscope_conv has the wrong parameters"),
            std::string::npos)
      << output;
  std::tie(code, output) = kernelCheck(kKernels / "no_such_file.cu");
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find((kKernels / "no_such_file.cu").string() + ": cannot open it: No such file or directory"),
            std::string::npos)
      << output;
}

TEST(UserKernelCheckCommand, CompilesAndSaysWhyItCannotRunWithoutAGpu) {
  if (gpuInfo().usable) GTEST_SKIP() << "a GPU is usable here: tests/gpu/test_user_kernels_gpu.cpp checks on it";
  const auto [code, output] = kernelCheck(kTemplates / "tiled_conv.cu");
  if (gpu::userKernelCompilerUnavailableReason().empty()) {
    EXPECT_EQ(code, 0) << output;
    // Machine code for sm_90 without a GPU too: the verdict is the grading machine's.
    EXPECT_NE(output.find("compiled for sm_90"), std::string::npos) << output;
    EXPECT_NE(output.find("not checked: cannot run the kernel here"), std::string::npos) << output;
  } else {
    EXPECT_EQ(code, 1) << output;
    EXPECT_NE(output.find("cannot compile kernels"), std::string::npos) << output;
  }
}

}  // namespace
}  // namespace convscope
