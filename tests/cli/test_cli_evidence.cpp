// convscope-cli evidence as a user runs it: the class activation map where the model has one, the
// occlusion map for any model, both written as CSV and JSON that agree with what was printed, and
// a clear refusal, naming the problem, for every bad request.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_runner.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

using testing::runCli;
using testing::TempDir;

const std::string kModels = CONVSCOPE_MODELS_DIR;
const std::string kPicture = std::string(CONVSCOPE_TEST_DATA_DIR) + "/pictures/gray.png";

bool readsNoImages(const testing::CliOutcome& r) {
  return r.output.find("no OpenCV") != std::string::npos;
}

std::vector<std::vector<std::string>> readCsv(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream parts(line);
    for (std::string field; std::getline(parts, field, ',');) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

TEST(CliEvidence, AModelWithoutPoolingGetsItsOcclusionMapPrintedAndWrittenAsCsvAndJson) {
  TempDir dir;
  const std::string prefix = (dir.path() / "shirt").string();
  const testing::CliOutcome r = runCli("evidence --model '" + kModels + "/lenet5.onnx' --image '" + kPicture +
                                       "' --patch 5 --stride 3 --batch 7 --out '" + prefix + "'");
  if (readsNoImages(r)) GTEST_SKIP() << "this build reads no image files";
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("No class activation map: the model has no global average pooling"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Occlusion (a 5x5 grey patch every 3 pixels)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("81 pictures in 12 batches (7, 7, 7, 7, ...)"), std::string::npos) << r.output;

  std::ifstream in(prefix + ".json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  EXPECT_TRUE(summary.at("class_activation_map").is_null());
  const nlohmann::json& occlusion = summary.at("occlusion");
  EXPECT_EQ(occlusion.at("row_starts"), (std::vector<int>{0, 3, 6, 9, 12, 15, 18, 21, 23}));
  ASSERT_EQ(occlusion.at("drop").size(), 81u);
  // The printed top class is the one explained.
  EXPECT_NE(r.output.find("Evidence for " + summary.at("class_name").get<std::string>() + " (class " +
                          std::to_string(summary.at("class").get<int>()) + ","),
            std::string::npos)
      << r.output;

  // The pixel map at the model's input size: 28 rows of 28 values; the corner pixel lies under
  // the first patch only, the last one under the last patch only.
  const auto rows = readCsv(prefix + "-occlusion.csv");
  ASSERT_EQ(rows.size(), 28u);
  for (const auto& row : rows) ASSERT_EQ(row.size(), 28u);
  EXPECT_NEAR(std::stod(rows[0][0]), occlusion.at("drop").front().get<double>(), 1e-6);
  EXPECT_NEAR(std::stod(rows[27][27]), occlusion.at("drop").back().get<double>(), 1e-6);
}

TEST(CliEvidence, ChelseasActivationMapForANamedClassAddsUpToItsLogit) {
  const char* folder = std::getenv("CONVSCOPE_PHOTOS_DIR");
  const std::string photos = folder && *folder ? folder : "/usr/lib/python3/dist-packages/skimage/data";
  TempDir dir;
  const std::string prefix = (dir.path() / "chelsea").string();
  const testing::CliOutcome r =
      runCli("evidence --model '" + kModels + "/efficientnet-lite0.onnx' --variant cpu-onednn --image '" + photos +
             "/chelsea.png' --class 'Egyptian cat' --no-occlusion --out '" + prefix + "'");
  if (readsNoImages(r)) GTEST_SKIP() << "this build reads no image files";
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("Evidence for Egyptian cat (class 285,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Class activation map (7x7"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Occlusion ("), std::string::npos) << "--no-occlusion:\n" << r.output;
  std::ifstream in(prefix + ".json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  const nlohmann::json& cam = summary.at("class_activation_map");
  ASSERT_EQ(cam.at("values").size(), 49u);
  // The CSV is the map at 224 x 224, each of the 7 x 7 positions over 32 x 32 pixels.
  const auto rows = readCsv(prefix + "-cam.csv");
  ASSERT_EQ(rows.size(), 224u);
  for (int y : {0, 100, 223})
    for (int x : {0, 37, 223})
      EXPECT_NEAR(std::stod(rows[static_cast<size_t>(y)][static_cast<size_t>(x)]),
                  cam.at("values").at(static_cast<size_t>((y / 32) * 7 + x / 32)).get<double>(), 1e-5);
  char logit[64];
  std::snprintf(logit, sizeof logit, "mean + bias = %.4f, the logit", cam.at("logit").get<double>());
  EXPECT_NE(r.output.find(logit), std::string::npos) << r.output;
}

TEST(CliEvidence, BadRequestsAreRefusedNamingTheProblem) {
  const std::string lenet = "--model '" + kModels + "/lenet5.onnx' ";
  const std::string image = "--image '" + kPicture + "' ";
  TempDir dir;
  struct Case {
    std::string arguments;
    std::string expected;
    bool needsImages;
  };
  for (const Case& c : std::vector<Case>{
           {lenet, "evidence needs a picture: --image FILE", false},
           {lenet + "--image /no/such/shirt.png", "/no/such/shirt.png: file not found", false},
           {lenet + image + "--patch 0", "--patch", false},
           {lenet + image + "--no-occlusion --stride 3", "--stride is an occlusion option", false},
           {lenet + image + "--variant no-such-variant", "no-such-variant", false},
           {lenet + image + "--class 10", "--class 10: the model has 10 classes (0 to 9)", true},
           {lenet + image + "--class Jumper", "--class Jumper: no class of the model has that name", true},
           {lenet + image + "--patch 40", "a patch of 40 pixels does not fit a side of 28", true},
           {lenet + image + "--out '" + (dir.path() / "missing" / "x").string() + "'", "cannot be written", true},
       }) {
    SCOPED_TRACE(c.arguments);
    const testing::CliOutcome r = runCli("evidence " + c.arguments);
    EXPECT_NE(r.exitCode, 0) << r.output;
    if (c.needsImages && readsNoImages(r)) continue;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace convscope
