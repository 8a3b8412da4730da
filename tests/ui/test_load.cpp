// Load: the window's live inference a thousand times while the user switches models, variants and
// pictures. Every answer must still be the reference's, and the process must not grow: its resident
// size at the end within a few per cent of its size after warm-up. On a GPU machine the GPU
// variants take their turns too.
#include <gtest/gtest.h>

#include <unistd.h>

#include <QCoreApplication>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/ui/ui_test_support.h"
#include "ui/model/variant_selector.h"

namespace convscope::testing {
namespace {

// Under AddressSanitizer the freed memory sits in its quarantine (resident by design) and every
// step is slower: the sanitizer build checks fewer answers and leaves the growth to LeakSanitizer.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kInferences = 150;
constexpr bool kMeasureGrowth = false;
#else
constexpr int kInferences = 1000;
constexpr bool kMeasureGrowth = true;
#endif

// Resident set size of this process, from the kernel's own count.
double residentMegabytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// The probabilities the CPU reference (double accumulation) gives a test image, computed here.
std::vector<float> referenceProbabilities(const std::shared_ptr<const Model>& model, const ImageSet& images,
                                          int index) {
  Engine engine(model, "cpu-reference");
  const InferenceResult result = engine.infer(images.batch(index, 1, model->inputHeight(), model->inputWidth()));
  return {result.probabilities.values().begin(), result.probabilities.values().end()};
}

TEST(Load, AThousandLiveInferencesWhileSwitchingKeepTheirAnswersAndTheirMemory) {
  auto window = openWindow();
  ASSERT_TRUE(waitForInference(*window));
  const std::vector<QString> models = {"course-high", "course-low", "lenet5"};
  std::vector<QString> variants;
  for (const ConvVariant& v : convVariants())
    if (v.unavailableReason().empty() && v.id != "cpu-reference") variants.push_back(QString::fromStdString(v.id));
  ASSERT_GE(variants.size(), 2u);
  const std::vector<int> pictures = {0, 1, 17, 42, 99, 256, 1000, 4321, 7777, 9999};

  // Warm-up: every model and variant once, so caches, plans and pools exist before measuring.
  for (const QString& model : models) {
    ASSERT_TRUE(loadModelAndWait(*window, modelPath(model.toUtf8().constData())));
    for (const QString& variant : variants) {
      ASSERT_TRUE(window->selectVariant(variant));
      ASSERT_TRUE(waitForInference(*window));
    }
  }
  const double warm = residentMegabytes();

  std::map<std::pair<std::string, int>, std::vector<float>> references;  // (model, picture)
  int checked = 0;
  for (int i = 0; i < kInferences; ++i) {
    if (i % 100 == 0)
      ASSERT_TRUE(loadModelAndWait(*window, modelPath(models[(i / 100) % models.size()].toUtf8().constData())));
    if (i % 7 == 0) ASSERT_TRUE(window->selectVariant(variants[(i / 7) % variants.size()]));
    const int picture = pictures[static_cast<size_t>(i) % pictures.size()];
    ASSERT_TRUE(window->selectTestImage(picture));
    ASSERT_TRUE(waitForInference(*window)) << "inference " << i;
    const auto outcome = window->inference()->lastOutcome();
    ASSERT_NE(outcome, nullptr) << "inference " << i;
    ASSERT_EQ(outcome->input.testIndex, picture) << "inference " << i;
    const std::string model = window->model()->name;
    ASSERT_EQ(outcome->modelName, model);
    auto& reference = references[{model, picture}];
    if (reference.empty()) reference = referenceProbabilities(window->model(), *window->testSet(), picture);
    ASSERT_EQ(outcome->probabilities.size(), reference.size());
    // TF32 tensor-core variants round their products to 10 bits: 2e-3 covers them; FP32 lands far below.
    const double tolerance = findConvVariant(outcome->variant).arithmetic == "FP32" ? 1e-4 : 2e-3;
    for (size_t c = 0; c < reference.size(); ++c)
      ASSERT_NEAR(outcome->probabilities[c], reference[c], tolerance)
          << "inference " << i << ": " << model << " with " << outcome->variant << ", picture " << picture << ", class "
          << c;
    ++checked;
  }
  EXPECT_EQ(checked, kInferences);
  QCoreApplication::processEvents();
  const double end = residentMegabytes();
  RecordProperty("resident_after_warmup_mb", std::to_string(warm));
  RecordProperty("resident_at_end_mb", std::to_string(end));
  std::cout << "resident size: " << warm << " MB after warm-up, " << end << " MB after " << kInferences
            << " inferences\n";
  if (kMeasureGrowth) EXPECT_LE(end, warm * 1.05 + 4.0) << "the window grows with every inference";
}

}  // namespace
}  // namespace convscope::testing
