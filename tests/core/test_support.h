// Small helpers shared by the tests: temporary files, expected-error assertions, and the skip of a
// GPU test that the GPU machine turns into a failure.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "app/core/engine/submitted_kernel.h"
#include "app/core/util/error.h"

namespace convscope::testing {

// Whether every GPU test must run here: scripts/device.sh sets CONVSCOPE_REQUIRE_GPU=1 on the GPU
// machine, where a GPU test that skipped would pass having checked nothing.
inline bool gpuRequired() {
  const char* value = std::getenv("CONVSCOPE_REQUIRE_GPU");
  return value && *value && std::string(value) != "0";
}

// GTEST_SKIP() for what a GPU test needs and this machine or build lacks (a usable GPU, CUDA, the
// kernel compiler): a skip that says why, or, where CONVSCOPE_REQUIRE_GPU=1, a failure that says
// the same. Used as GTEST_SKIP() is: `GPU_TEST_SKIP() << "no GPU: " << reason;`. A test that skips
// because a GPU *is* here (its subject is the path without one) keeps GTEST_SKIP().
// (GTEST_MESSAGE_ is how GoogleTest writes GTEST_SKIP and GTEST_FAIL: one of the two, chosen here
// at run time, with the caller's message streamed after it.)
#define GPU_TEST_SKIP()                                                                                  \
  return GTEST_MESSAGE_(::convscope::testing::gpuRequired()                                              \
                            ? "CONVSCOPE_REQUIRE_GPU is set: this GPU test must run here, and it cannot" \
                            : "",                                                                        \
                        ::convscope::testing::gpuRequired() ? ::testing::TestPartResult::kFatalFailure   \
                                                            : ::testing::TestPartResult::kSkip)

// A fresh folder under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::random_device seed;
    path_ = std::filesystem::temp_directory_path() / ("convscope-test-" + std::to_string(seed()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::vector<uint8_t>& bytes) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return file;
  }

 private:
  std::filesystem::path path_;
};

// Runs `action`, which must throw convscope::Error whose message contains every fragment.
template <typename Action>
void expectError(Action action, const std::vector<std::string>& fragments) {
  try {
    action();
    ADD_FAILURE() << "no error was raised";
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const std::string& fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos) << "message: " << message << "\nmissing: " << fragment;
  }
}

// A kernel as the sandboxed compiler leaves it (submitted_kernel.h), for jobs whose child is a
// stand-in script: nothing is compiled; the private folder is made, and removed with it.
inline std::shared_ptr<const SubmittedKernel> stubSubmittedKernel(const std::string& studentFile) {
  auto kernel = std::make_shared<SubmittedKernel>();
  std::random_device seed;
  kernel->studentFile = studentFile;
  kernel->folder = std::filesystem::temp_directory_path() / ("convscope-test-submitted-" + std::to_string(seed()));
  std::filesystem::create_directories(kernel->folder);
  kernel->compiled.loweredName = "convscope_conv";
  kernel->compiled.image = {'\x7f', 'E', 'L', 'F'};
  return kernel;
}

}  // namespace convscope::testing
