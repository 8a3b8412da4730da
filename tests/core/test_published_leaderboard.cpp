// A published leaderboard.json read back (class_leaderboard.h, readPublishedLeaderboard): the
// committed H100 boards read whole and agree with their CSV twins; every way of breaking a board
// (truncation, another kind, a row of the wrong form, a field of the wrong type, a huge file) is
// refused naming the file and where, and never reaches the window as a value it cannot show.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "app/core/grading/class_leaderboard.h"
#include "app/core/util/error.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kClassOf20 = fs::path(CONVSCOPE_SOURCE_DIR) / "docs/results/2026-11-26-class-mode/class-of-20";
const fs::path kClassOf200 = fs::path(CONVSCOPE_SOURCE_DIR) / "docs/results/2026-11-26-class-mode/class-of-200";

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The CSV's rows (after its header), each split at commas outside quotes.
std::vector<std::vector<std::string>> csvRows(const fs::path& file) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(readText(file));
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (char c : line) {
      if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        fields.emplace_back();
      else
        fields.back() += c;
    }
    rows.push_back(fields);
  }
  return rows;
}

// The one rule of which statuses are correct (ranked, compared with cuDNN, re-timed): "passed" only,
// and a result file's status that is not a string (damaged, hand-edited) is never passed.
TEST(GradeStatus, OnlyPassedCountsAsPassedAndAStatusThatIsNoStringNever) {
  EXPECT_TRUE(countsAsPassed(json(kGradePassed)));
  for (const char* other : {kGradeFlagged, kGradeWrong, kGradeDoesNotCompile, kGradeBreaksContract, kGradeFaulted,
                            kGradeTimeLimit, kGradeMemoryLimit, kGradeNoGpu, kGradeNoCompiler})
    EXPECT_FALSE(countsAsPassed(json(other))) << other;
  EXPECT_FALSE(countsAsPassed(json("Passed")));
  EXPECT_FALSE(countsAsPassed(json(nullptr)));
  EXPECT_FALSE(countsAsPassed(json(1)));
  EXPECT_FALSE(countsAsPassed(json::array({kGradePassed})));
}

TEST(PublishedLeaderboard, TheCommittedBoardsReadWholeAndAgreeWithTheirCsv) {
  for (const fs::path& folder : {kClassOf20, kClassOf200}) {
    SCOPED_TRACE(folder.string());
    const Leaderboard board = readPublishedLeaderboard(folder / "leaderboard.json");
    ASSERT_EQ(board.groups.size(), 1u);
    const LeaderboardGroup& group = board.groups[0];
    EXPECT_EQ(group.gpu, "NVIDIA H100 80GB HBM3");
    const std::vector<std::vector<std::string>> csv = csvRows(folder / "leaderboard.csv");
    ASSERT_EQ(group.rows.size(), csv.size());
    int passed = 0;
    for (size_t r = 0; r < csv.size(); ++r) {
      EXPECT_EQ(std::to_string(group.rows[r]["rank"].get<int>()), csv[r][1]);
      EXPECT_EQ(group.rows[r]["id"].get<std::string>(), csv[r][2]);
      EXPECT_EQ(group.rows[r]["status"].get<std::string>(), csv[r][3]);
      passed += csv[r][3] == kGradePassed;
    }
    EXPECT_EQ(group.correct, passed);
    EXPECT_TRUE(group.reference.is_object());
  }
}

class BrokenBoard : public ::testing::Test {
 protected:
  testing::TempDir dir;
  fs::path file = dir.path() / "leaderboard.json";
  json good = json::parse(readText(kClassOf20 / "leaderboard.json"));
  std::string refusal(const std::string& text) {
    std::ofstream(file, std::ios::binary) << text;
    try {
      readPublishedLeaderboard(file);
    } catch (const Error& e) {
      return e.what();
    }
    return "(read without a word)";
  }
  std::string refusal(const json& board) { return refusal(board.dump()); }
  std::string refusal(const char* text) { return refusal(std::string(text)); }
};

TEST_F(BrokenBoard, EachFormOfDamageIsRefusedNamingTheFileAndWhere) {
  const std::string name = file.string();
  const auto expectRefused = [&](const std::string& message, const std::string& where) {
    EXPECT_EQ(message.rfind(name, 0), 0u) << message;
    EXPECT_NE(message.find(where), std::string::npos) << message;
  };
  expectRefused(refusal(""), "empty");
  expectRefused(refusal(good.dump().substr(0, 500)), "not JSON");
  // A number too large for the parser: not a syntax error, refused all the same (found by the
  // fuzzing below on an H200 run).
  expectRefused(refusal(R"({"kind": "convscope-class-leaderboard", "schema": 1e99999})"), "number overflow");
  json other = good;
  other["kind"] = "convscope-class-submission";
  expectRefused(refusal(other), "not a ConvScope leaderboard");
  other = good;
  other["schema"] = 99;
  expectRefused(refusal(other), "schema 99");
  other = good;
  other["groups"] = "many";
  expectRefused(refusal(other), "\"groups\"");
  other = good;
  other["groups"][0]["rows"][3] = 7;
  expectRefused(refusal(other), "table 1, row 4 is not an object");
  other = good;
  other["groups"][0]["rows"][2]["id"] = 12;
  expectRefused(refusal(other), "table 1, row 3: \"id\" is not text");
  other = good;
  other["groups"][0]["rows"][0].erase("status");
  expectRefused(refusal(other), "row 1: \"status\" is missing");
  other = good;
  other["groups"][0]["rows"][1]["rank"] = 1.5;
  expectRefused(refusal(other), "row 2: \"rank\"");
  other = good;
  other["groups"][0]["rows"][1]["rank"] = -3;
  expectRefused(refusal(other), "row 2: \"rank\"");
  other = good;
  other["groups"][0]["rows"][0]["opTimeSeconds"]["10000"] = "fast";
  expectRefused(refusal(other), "at batch 10000 is not a number");
  other = good;
  other["groups"][0]["rows"][0]["accuracy"] = "high";
  expectRefused(refusal(other), "\"accuracy\" is not a number");
  other = good;
  other["groups"][0]["reference"]["variants"][0]["displayName"] = json::array();
  expectRefused(refusal(other), "reference variant 1: \"displayName\" is not text");
  // Over the size limit: named by its size before a byte is parsed.
  std::ofstream(file, std::ios::binary).write("", 0);
  fs::resize_file(file, kPublishedLeaderboardMaxBytes + 1);
  try {
    readPublishedLeaderboard(file);
    ADD_FAILURE() << "a board over the limit was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
  }
}

// Fuzzing: random byte changes and truncations of a real board either read (and then every row
// has what the window reads, of the type it reads) or are refused by name; nothing else.
TEST_F(BrokenBoard, RandomDamageIsReadWhollyOrRefusedByName) {
  const std::string text = good.dump();
  std::mt19937_64 rng(::testing::UnitTest::GetInstance()->random_seed() + 1);
  int read = 0, refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string damaged = text;
    const int changes = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < changes; ++c) damaged[rng() % damaged.size()] = "{}[]\",:0-9.ae \x01"[rng() % 16];
    if (rng() % 4 == 0) damaged.resize(rng() % damaged.size());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << damaged;
    try {
      const Leaderboard board = readPublishedLeaderboard(file);
      for (const LeaderboardGroup& g : board.groups)
        for (const json& row : g.rows) {
          ASSERT_TRUE(row["id"].is_string());
          ASSERT_TRUE(row["status"].is_string());
          ASSERT_NO_THROW((void)row["rank"].get<int>());
          ASSERT_NO_THROW((void)row.value("message", std::string()));
          ASSERT_TRUE(row["opTimeSeconds"].is_object());
          for (const char* field : {"accuracy", "speedupOverCudnn", "registers", "occupancy"})
            ASSERT_TRUE(row[field].is_null() || row[field].is_number()) << field;
        }
      ++read;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(file.string(), 0), 0u) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_EQ(read + refused, 300);
}

}  // namespace
}  // namespace convscope
