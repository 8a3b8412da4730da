// The check in two processes (conv_check.h): the kernel's process writes raw outputs to files, the
// checker regenerates the inputs and compares. These tests play the kernel's process with the CPU
// reference variant and then damage its files the ways a student's kernel or a dying process
// would: a wrong value, an element never written, a NaN, a file of the wrong size, a truncated
// file, a missing file. The expected values are checked against the values the correct variant
// wrote (an independent FP32 implementation), not against the checker itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "app/core/conv/conv_check.h"
#include "app/core/conv/cpu_backends.h"
#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/network_predictions.h"
#include "app/core/util/error.h"

namespace convscope {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kSeed = 20261126;

class IsolatedCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              ("convscope-isolated-check-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
    shapes_ = randomCheckShapes(kSeed, 6);
    // The kernel's half, run by a correct variant: one file per shape.
    const auto conv = createConvBackend("cpu-im2col-gemm");
    declined_ = runConvOnCheckShapes(*conv, shapes_, kSeed, {}, [&](size_t index, const std::vector<float>& output) {
      correct_[index] = output;
      writeCheckOutput(checkOutputFile(folder_, index), shapes_[index], output);
    });
  }
  void TearDown() override { fs::remove_all(folder_); }

  ConvCheckResult compare() const {
    return compareCheckOutputs(shapes_, kSeed, declined_, [&](size_t index) {
      return readCheckOutput(checkOutputFile(folder_, index), shapes_[index]);
    });
  }
  // Overwrites output element `flat` of shape `index`'s file with `value`, bits as given.
  void damage(size_t index, size_t flat, float value) const {
    std::vector<float> values = correct_.at(index);
    values.at(flat) = value;
    writeCheckOutput(checkOutputFile(folder_, index), shapes_[index], values);
  }
  // Output[n][m][h][w] of `p` as a flat index (NCHW).
  static size_t flatIndex(const ConvProblem& p, int n, int m, int h, int w) {
    return ((static_cast<size_t>(n) * p.outChannels + m) * p.outHeight() + h) * p.outWidth() + w;
  }

  fs::path folder_;
  std::vector<ConvProblem> shapes_;
  std::vector<std::string> declined_;
  std::map<size_t, std::vector<float>> correct_;
};

TEST_F(IsolatedCheck, ACorrectKernelsFilesPassAsTheInProcessCheckDoes) {
  ASSERT_EQ(correct_.size(), shapes_.size());
  for (size_t i = 0; i < shapes_.size(); ++i)
    EXPECT_EQ(fs::file_size(checkOutputFile(folder_, i)), static_cast<uintmax_t>(shapes_[i].outputElements() * 4));
  const ConvCheckResult split = compare();
  EXPECT_TRUE(split.passed()) << split.summary();
  EXPECT_EQ(split.checked.size(), shapes_.size());
  const auto conv = createConvBackend("cpu-im2col-gemm");
  EXPECT_EQ(split.summary(), checkConvAgainstReference(*conv, shapes_, kSeed).summary());
}

TEST_F(IsolatedCheck, AWrongValueIsFoundAtItsCoordinatesWithTheReferenceValue) {
  const size_t shape = 2;
  const ConvProblem& p = shapes_[shape];
  const int n = p.batch - 1, m = p.outChannels - 1, h = p.outHeight() / 2, w = p.outWidth() - 1;
  const size_t flat = flatIndex(p, n, m, h, w);
  const float right = correct_.at(shape)[flat];
  damage(shape, flat, right + 0.5f);
  const ConvCheckResult result = compare();
  ASSERT_TRUE(result.firstWrong) << result.summary();
  EXPECT_EQ(result.checked.size(), shape);  // the shapes before it passed
  const ConvMismatch& wrong = *result.firstWrong;
  EXPECT_EQ(wrong.problem.describe(), p.describe());
  EXPECT_EQ(std::tie(wrong.n, wrong.m, wrong.h, wrong.w), std::tie(n, m, h, w));
  EXPECT_EQ(wrong.got, right + 0.5f);
  // The checker's double-precision value agrees with the FP32 variant's within FP32 rounding.
  EXPECT_NEAR(wrong.expected, right, 1e-4 * (1.0 + std::fabs(right)));
  ASSERT_TRUE(result.failure);
  EXPECT_EQ(result.failure->n, n);
  EXPECT_EQ(result.failure->m, m);
  EXPECT_EQ(result.failure->bad(), 1);
  EXPECT_EQ(result.failure->shapeBad, 1);
  EXPECT_EQ(result.outcomes[shape].kind, ConvShapeOutcome::Kind::Failed);
  EXPECT_EQ(result.outcomes[shape + 1].kind, ConvShapeOutcome::Kind::NotRun);
}

TEST_F(IsolatedCheck, AnElementNeverWrittenKeepsThePoisonAndIsSaidSo) {
  const ConvProblem& p = shapes_[0];
  damage(0, flatIndex(p, 0, 0, 0, 0), unwrittenPoison());
  const ConvCheckResult result = compare();
  ASSERT_TRUE(result.firstWrong && result.failure);
  EXPECT_TRUE(isUnwrittenPoison(result.firstWrong->got));
  EXPECT_EQ(result.failure->at(0, 0), ElementVerdict::NeverWritten);
  EXPECT_EQ(result.failure->neverWritten, 1);
  EXPECT_NE(result.firstWrong->text().find("never written"), std::string::npos);
}

TEST_F(IsolatedCheck, AComputedNaNFailsAndIsToldFromThePoison) {
  const ConvProblem& p = shapes_[1];
  uint32_t bits = 0x7fffffff;  // the GPU's canonical NaN
  float nan = 0.0f;
  std::memcpy(&nan, &bits, sizeof nan);
  damage(1, flatIndex(p, 0, 0, p.outHeight() - 1, 0), nan);
  const ConvCheckResult result = compare();
  ASSERT_TRUE(result.firstWrong && result.failure);
  EXPECT_EQ(result.checked.size(), 1u);
  EXPECT_TRUE(std::isnan(result.firstWrong->got));
  EXPECT_EQ(result.failure->at(p.outHeight() - 1, 0), ElementVerdict::NotANumber);
  EXPECT_EQ(result.failure->notANumber, 1);
  EXPECT_EQ(result.failure->neverWritten, 0);
}

TEST_F(IsolatedCheck, AFileOfAnotherSizeIsRefusedByNameBeforeItIsRead) {
  // Shape 3's file replaced by shape 0's output: a file of another size.
  ASSERT_NE(shapes_[0].outputElements(), shapes_[3].outputElements());
  const fs::path file = checkOutputFile(folder_, 3);
  writeCheckOutput(file, shapes_[0], correct_.at(0));
  try {
    compare();
    FAIL() << "a file of the wrong size was compared";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(shapes_[0].outputElements() * 4) + " bytes"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(shapes_[3].outputElements() * 4) + " bytes"), std::string::npos) << message;
  }
}

TEST_F(IsolatedCheck, ATruncatedFileIsRefusedByName) {
  const fs::path file = checkOutputFile(folder_, 4);
  const auto full = fs::file_size(file);
  fs::resize_file(file, full - 3);
  try {
    compare();
    FAIL() << "a truncated file was compared";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    EXPECT_NE(message.find("holds " + std::to_string(full - 3) + " bytes"), std::string::npos) << message;
  }
}

TEST_F(IsolatedCheck, AMissingFileIsRefusedByName) {
  const fs::path file = checkOutputFile(folder_, 5);
  fs::remove(file);
  try {
    compare();
    FAIL() << "a missing file was compared";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string() + ": the kernel's output of"), std::string::npos) << e.what();
  }
}

TEST(IsolatedCheckDeclined, DeclinedShapesHaveNoFileAndTheOthersKeepTheirInputs) {
  // The declined shapes draw no inputs in either half, so the shapes after them are compared with
  // the values their kernel saw.
  const std::vector<ConvProblem> shapes = randomCheckShapes(5, 8);
  const auto strided = [](const ConvProblem& p) { return p.hasStride() ? std::string("strided") : std::string(); };
  const auto conv = createConvBackend("cpu-reference");
  std::map<size_t, std::vector<float>> outputs;
  const std::vector<std::string> declined = runConvOnCheckShapes(
      *conv, shapes, 5, strided, [&](size_t index, const std::vector<float>& output) { outputs[index] = output; });
  size_t declinedCount = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_EQ(declined[i].empty(), !shapes[i].hasStride());
    EXPECT_EQ(outputs.count(i), declined[i].empty() ? 1u : 0u);
    declinedCount += declined[i].empty() ? 0 : 1;
  }
  ASSERT_GT(declinedCount, 0u);
  const ConvCheckResult result =
      compareCheckOutputs(shapes, 5, declined, [&](size_t index) { return outputs.at(index); });
  EXPECT_TRUE(result.passed()) << result.summary();
  EXPECT_EQ(result.declined.size(), declinedCount);
  EXPECT_EQ(result.checked.size() + declinedCount, shapes.size());
}

TEST(NetworkPredictions, CountedAgainstTheLabelsImageByImage) {
  // 7 images, labels known for 6; the predictions right at images 0, 2, 3 and 6 (6 unlabelled).
  const std::vector<int> labels = {1, 2, 3, 4, 5, 6, ImageSet::kNoLabel};
  const std::vector<int32_t> predicted = {1, 0, 3, 4, 9, -1, 0};
  const ImageSet set("seven", 1, 1, std::vector<float>(7, 0.0f), labels, std::vector<std::string>(10, "c"));
  int correct = 0, labelled = 0;  // by hand, the obvious way
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] != ImageSet::kNoLabel) {
      ++labelled;
      correct += predicted[i] == labels[i];
    }
  const PredictionScore score = scorePredictions(predicted, set);
  EXPECT_EQ(score.correct, correct);
  EXPECT_EQ(score.correct, 3);
  EXPECT_EQ(score.labelled, labelled);
  EXPECT_DOUBLE_EQ(score.accuracy(), 3.0 / 6.0);
  EXPECT_THROW(scorePredictions({1, 2}, set), Error);
}

TEST(NetworkPredictions, TheFileRoundTripsAndAWrongSizeIsRefusedByName) {
  const fs::path file = fs::temp_directory_path() / "convscope-test-predictions.i32";
  const std::vector<int32_t> predicted = {3, 1, 4, 1, 5, 9, 2, 6, -1};
  writePredictions(file, predicted);
  EXPECT_EQ(fs::file_size(file), predicted.size() * 4);
  EXPECT_EQ(readPredictions(file, 9), predicted);
  for (const int count : {8, 10, 10000}) {
    try {
      readPredictions(file, count);
      ADD_FAILURE() << "read 9 predictions as " << count;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(file.string() + ": holds 36 bytes, but " + std::to_string(count) + " predictions are " +
                             std::to_string(count * 4) + " bytes"),
                std::string::npos)
          << message;
    }
  }
  fs::remove(file);
  try {
    readPredictions(file, 9);
    ADD_FAILURE() << "a missing file was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string() + ": the network's predictions are missing"), std::string::npos);
  }
}

}  // namespace
}  // namespace convscope
