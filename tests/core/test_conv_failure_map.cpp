// Where a student's kernel is wrong, without a GPU: one output map classified element by element
// (ok, wrong, never written, NaN), its counts, its worst elements and the rows and columns that
// hold bad elements as ranges, on synthetic maps with the patterns students' bugs leave (a stride
// ignored, a left column missing, rows past the 8th of each tile never written, NaNs), each
// against what the test computes on its own; and the check keeping the failing map.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "app/core/conv/conv_check.h"
#include "app/core/conv/conv_failure_map.h"
#include "app/core/conv/cpu_backends.h"

namespace convscope {
namespace {

// An expected map of random values, the tolerance 1e-3 everywhere, and an actual map equal to it.
struct SyntheticMap {
  int height, width;
  std::vector<double> expected, allowed;
  std::vector<float> actual;
  SyntheticMap(int h, int w) : height(h), width(w) {
    std::mt19937 rng(static_cast<unsigned>(h * 1000 + w));
    std::uniform_real_distribution<float> value(-4.0f, 4.0f);
    for (int i = 0; i < h * w; ++i) {
      actual.push_back(value(rng));
      expected.push_back(actual.back());
      allowed.push_back(1e-3);
    }
  }
  float& at(int h, int w) { return actual[static_cast<size_t>(h) * width + w]; }
  ConvFailureMap classify(int worst = 10) const {
    ConvProblem p;
    p.inHeight = height;
    p.inWidth = width;
    return classifyOutputMap(p, 0, 0, height, width, expected, allowed, actual, worst);
  }
};

// The rows as the test writes them out by hand from a predicate, independently of
// describeIndexRanges: each maximal run "a-b" (or "a").
std::string rangesByHand(int count, const std::function<bool(int)>& flagged) {
  std::string text;
  int start = -1;
  for (int i = 0; i <= count; ++i) {
    const bool on = i < count && flagged(i);
    if (on && start < 0) start = i;
    if (!on && start >= 0) {
      if (!text.empty()) text.append(", ");
      text.append(std::to_string(start));
      if (i - 1 > start) text.append("-").append(std::to_string(i - 1));
      start = -1;
    }
  }
  return text;
}

TEST(FailureRanges, RunsOfFlaggedIndices) {
  EXPECT_EQ(describeIndexRanges({}), "none");
  EXPECT_EQ(describeIndexRanges({false, false}), "none");
  EXPECT_EQ(describeIndexRanges({true, true, true}), "all");
  EXPECT_EQ(describeIndexRanges({false, true, true, true, false, true}), "1-3, 5");
  EXPECT_EQ(describeIndexRanges({true, false, false, false}), "0");
  EXPECT_EQ(describeIndexRanges({false, false, true, true}), "2-3");
}

TEST(FailureMap, ThePoisonIsToldFromAComputedNaN) {
  EXPECT_TRUE(std::isnan(unwrittenPoison()));
  EXPECT_TRUE(isUnwrittenPoison(unwrittenPoison()));
  EXPECT_FALSE(isUnwrittenPoison(std::bit_cast<float>(0x7fffffffu)));  // the GPU's canonical NaN
  EXPECT_FALSE(isUnwrittenPoison(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_FALSE(isUnwrittenPoison(0.0f));
}

TEST(FailureMap, RowsPastTheEighthOfEachTileNeverWritten) {
  // A 16-row tile computed by a block of 8 rows that does not loop: rows 8-15 of each tile keep
  // the poison. 37 rows: tiles 0-15, 16-31, 32-36 (whose rows are all below 8 within the tile).
  SyntheticMap s(37, 29);
  int unwritten = 0;
  for (int h = 0; h < s.height; ++h)
    if (h % 16 >= 8) {
      for (int w = 0; w < s.width; ++w) s.at(h, w) = unwrittenPoison();
      unwritten += s.width;
    }
  const ConvFailureMap map = s.classify();
  EXPECT_EQ(map.neverWritten, unwritten);
  EXPECT_EQ(map.wrong, 0);
  EXPECT_EQ(map.notANumber, 0);
  EXPECT_EQ(map.total(), 37 * 29);
  EXPECT_EQ(map.badRows(), rangesByHand(37, [](int h) { return h % 16 >= 8; }));
  EXPECT_EQ(map.badRows(), "8-15, 24-31");
  EXPECT_EQ(map.badColumns(), "all");
  for (int h = 0; h < s.height; ++h)
    EXPECT_EQ(map.at(h, 3), h % 16 >= 8 ? ElementVerdict::NeverWritten : ElementVerdict::Ok) << h;
  EXPECT_NE(map.text().find("rows 8-15, 24-31; all columns"), std::string::npos) << map.text();
  ASSERT_EQ(map.worst.size(), 10u);  // the first ten in row-major order: row 8
  EXPECT_EQ(map.worst[0].h, 8);
  EXPECT_EQ(map.worst[0].w, 0);
  EXPECT_EQ(map.worst[9].w, 9);
}

TEST(FailureMap, AMissingLeftColumn) {
  // Forgetting the left padding: column 0's window loses its left taps, so column 0 is off.
  SyntheticMap s(12, 9);
  for (int h = 0; h < s.height; ++h) s.at(h, 0) += 0.5f + h;
  const ConvFailureMap map = s.classify(3);
  EXPECT_EQ(map.wrong, s.height);
  EXPECT_EQ(map.neverWritten, 0);
  EXPECT_EQ(map.badRows(), "all");
  EXPECT_EQ(map.badColumns(), "0");
  EXPECT_NE(map.text().find("all rows; columns 0"), std::string::npos) << map.text();
  // The worst: the largest differences, 11.5 at row 11, then 10.5, then 9.5.
  ASSERT_EQ(map.worst.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(map.worst[i].h, 11 - i);
    EXPECT_EQ(map.worst[i].w, 0);
    EXPECT_EQ(map.worst[i].verdict, ElementVerdict::Wrong);
    EXPECT_NEAR(map.worst[i].got - map.worst[i].expected, 11.5 - i, 1e-5);
  }
}

TEST(FailureMap, AStrideIgnoredLeavesOnlyTheOriginRight) {
  // A kernel that reads input (h, w) for output (h, w) of a stride-2 layer: only the window at
  // the origin is the one it should be. The test's own reference decides each element.
  ConvProblem p;
  p.inHeight = 15;
  p.inWidth = 11;
  p.kernelHeight = p.kernelWidth = 3;
  p.strideHeight = p.strideWidth = 2;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(p.inputElements())), k(9);
  for (float& v : x) v = value(rng);
  for (float& v : k) v = value(rng);
  const int H = p.outHeight(), W = p.outWidth();
  const auto window = [&](int top, int left) {
    double sum = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) sum += double{x[(top + i) * p.inWidth + left + j]} * k[i * 3 + j];
    return sum;
  };
  std::vector<double> expected, allowed;
  std::vector<float> actual;
  int wrongByHand = 0;
  for (int h = 0; h < H; ++h)
    for (int w = 0; w < W; ++w) {
      expected.push_back(window(2 * h, 2 * w));
      actual.push_back(static_cast<float>(window(h, w)));
      allowed.push_back(1e-4);
      wrongByHand += std::fabs(actual.back() - expected.back()) > 1e-4;
    }
  const ConvFailureMap map = classifyOutputMap(p, 0, 0, H, W, expected, allowed, actual);
  EXPECT_EQ(map.at(0, 0), ElementVerdict::Ok);
  EXPECT_EQ(map.wrong, wrongByHand);
  EXPECT_EQ(map.wrong, H * W - 1);  // random data: every other window differs
  EXPECT_EQ(map.badRows(), "all");
  EXPECT_EQ(map.badColumns(), "all");
}

TEST(FailureMap, NaNsInfinitiesAndThePoisonEachHaveTheirVerdict) {
  SyntheticMap s(4, 5);
  s.at(0, 1) = std::bit_cast<float>(0x7fffffffu);  // computed NaN
  s.at(1, 2) = unwrittenPoison();
  s.at(2, 3) = std::numeric_limits<float>::infinity();
  s.at(3, 4) += 0.25f;
  s.at(3, 0) += 0.0005f;  // within the tolerance
  const ConvFailureMap map = s.classify();
  EXPECT_EQ(map.at(0, 1), ElementVerdict::NotANumber);
  EXPECT_EQ(map.at(1, 2), ElementVerdict::NeverWritten);
  EXPECT_EQ(map.at(2, 3), ElementVerdict::Wrong);
  EXPECT_EQ(map.at(3, 4), ElementVerdict::Wrong);
  EXPECT_EQ(map.at(3, 0), ElementVerdict::Ok);
  EXPECT_EQ(map.wrong, 2);
  EXPECT_EQ(map.notANumber, 1);
  EXPECT_EQ(map.neverWritten, 1);
  EXPECT_EQ(map.bad(), 4);
  EXPECT_EQ(map.badRows(), "all");
  EXPECT_EQ(map.badColumns(), "1-4");
  // Numbers first (infinity the worst), then the NaN, then the never written element.
  ASSERT_EQ(map.worst.size(), 4u);
  EXPECT_EQ(map.worst[0].h, 2);
  EXPECT_EQ(map.worst[1].h, 3);
  EXPECT_EQ(map.worst[2].verdict, ElementVerdict::NotANumber);
  EXPECT_EQ(map.worst[3].verdict, ElementVerdict::NeverWritten);
}

TEST(FailureMap, JsonRoundTripKeepsEveryVerdictAndThePoison) {
  SyntheticMap s(3, 4);
  s.at(0, 0) = unwrittenPoison();
  s.at(1, 1) = std::bit_cast<float>(0x7fffffffu);
  s.at(2, 2) = -std::numeric_limits<float>::infinity();
  s.at(2, 3) += 1.0f;
  const ConvFailureMap map = s.classify();
  const nlohmann::json j = failureMapToJson(map);
  EXPECT_TRUE(j["actual"][0].is_null());
  EXPECT_EQ(j["counts"]["bad"], 4);
  EXPECT_EQ(j["badColumns"], map.badColumns());
  const ConvFailureMap back = failureMapFromJson(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.verdicts, map.verdicts);
  EXPECT_TRUE(isUnwrittenPoison(back.actual[0]));
  EXPECT_TRUE(std::isnan(back.actual[5]) && !isUnwrittenPoison(back.actual[5]));
  EXPECT_EQ(back.actual[10], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(back.actual[11], map.actual[11]);
  EXPECT_EQ(back.expected, map.expected);
  EXPECT_EQ(back.wrong, map.wrong);
  EXPECT_EQ(back.worst.size(), map.worst.size());
  EXPECT_EQ(back.text(), map.text());
  nlohmann::json broken = j;
  broken["verdicts"].erase(0);
  EXPECT_THROW(failureMapFromJson(broken), nlohmann::json::exception);
}

// Leaves rows 8 and up of every output map unwritten (a block of 8 rows on a 16-row tile, no
// loop), the rest from the reference.
class WritesEightRowsConv final : public ConvBackend {
 public:
  void forward(const ConvProblem& p, const float* input, const float* weights, float* output) override {
    std::vector<float> all(static_cast<size_t>(p.outputElements()));
    reference_->forward(p, input, weights, all.data());
    for (size_t i = 0; i < all.size(); ++i)
      if ((i / p.outWidth()) % p.outHeight() % 16 < 8) output[i] = all[i];
  }

 private:
  std::unique_ptr<ConvBackend> reference_ = createConvBackend("cpu-reference");
};

TEST(FailureMap, TheCheckKeepsTheFailingMapOfItsFirstWrongElement) {
  ConvProblem p;
  p.batch = 2;
  p.outChannels = 3;
  p.inHeight = 29;
  p.inWidth = 13;
  p.kernelHeight = p.kernelWidth = 3;
  p.padTop = p.padBottom = p.padLeft = p.padRight = 1;
  WritesEightRowsConv conv;
  const ConvCheckResult result = checkConvAgainstReference(conv, {p}, 11);
  ASSERT_TRUE(result.firstWrong);
  ASSERT_TRUE(result.failure);
  const ConvFailureMap& map = *result.failure;
  EXPECT_EQ(map.n, 0);
  EXPECT_EQ(map.m, 0);
  EXPECT_EQ(result.firstWrong->h, 8);
  EXPECT_EQ(map.height, 29);
  // 29 rows: rows 8-15 and 24-28 (8 + 5 rows) of each map keep the poison.
  EXPECT_EQ(map.badRows(), "8-15, 24-28");
  EXPECT_EQ(map.badColumns(), "all");
  EXPECT_EQ(map.neverWritten, (8 + 5) * 13);
  EXPECT_EQ(map.wrong, 0);
  EXPECT_EQ(map.shapeBad, int64_t{8 + 5} * 13 * p.batch * p.outChannels);
  EXPECT_EQ(map.shapeTotal, p.outputElements());
  EXPECT_NE(result.firstWrong->text().find("never written"), std::string::npos);
}

}  // namespace
}  // namespace convscope
