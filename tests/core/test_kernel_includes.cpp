// The #include filter reads a kernel file as NVRTC 13.0 does (app/core/conv/kernel_includes.cpp
// lists what a probe of NVRTC showed): each way of naming another file, or of making the compiler
// read the file otherwise than the filter, is refused on its line with a message that names it;
// the course's templates, CRLF files and ordinary kernels pass; megabyte inputs are read in linear
// time. Every case would pass the file if its rule were taken out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/conv/kernel_includes.h"
#include "app/core/conv/user_kernel_source.h"

namespace convscope {
namespace {

const std::string kFile = "student/mine.cu";

std::vector<KernelDiagnostic> refusalsOf(const std::string& text) {
  return refusedKernelIncludes(kFile, text);
}

std::string allText(const std::vector<KernelDiagnostic>& refusals) {
  std::string text;
  for (const KernelDiagnostic& refusal : refusals) text += refusal.text() + "\n";
  return text;
}

struct Refused {
  std::string text;
  int line;           // where the refusal must stand
  std::string named;  // what its message must name
};

// Each text is refused exactly once, on its line, in the student's terms.
void expectEachRefusedOnce(const std::vector<Refused>& cases) {
  for (const Refused& c : cases) {
    SCOPED_TRACE(c.text);
    const std::vector<KernelDiagnostic> refusals = refusalsOf(c.text);
    ASSERT_EQ(refusals.size(), 1u) << allText(refusals);
    EXPECT_EQ(refusals[0].file, kFile);
    EXPECT_EQ(refusals[0].line, c.line) << refusals[0].text();
    EXPECT_NE(refusals[0].message.find(c.named), std::string::npos) << refusals[0].message;
    EXPECT_NE(refusals[0].message.find(" is refused: "), std::string::npos) << refusals[0].message;
    EXPECT_EQ(refusals[0].text().rfind(kFile + ":" + std::to_string(c.line) + ": ", 0), 0u);
  }
}

void expectEachPasses(const std::vector<std::string>& texts) {
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    EXPECT_EQ(allText(refusalsOf(text)), "");
  }
}

std::string excerptOf(const KernelDiagnostic& problem) {
  return problem.text().substr(0, 200);
}

std::string withCrlf(const std::string& text) {
  std::string crlf;
  for (const char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  return crlf;
}

std::vector<std::string> templateTexts() {
  std::vector<std::string> texts;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(CONVSCOPE_SOURCE_DIR) / "examples/kernels")) {
    if (entry.path().extension() != ".cu") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    texts.push_back(text.str());
  }
  return texts;
}

TEST(KernelIncludes, TheTemplatesPassWithLfAndWithCrlfLineEnds) {
  const std::vector<std::string> templates = templateTexts();
  ASSERT_GE(templates.size(), 2u);
  for (const std::string& text : templates) {
    ASSERT_NE(text.find("#include \"convscope_kernel.h\""), std::string::npos);  // the check has work to do
    EXPECT_EQ(allText(refusalsOf(text)), "");
    EXPECT_EQ(allText(refusalsOf(withCrlf(text))), "");
  }
  // Mixed line ends: CRLF and LF lines in one file.
  expectEachPasses({"#include <mma.h>\r\n#include <cuda_fp16.h>\n#define X 1 \\\r\n  + 2\r\n"});
}

// parseUserKernelSource reads the CONVSCOPE_* macros by hand (a regex overflowed the stack on a
// long line): a CRLF file gives the LF file's launch, a comment after a value is no part of it.
TEST(KernelIncludes, TheLaunchMacrosOfCrlfFilesAndMegabyteLinesAreRead) {
  for (const std::string& text : templateTexts()) {
    const UserKernelSource lf = parseUserKernelSource("mine.cu", text);
    const UserKernelSource crlf = parseUserKernelSource("mine.cu", withCrlf(text));
    EXPECT_TRUE(crlf.ok()) << (crlf.problems.empty() ? "" : crlf.problems[0].text());
    EXPECT_EQ(crlf.launch.blockX, lf.launch.blockX);
    EXPECT_EQ(crlf.launch.tileHeight, lf.launch.tileHeight);
    EXPECT_EQ(crlf.launch.maxKernel, lf.launch.maxKernel);
  }
  const UserKernelSource commented = parseUserKernelSource(
      "mine.cu", withCrlf("#define CONVSCOPE_BLOCK_X 8 // threads\n# define\tCONVSCOPE_BLOCK_Y 4\n"
                          "#define CONVSCOPE_TILE_WIDTH 8\n#define CONVSCOPE_TILE_HEIGHT 4 /* rows */\n"));
  EXPECT_EQ(commented.launch.blockX, 8);
  EXPECT_EQ(commented.launch.blockY, 4);
  ASSERT_EQ(commented.problems.size(), 1u);  // a /* */ comment is read as part of the value
  EXPECT_EQ(commented.problems[0].line, 4);

  const std::string longValue(1024 * 1024, '1');
  const UserKernelSource huge = parseUserKernelSource("mine.cu", "#define CONVSCOPE_BLOCK_X " + longValue + "\n");
  ASSERT_FALSE(huge.problems.empty());
  EXPECT_EQ(huge.problems[0].line, 1);
  EXPECT_EQ(huge.problems[0].message.rfind("CONVSCOPE_BLOCK_X is '111", 0), 0u) << excerptOf(huge.problems[0]);
}

TEST(KernelIncludes, OrdinaryKernelCodePasses) {
  std::string pragmas;
  for (const std::string& name : allowedKernelPragmas()) pragmas += "#pragma " + name + "\n";
  expectEachPasses({
      pragmas,
      "#include <mma.h>\n#  include <cuda_fp16.h>  // half precision\n%:include <cuda_bf16.h>\n",
      "#include /* the header */ <cuda/pipeline> /* and a comment */ // and another\n",
      "#if __has_include(<cuda_bf16.h>) && __has_include( \"convscope_kernel.h\" )\n#endif\n",
      "#define STR(x) #x\n#define UNROLL _Pragma(\"unroll\")\n_Pragma( \"nv_diag_suppress 177\" )\n",
      "// #include <stdio.h> in a line comment, ## in a comment, a ?? in a comment\n",
      "const char* kNote = \"#include <stdio.h>\";  // mid-line: no directive\n",
      "const char* kRaw = R\"x(a raw string on one line)x\";\nconst char* kU8 = u8R\"(ok)\";\n",
      "int x = 1'000'000; char c = '\\''; const char* s = \"it's /* not a comment */\";\n",
      "#define CONVSCOPE_BLOCK_X 16 /* threads */ // a block's width\n",
      "// a comment continued \\\n   on the next line\n",
  });
}

// The confirmed attack: "\ " is no splice for NVRTC, so the next line is a directive.
TEST(KernelIncludes, ABackslashBeforeBlanksAtALinesEndIsRefusedAndNotReadAsASplice) {
  for (const std::string blanks : {" ", "\t", "  \t ", "\f"}) {
    for (const std::string lineEnd : {"\n", "\r\n"}) {
      SCOPED_TRACE("blanks: '" + blanks + "', line end: " + (lineEnd == "\n" ? "LF" : "CRLF"));
      const std::vector<KernelDiagnostic> refusals =
          refusalsOf("// a note \\" + blanks + lineEnd + "#include \"/etc/passwd\"" + lineEnd);
      ASSERT_EQ(refusals.size(), 2u) << allText(refusals);
      EXPECT_EQ(refusals[0].line, 1);
      EXPECT_NE(refusals[0].message.find("backslash followed by blanks"), std::string::npos) << refusals[0].message;
      // Not joined to the comment: the #include is read, on its own line.
      EXPECT_EQ(refusals[1].line, 2);
      EXPECT_NE(refusals[1].message.find("#include \"/etc/passwd\""), std::string::npos) << refusals[1].message;
    }
  }
  expectEachRefusedOnce({{"int a;\nint b; \\ \nint c;\n", 2, "backslash followed by blanks"}});
}

TEST(KernelIncludes, OnlyABackslashRightBeforeTheLineEndJoinsLines) {
  expectEachRefusedOnce({
      {"#inc\\\nlude \"/etc/passwd\"\n", 1, "#include \"/etc/passwd\""},
      {"#inc\\\r\nlude \"/etc/passwd\"\r\n", 1, "#include \"/etc/passwd\""},
      {"int a;\n\\\n\\\n\\\n#include </etc/passwd>\n", 5, "#include </etc/passwd>"},  // the # is on line 5
      {"int a;\nint b; \\", 2, "backslash at the end of the file"},                   // it would join what NVRTC adds
  });
  // A spliced line comment takes the next line with it: no directive there (NVRTC agrees).
  expectEachPasses({"// a comment \\\n#include <stdio.h>\n"});
}

TEST(KernelIncludes, ANulByteIsRefusedOnItsLine) {
  const std::string nul(1, '\0');
  expectEachRefusedOnce({
      {"int a;\nint b;\nint c;" + nul + "\n#include <mma.h>\n", 3, "NUL byte"},
      {nul + "#include <mma.h>\n", 1, "NUL byte"},
  });
}

TEST(KernelIncludes, ALoneCarriageReturnIsRefusedWhereCrlfIsALineEnd) {
  // NVRTC reads a lone CR as a blank: the #include is then not at a line's start.
  expectEachRefusedOnce({
      {"int a;\r\nint b;\r#include </etc/passwd>\r\n", 2, "carriage return that does not end a line"},
      {"int a;\nint b;\r", 2, "carriage return"},
  });
}

TEST(KernelIncludes, EveryTrigraphIsRefusedOnItsLine) {
  for (const char last : std::string("=/'()!<>-")) {
    const std::string trigraph = std::string("??") + last;
    expectEachRefusedOnce({{"int a;\n/* " + trigraph + " */\n", 2, "trigraph " + trigraph}});
  }
  expectEachRefusedOnce({{"?\?=include \"/etc/passwd\"\n", 1, "trigraph ?\?="}});
  expectEachPasses({"// why?? (not a trigraph)\nint a = b ? c : d;\n"});
}

TEST(KernelIncludes, DigraphsAreReadAsHashes) {
  expectEachRefusedOnce({
      {"%:include \"/etc/passwd\"\n", 1, "#include \"/etc/passwd\""},
      {"  %:  include </etc/passwd>\n", 1, "#include </etc/passwd>"},
      {"%:define CAT(a, b) a %:%: b\n", 1, "token-paste operator %:%:"},
  });
}

TEST(KernelIncludes, ACommentBeforeOrInsideADirectiveHidesNothing) {
  expectEachRefusedOnce({
      // The compiler reads the comment as one space and the directive on: an #include.
      {"# /*\n*/ include \"/etc/passwd\"\n", 1, "/* comment that begins after a directive's #"},
      {"#define X 1 /* on\n and on */ + 2\n", 1, "/* comment that begins after a directive's #"},
      {"int a;\n#if 0 /*\n*/ || __has_include(<mma.h>)\n#endif\n", 2, "/* comment that begins after"},
      // A directive right after a comment begun on an earlier line, even with code before it.
      {"/* a\n comment */ #include \"/etc/passwd\"\n", 2, "#include \"/etc/passwd\""},
      {"int a; /*\n*/ #include \"/etc/passwd\"\n", 2, "#include \"/etc/passwd\""},
      {"/* one */ /* two */ # /* three */ include </etc/passwd> // four\n", 1, "#include </etc/passwd>"},
      // Inside a comment in every reading: refused all the same (the check errs on the safe side).
      {"/*\n#include </etc/passwd>\n*/\n", 2, "#include </etc/passwd>"},
  });
}

// A /* in a string or after a digit separator opens no comment for NVRTC in some reading (in a
// skipped #if group, "1'000 /* '" is 1, a character and no comment): the lines after are checked.
TEST(KernelIncludes, StringsAndCharactersHideNoDirective) {
  expectEachRefusedOnce({
      {"const char* s = \"/*\";\n#include </etc/passwd>\n// */\n", 2, "#include </etc/passwd>"},
      {"int c = '/*';\n#include </etc/passwd>\n// */\n", 2, "#include </etc/passwd>"},
      {"#if 0\nint x = 1'000; /* '\n#endif\n#include </etc/passwd>\n*/\n#endif\n", 4, "#include </etc/passwd>"},
      {"const char* s = \"unterminated /*\n#include </etc/passwd>\n*/\n", 2, "#include </etc/passwd>"},
  });
}

TEST(KernelIncludes, DirectivesThatOpenOrRenameFilesAreRefused) {
  expectEachRefusedOnce({
      {"#include </etc/passwd>\n", 1, "#include </etc/passwd>"},
      {"#include \"student_notes.cu\"\n", 1, "#include \"student_notes.cu\""},
      {"#include <cuda_fp16.h/../../../../etc/passwd>\n", 1, "cuda_fp16.h/../"},
      {"#include \"mma.h\"\n", 1, "#include \"mma.h\""},  // the toolkit's headers in angle brackets only
      {"#define SECRET \"/etc/passwd\"\n#include SECRET\n", 2, "computed name"},
      {"#include <mma.h\n", 1, "#include <mma.h"},
      {"#include <mma.h> \"/etc/passwd\"\n", 1, "text after '#include <mma.h>'"},
      {"#include_next <mma.h>\n", 1, "#include_next <mma.h>"},
      {"#import \"/etc/passwd\"\n", 1, "#import"},
      {"#embed \"/etc/passwd\"\n", 1, "#embed"},
      {"#incl\\u0075de \"/etc/passwd\"\n", 1, "escapes"},
      {"int a;\n#line 1 \"/etc/passwd\"\n", 2, "#line"},
      {"int a;\n# 7 \"other.cu\"\n", 2, "line marker"},
      {"\xEF\xBB\xBF#include </etc/passwd>\n", 1, "#include </etc/passwd>"},  // after a byte-order mark
  });
}

TEST(KernelIncludes, OnlyTheListedPragmasPass) {
  expectEachRefusedOnce({
      {"#pragma GCC dependency \"/etc/passwd\"\n", 1, "#pragma GCC dependency"},
      {"#pragma include_alias(\"mma.h\", \"/etc/passwd\")\n", 1, "#pragma include_alias"},
      {"#pragma push_macro(\"X\")\n", 1, "#pragma push_macro"},
      {"#pragma /* a comment */ STDC FP_CONTRACT ON\n", 1, "#pragma STDC FP_CONTRACT ON"},
      {"int a;\n_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n", 2, "_Pragma(\"GCC dependency"},
      {"#define P(x) _Pragma(#x)\n", 1, "_Pragma without a written string"},
      {"#define P _Pragma(L\"unroll\")\n", 1, "_Pragma without a written string"},
  });
  expectEachPasses({"#pragma unroll 4\n#pragma nv_diag_suppress 177\n_Pragma(\"unroll\")\n"});
}

TEST(KernelIncludes, HasIncludePassesOnlyWrittenOutWithAnAllowedName) {
  expectEachRefusedOnce({
      {"#if __has_include(\"/etc/shadow\")\n#endif\n", 1, "__has_include(\"/etc/shadow\")"},
      {"#if __has_include(<stdio.h>)\n#endif\n", 1, "__has_include(<stdio.h>)"},
      {"#if __has_include_next(<mma.h>)\n#endif\n", 1, "__has_include_next(<mma.h>)"},
      {"#if __has_embed(\"/etc/passwd\")\n#endif\n", 1, "__has_embed(\"/etc/passwd\")"},
      {"#define ASK __has_include\n#if ASK(\"/etc/passwd\")\n#endif\n", 1, "__has_include of a computed name"},
      {"#if __has_include(<mma.h>\n#endif\n", 1, "__has_include of a computed name"},
  });
}

// H(__has_,include) is __has_include for NVRTC; no filter can follow pasting, so ## is refused.
TEST(KernelIncludes, TokenPastingIsRefusedInADefine) {
  expectEachRefusedOnce({
      {"#define H(a, b) a##b\n#if H(__has_, include)(\"/etc/passwd\")\n#endif\n", 1, "token-paste operator ##"},
      {"#define H(a, b) \\\n  a ## b\n", 2, "token-paste operator ##"},  // on the ##'s own line
      {"/* x\n*/ #define H(a, b) a##b\n", 2, "token-paste operator ##"},
  });
  expectEachPasses({"#define STR(x) #x\n#define QUOTE(x) STR(x)\n// ## a heading in a comment\n"});
}

TEST(KernelIncludes, RawStringsOverSeveralLinesAreRefused) {
  expectEachRefusedOnce({
      {"int a;\nconst char* s = R\"(\n#endif\n)\";\n", 2, "raw string literal over several lines"},
      {"const char* s = LR\"end(a\\\nb)end\";\n", 1, "raw string literal over several lines"},  // a splice
      {"int a;\nconst char* s = R\"(never closed\n", 2, "raw string literal that is never closed"},
  });
}

TEST(KernelIncludes, RefusalsComeInLineOrderAndAreBounded) {
  std::string text;
  for (int line = 1; line <= 500; ++line) text += line % 2 ? "#include </etc/passwd>\n" : "int a; ?\?=\n";
  const std::vector<KernelDiagnostic> refusals = refusalsOf(text);
  ASSERT_EQ(refusals.size(), 100u);
  for (size_t i = 0; i < refusals.size(); ++i) EXPECT_EQ(refusals[i].line, static_cast<int>(i) + 1);
}

// Each input has a megabyte; the scan must stay linear (a quadratic one takes minutes here).
TEST(KernelIncludes, MegabyteInputsAreReadToTheirEnd) {
  const size_t kMegabyte = 1024 * 1024;
  const auto repeated = [&](const std::string& unit) {
    std::string text;
    while (text.size() + unit.size() <= kMegabyte) text += unit;
    return text;
  };
  const std::string include = "\n#include </etc/passwd>\n";
  // Passing: one long line, and many lines, each with a refused #include after it.
  for (const std::string& unit :
       {std::string("a"), std::string("\\\n"), std::string("/*"), std::string("'\""), std::string("*/ /* "),
        std::string("1'0"), std::string("__has"), std::string("R\"x"), std::string("// ?"), std::string("#"),
        std::string("*/#"), std::string("*/# /* */")}) {
    SCOPED_TRACE(unit);
    const std::string text = repeated(unit) + include;
    const std::vector<KernelDiagnostic> refusals = refusalsOf(text);
    ASSERT_FALSE(refusals.empty());
    EXPECT_NE(refusals.back().message.find("#include </etc/passwd>"), std::string::npos) << refusals.back().text();
  }
  // Refused many times over: at most 100 listed, the first on line 1.
  for (const std::string& unit :
       {std::string("\\ \n"), std::string(1, '\0'), std::string("\r"), std::string("?\?="),
        std::string("*/#define a##b "), std::string("*/#include <"), std::string("*/#include <mma.h> x "),
        std::string("*/# /*"), std::string("__has_include( "), std::string("_Pragma( "), std::string("R\"(")}) {
    SCOPED_TRACE(unit);
    const std::vector<KernelDiagnostic> refusals = refusalsOf(repeated(unit));
    ASSERT_FALSE(refusals.empty());
    EXPECT_LE(refusals.size(), 100u);
    EXPECT_EQ(refusals.front().line, 1);
  }
}

}  // namespace
}  // namespace convscope
