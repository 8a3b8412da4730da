// A labels file (one class name a line) and the top-k of a prediction: what a model with many
// classes is shown by.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "app/core/data/class_labels.h"
#include "app/core/engine/classifier.h"
#include "app/core/util/error.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

using testing::TempDir;

std::vector<uint8_t> bytesOf(const std::string& text) {
  return {text.begin(), text.end()};
}

std::string refusalOf(const std::filesystem::path& file) {
  try {
    readLabelsFile(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LabelsFile, ReadsOneNameALineWithCommasSpacesCrLfAndNoFinalLineEnd) {
  TempDir dir;
  const auto file =
      dir.write("imagenet.txt", bytesOf("tench, Tinca tinca\r\ngoldfish\n  great white shark\nEgyptian cat"));
  EXPECT_EQ(readLabelsFile(file),
            (std::vector<std::string>{"tench, Tinca tinca", "goldfish", "  great white shark", "Egyptian cat"}));
  EXPECT_EQ(readLabelsFile(dir.write("one.txt", bytesOf("chat\n"))), std::vector<std::string>{"chat"});
  EXPECT_EQ(readLabelsFile(dir.write("utf8.txt", bytesOf("caf\xc3\xa9\n\xe7\x8c\xab\n\xf0\x9f\x90\x88\n"))),
            (std::vector<std::string>{"caf\xc3\xa9", "\xe7\x8c\xab", "\xf0\x9f\x90\x88"}));
}

TEST(LabelsFile, EachDamageIsRefusedNamingTheFileAndTheLine) {
  TempDir dir;
  const struct {
    const char* name;
    std::string text;
    const char* says;
  } cases[] = {
      {"blank.txt", "cat\n\ndog\n", "blank.txt, line 2 is empty"},
      {"spaces.txt", "cat\n \t\ndog\n", "spaces.txt, line 2 is empty"},
      {"crlf-blank.txt", "cat\r\n\r\n", "crlf-blank.txt, line 2 is empty"},
      {"two-ends.txt", "cat\n\n", "two-ends.txt, line 2 is empty"},
      {"nul.txt", std::string("cat\ndo\0g\n", 9), "nul.txt, line 2 holds a NUL byte"},
      {"latin1.txt", "cat\ncaf\xe9\n", "latin1.txt, line 2 is not UTF-8"},
      {"cut.txt", "cat\n\xe7\x8c", "cut.txt, line 2 is not UTF-8"},
      {"overlong.txt", "\xc0\xaf\n", "overlong.txt, line 1 is not UTF-8"},
      {"surrogate.txt", "\xed\xa0\x80\n", "surrogate.txt, line 1 is not UTF-8"},
      {"empty.txt", "", "empty.txt names no class"},
  };
  for (const auto& c : cases) {
    const std::string refusal = refusalOf(dir.write(c.name, bytesOf(c.text)));
    EXPECT_NE(refusal.find(c.says), std::string::npos) << c.name << ": " << refusal;
  }
  std::string many;
  for (size_t i = 0; i <= kMaxClassNames; ++i) many += "c" + std::to_string(i) + "\n";
  EXPECT_NE(refusalOf(dir.write("many.txt", bytesOf(many))).find("names more than 100000 classes"), std::string::npos);
  EXPECT_NE(refusalOf(dir.path() / "absent.txt").find("absent.txt"), std::string::npos);
  EXPECT_NE(refusalOf(dir.path()).find("is a directory"), std::string::npos);  // a folder given as the file
}

// Random bytes: read whole (every name a non-blank line of the file) or refused by name, never a crash.
TEST(LabelsFile, RandomBytesAreReadWhollyOrRefusedByName) {
  TempDir dir;
  const unsigned seed = std::random_device{}();  // fresh each run, named in a failure
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  const std::string alphabet = std::string("ab ,\t\r\n\xc3\xa9\xff", 11) + std::string(1, '\0');
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    const int length = std::uniform_int_distribution<int>(0, 40)(random);
    for (int i = 0; i < length; ++i)
      text += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(random)];
    const auto file = dir.write("random.txt", bytesOf(text));
    try {
      const std::vector<std::string> names = readLabelsFile(file);
      ASSERT_FALSE(names.empty());
      for (const std::string& name : names) {
        EXPECT_EQ(name.find('\n'), std::string::npos);
        EXPECT_NE(name.find_first_not_of(" \t"), std::string::npos);
        EXPECT_NE(text.find(name), std::string::npos);
      }
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("random.txt"), std::string::npos) << e.what();
    }
  }
}

TEST(TopClasses, MostProbableFirstTiesToTheLowerClassNanLastAndKClipped) {
  const std::vector<float> p = {0.1f, 0.3f, NAN, 0.3f, -0.0f, 0.25f, 0.0f};
  EXPECT_EQ(topClasses(p, 3), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(topClasses(p, 7), (std::vector<int>{1, 3, 5, 0, 4, 6, 2}));  // -0 == 0: the lower class first
  EXPECT_EQ(topClasses(p, 100).size(), 7u);
  EXPECT_TRUE(topClasses(p, 0).empty());
  EXPECT_TRUE(topClasses({}, 5).empty());
}

// Against a full sort of (probability, class) pairs, on random predictions with many equal values.
TEST(TopClasses, AgreesWithAFullSortOnRandomPredictions) {
  const unsigned seed = std::random_device{}();  // fresh each run, named in a failure
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const int classes = std::uniform_int_distribution<int>(1, 1000)(random);
    std::vector<float> p(static_cast<size_t>(classes));
    for (float& v : p) v = static_cast<float>(std::uniform_int_distribution<int>(0, 20)(random)) / 20.0f;
    std::vector<std::pair<float, int>> sorted;
    for (int c = 0; c < classes; ++c) sorted.push_back({-p[static_cast<size_t>(c)], c});
    std::sort(sorted.begin(), sorted.end());
    const int k = std::uniform_int_distribution<int>(1, classes + 2)(random);
    const std::vector<int> top = topClasses(p, k);
    ASSERT_EQ(top.size(), static_cast<size_t>(std::min(k, classes)));
    for (size_t i = 0; i < top.size(); ++i) EXPECT_EQ(top[i], sorted[i].second) << "trial " << trial << ", place " << i;
  }
}

}  // namespace
}  // namespace convscope
