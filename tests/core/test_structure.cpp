// The structure docs/architecture.md promises, read from the sources: the core's folders form a
// strict stack, and no code outside the variant table and a row's own files names a variant.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/conv/variant_table.h"
#include "app/core/model/operator.h"

namespace convscope {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = CONVSCOPE_SOURCE_DIR;

std::vector<fs::path> sourceFilesUnder(const fs::path& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / folder)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".cpp" || ext == ".h" || ext == ".cu" || ext == ".cuh" || ext == ".inc"))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> linesOf(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The core's folders from the bottom up (docs/architecture.md, "Layers and their dependencies").
const std::vector<std::string> kCoreStack = {"util", "data", "device", "conv", "model", "engine", "grading"};

int coreLevel(const std::string& folder) {
  const auto at = std::find(kCoreStack.begin(), kCoreStack.end(), folder);
  return at == kCoreStack.end() ? -1 : static_cast<int>(at - kCoreStack.begin());
}

TEST(Structure, EveryIncludeInsideTheCoreRunsDownItsStack) {
  const std::regex include(R"re(^\s*#\s*include\s*"app/core/([a-z_]+)/)re");
  int checked = 0;
  for (const fs::path& file : sourceFilesUnder("app/core")) {
    const fs::path relative = fs::relative(file, kSource / "app/core");
    if (relative.begin() == relative.end() || std::next(relative.begin()) == relative.end()) continue;  // top level
    const std::string folder = relative.begin()->string();
    const int level = coreLevel(folder);
    ASSERT_GE(level, 0) << "app/core/" << folder << " is not in the stack of docs/architecture.md";
    const std::vector<std::string> lines = linesOf(file);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::smatch m;
      if (!std::regex_search(lines[i], m, include)) continue;
      ++checked;
      const int target = coreLevel(m[1].str());
      EXPECT_GE(target, 0) << file.string() << ":" << i + 1 << ": includes an unknown core folder " << m[1];
      EXPECT_LE(target, level) << file.string() << ":" << i + 1 << ": app/core/" << folder << " includes app/core/"
                               << m[1] << ", which is above it";
    }
  }
  EXPECT_GT(checked, 100) << "the includes were not read";
}

// Lines that hold a variant's id as a word of something else: the cuDNN version a results file
// records under the key "cudnn".
bool namesTheCudnnVersion(const std::string& line) {
  return line.find("cudnnVersion") != std::string::npos || line.find("report.cudnn") != std::string::npos;
}

TEST(Structure, NoCodeOutsideTheTableAndARowsOwnFilesNamesAVariant) {
  const fs::path table = "gpu/gpu_variants.cpp";
  std::map<std::string, fs::path> ownFile;  // id -> the file of its row
  for (const ConvVariant& v : convVariants()) ownFile[v.id] = v.sourceFile;
  ASSERT_GE(ownFile.size(), 14u);
  int files = 0;
  for (const char* folder : {"app", "ui", "gpu"})
    for (const fs::path& file : sourceFilesUnder(folder)) {
      ++files;
      const fs::path relative = fs::relative(file, kSource);
      const std::vector<std::string> lines = linesOf(file);
      for (const auto& [id, own] : ownFile) {
        if (relative == table || relative == own) continue;
        const std::string quoted = "\"" + id + "\"";
        for (size_t i = 0; i < lines.size(); ++i)
          if (lines[i].find(quoted) != std::string::npos && !namesTheCudnnVersion(lines[i]))
            ADD_FAILURE() << relative.string() << ":" << i + 1 << " names the variant " << quoted
                          << ": give the table's row a role (VariantRole) or a field instead";
      }
    }
  EXPECT_GT(files, 200) << "the sources were not read";
}

// README.md lists the ONNX operators a model may use, by hand; every operator the loader takes
// (a new one, or a row added to util/activations.h) must be named there.
TEST(Structure, TheReadmeNamesEveryOperatorTheLoaderTakes) {
  std::ifstream in(kSource / "README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const size_t from = readme.find("loads if it uses only these operators:");
  ASSERT_NE(from, std::string::npos) << "README.md no longer has its list of operators";
  const size_t to = readme.find("Anything", from);
  ASSERT_NE(to, std::string::npos);
  const std::string list = readme.substr(from, to - from);
  ASSERT_GT(supportedOperators().size(), 20u);
  for (const std::string& op : supportedOperators())
    EXPECT_TRUE(std::regex_search(list, std::regex("\\b" + op + "\\b")))
        << "README.md's list of operators does not name " << op;
}

}  // namespace
}  // namespace convscope
