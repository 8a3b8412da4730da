// What the compiler says about a student's kernel, in the student's terms
// (app/core/conv/compiler_messages.h): where the contract's declarations are, the assembler's
// refusals in decimal on the line they are about, and NVRTC's log without ConvScope's additions.
// Plain text in, so these run everywhere; tests/core/test_user_kernels.cpp has the same with NVRTC.
#include <gtest/gtest.h>

#include "app/core/conv/compiler_messages.h"

namespace convscope {
namespace {

// A kernel whose comments and strings mention what the searches look for, on other lines.
const std::string kKernel =
    "// convscope_conv(const float*) was my first try; extern __shared__ float x[]; too\n"  // 1
    "#include \"convscope_kernel.h\"\n"                                                     // 2
    "/* __shared__ float commented[9999];\n"                                                // 3
    "   convscope_conv( */\n"                                                               // 4
    "__device__ const char* kName = \"convscope_conv(\";\n"                                 // 5
    "extern \"C\" __global__ void convscope_conv(const float* input,\n"                     // 6
    "                                          const float* weights, float* output,\n"      // 7
    "                                          ConvShape s) {\n"                            // 8
    "  __shared__ float tile[64][64];\n"                                                    // 9
    "  extern\n"                                                                            // 10
    "    __shared__ float dynamic[];\n"                                                     // 11
    "  __shared__ int counts[8]; char c = '\"'; // __shared__ float late[1];\n"             // 12
    "}\n";                                                                                  // 13

TEST(CompilerMessages, CodeOnlyBlanksCommentsAndStringsAndKeepsEveryLine) {
  const std::string code = kernelCodeOnly(kKernel);
  ASSERT_EQ(code.size(), kKernel.size());
  EXPECT_EQ(std::count(code.begin(), code.end(), '\n'), std::count(kKernel.begin(), kKernel.end(), '\n'));
  EXPECT_EQ(code.find("first try"), std::string::npos);
  EXPECT_EQ(code.find("commented"), std::string::npos);
  EXPECT_EQ(code.find("late"), std::string::npos);
  EXPECT_EQ(code.find("\"convscope_conv(\""), std::string::npos);
  EXPECT_NE(code.find("__global__ void convscope_conv("), std::string::npos);
  EXPECT_NE(code.find("tile[64][64]"), std::string::npos);
  // A // comment carried over a line splice is still a comment on the next line.
  EXPECT_EQ(kernelCodeOnly("// a \\\nhidden\nshown\n").find("hidden"), std::string::npos);
  EXPECT_NE(kernelCodeOnly("// a \\\nhidden\nshown\n").find("shown"), std::string::npos);
}

TEST(CompilerMessages, TheDeclarationIsFoundInCodeOnlyWithItsWholeParameterList) {
  const LineRange declaration = kernelDeclarationLines(kKernel);
  EXPECT_EQ(declaration.first, 6);
  EXPECT_EQ(declaration.last, 8);
  EXPECT_TRUE(declaration.contains(7));
  EXPECT_FALSE(declaration.contains(9));
  EXPECT_EQ(kernelDeclarationLines("__global__ void my_conv(float* x) {}\n").first, 0);
  EXPECT_FALSE(kernelDeclarationLines("").contains(0));
  // A longer name that begins with it is another name.
  EXPECT_EQ(kernelDeclarationLines("void convscope_conv2(int);\nvoid convscope_conv (int);\n").first, 2);
}

TEST(CompilerMessages, SharedDeclarationsAreFoundOnTheirLinesExternOnesApart) {
  EXPECT_EQ(sharedDeclarationLines(kKernel, false), (std::vector<int>{9, 11, 12}));
  EXPECT_EQ(sharedDeclarationLines(kKernel, true), (std::vector<int>{11}));
  EXPECT_TRUE(sharedDeclarationLines("int x;\n", false).empty());
}

TEST(CompilerMessages, TooMuchSharedMemoryIsSaidInDecimalOnTheFirstArraysLine) {
  const std::string log =
      "ptxas info    : Compiling entry function 'convscope_conv' for 'sm_90'\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 265936 bytes smem\n"
      " ptxas error   : Entry function 'convscope_conv' uses too much shared data (0x40ed0 bytes, 0xc000 max)\n";
  const std::vector<KernelDiagnostic> errors = assemblerErrors(log, "k.cu", kKernel, "sm_90");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].file, "k.cu");
  EXPECT_EQ(errors[0].line, 9);
  const std::string& m = errors[0].message;
  EXPECT_NE(m.find("265,936 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("49,152 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("sm_90"), std::string::npos) << m;
  EXPECT_NE(m.find("lines 9, 11, 12"), std::string::npos) << m;
  EXPECT_EQ(m.find("0x"), std::string::npos) << m;
  EXPECT_EQ(m.find("ptxas"), std::string::npos) << m;
}

TEST(CompilerMessages, TooMuchLocalMemoryAndOtherRefusalsAreInDecimalToo) {
  const std::string log =
      "ptxas error   : Entry function 'convscope_conv' uses too much local data (0x10000 bytes, 0x8000 max)\n"
      "ptxas fatal   : Unresolved extern function 'helper' at 0x1f\n";
  const std::vector<KernelDiagnostic> errors = assemblerErrors(log, "k.cu", kKernel, "sm_80");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].line, 6);  // the kernel's declaration
  EXPECT_NE(errors[0].message.find("65,536 bytes a thread"), std::string::npos) << errors[0].message;
  EXPECT_NE(errors[0].message.find("32,768 bytes"), std::string::npos) << errors[0].message;
  EXPECT_EQ(errors[1].line, 0);
  EXPECT_NE(errors[1].message.find("Unresolved extern function 'helper' at 31"), std::string::npos)
      << errors[1].message;
  EXPECT_TRUE(assemblerErrors("k.cu(3): error: expected a \";\"\n", "k.cu", kKernel, "sm_90").empty());
}

TEST(CompilerMessages, TheLogLosesConvScopesAdditionsAndTheAssemblersReportNothingElse) {
  const std::string log =
      "k.cu(12): error: expression must have class type\n"
      "    x = s.batch;\n"
      "        ^\n"
      "\n"
      "k.cu(7): error: identifier \"cosnt\" is undefined\n"
      "  cosnt float* weights\n"
      "  ^\n"
      "\n"
      "k.cu(30): warning #549-D: variable \"y\" is used before its value is set\n"
      "\n"
      "convscope-contract(4): error: static assertion failed with \"convscope_conv has the wrong parameters\"\n"
      "  static_assert(same<...>::value,\n"
      "  ^\n"
      "\n"
      "3 errors detected in the compilation of \"k.cu\".\n"
      "ptxas info    : Used 32 registers\n";
  const std::string all = studentCompilerLog(log);
  EXPECT_EQ(all.find("convscope-contract"), std::string::npos) << all;
  EXPECT_EQ(all.find("static_assert"), std::string::npos) << all;
  EXPECT_EQ(all.find("ptxas"), std::string::npos) << all;
  EXPECT_NE(all.find("k.cu(12): error"), std::string::npos) << all;
  EXPECT_NE(all.find("k.cu(30): warning"), std::string::npos) << all;
  EXPECT_NE(all.find("2 errors detected in the compilation of \"k.cu\"."), std::string::npos) << all;

  const LineRange declaration{6, 8};
  const std::string onDeclaration = studentCompilerLog(log, &declaration);
  EXPECT_NE(onDeclaration.find("k.cu(7): error: identifier \"cosnt\" is undefined"), std::string::npos)
      << onDeclaration;
  EXPECT_NE(onDeclaration.find("cosnt float* weights"), std::string::npos) << onDeclaration;
  EXPECT_EQ(onDeclaration.find("k.cu(12)"), std::string::npos) << onDeclaration;
  EXPECT_EQ(onDeclaration.find("s.batch"), std::string::npos) << onDeclaration;
  EXPECT_NE(onDeclaration.find("1 error detected"), std::string::npos) << onDeclaration;
  // A log with nothing taken out is as it was.
  const std::string plain = "k.cu(3): error: expected a \";\"\n\n1 error detected in the compilation of \"k.cu\".";
  EXPECT_EQ(studentCompilerLog(plain), plain);
}

}  // namespace
}  // namespace convscope
