// The confusion matrix of a classification run: each labelled image counted once, in the cell of
// its true and predicted class, with its position kept; per-class accuracy; bad labels refused.
// Checked against counts made here image by image on a run with every kind of case.
#include <gtest/gtest.h>

#include <random>

#include "app/core/data/image_set.h"
#include "app/core/engine/confusion.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

ClassificationRun randomRun(int images, int classes, unsigned seed) {
  std::mt19937 random(seed);
  ClassificationRun run;
  for (int i = 0; i < images; ++i) {
    ImageClassification c;
    c.index = 100 + i;
    c.label = std::uniform_int_distribution<int>(0, classes - 1)(random);
    // Mostly right, as a trained model is; an unlabelled image now and then.
    c.predicted = random() % 4 ? c.label : std::uniform_int_distribution<int>(0, classes - 1)(random);
    if (i % 37 == 5) c.label = ImageSet::kNoLabel;
    run.images.push_back(c);
  }
  return run;
}

TEST(Confusion, CountsEveryLabelledImageOnceInItsCell) {
  const int classes = 7;
  const ClassificationRun run = randomRun(1001, classes, 11);
  const ConfusionMatrix matrix(run, classes);
  std::vector<int> expected(classes * classes, 0);
  int labelled = 0, correct = 0;
  for (const ImageClassification& c : run.images) {
    if (c.label == ImageSet::kNoLabel) continue;
    ++expected[static_cast<size_t>(c.label * classes + c.predicted)];
    ++labelled;
    correct += c.label == c.predicted;
  }
  int sum = 0;
  for (int t = 0; t < classes; ++t)
    for (int p = 0; p < classes; ++p) {
      EXPECT_EQ(matrix.count(t, p), expected[static_cast<size_t>(t * classes + p)]);
      sum += matrix.count(t, p);
      for (int position : matrix.cell(t, p)) {
        EXPECT_EQ(run.images[static_cast<size_t>(position)].label, t);
        EXPECT_EQ(run.images[static_cast<size_t>(position)].predicted, p);
      }
    }
  EXPECT_EQ(sum, labelled);
  EXPECT_EQ(matrix.total(), labelled);
  EXPECT_LT(labelled, 1001);  // the unlabelled ones are left out
  EXPECT_EQ(matrix.correct(), correct);
  EXPECT_DOUBLE_EQ(matrix.accuracy(), static_cast<double>(correct) / labelled);
  for (int t = 0; t < classes; ++t) {
    int rowTotal = 0;
    for (int p = 0; p < classes; ++p) rowTotal += expected[static_cast<size_t>(t * classes + p)];
    EXPECT_EQ(matrix.classTotal(t), rowTotal);
    EXPECT_DOUBLE_EQ(matrix.classAccuracy(t),
                     rowTotal ? static_cast<double>(expected[static_cast<size_t>(t * classes + t)]) / rowTotal : 0.0);
  }
}

TEST(Confusion, AClassWithoutImagesHasAccuracyZeroNotADivisionByZero) {
  ClassificationRun run;
  run.images.push_back({0, 1, 1, {}});
  const ConfusionMatrix matrix(run, 3);
  EXPECT_EQ(matrix.classTotal(0), 0);
  EXPECT_EQ(matrix.classAccuracy(0), 0.0);
  EXPECT_EQ(matrix.classAccuracy(1), 1.0);
}

TEST(Confusion, ALabelOrPredictionOutsideTheClassesIsRefusedNamingTheImage) {
  ClassificationRun run;
  run.images.push_back({42, 3, 0, {}});
  testing::expectError([&] { ConfusionMatrix(run, 3); }, {"image #42", "label 3", "3 classes"});
  run.images[0] = {43, 0, -1, {}};
  testing::expectError([&] { ConfusionMatrix(run, 3); }, {"image #43", "prediction -1"});
  const ConfusionMatrix empty(ClassificationRun{}, 2);
  testing::expectError([&] { (void)empty.cell(2, 0); }, {"(2, 0)"});
  testing::expectError([&] { ConfusionMatrix(ClassificationRun{}, 0); }, {"at least one class"});
}

}  // namespace
}  // namespace convscope
