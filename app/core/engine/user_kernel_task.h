// The child's half of a UserKernelJob (user_kernel_job.h): what the student's kernel does in its
// own process (`convscope-cli kernel run-isolated`), once its module is loaded as a row of the
// variant table. The parent compares and judges; this half only runs the kernel and writes what
// it produced: the expected values, the labels and the checks' positions never enter it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/core/conv/variant_table.h"

namespace convscope {

struct UserKernelTask {
  enum class Kind { Check, Network, Timing, Bench };
  Kind kind = Kind::Check;
  std::filesystem::path model;
  std::filesystem::path data;
  // check and network: the folder the parent made, where the kernel's raw outputs go.
  std::filesystem::path outputs;
  // bench: where the benchmark's JSON goes.
  std::filesystem::path benchJson;
  // The seeds, from a file only this user can read (never on a command line).
  uint64_t seed = 1;        // check: the shapes and values; timing: the repetitions' inputs
  uint64_t sampleSeed = 1;  // timing: the positions sampled after each repetition
  int shapes = 12;          // check: how many random shapes beside the model's own layers
  int samples = 64;         // timing: the positions sampled after each repetition
  int repeats = 10, warmups = 2;
  std::vector<int> batches = {100, 1000, 10000};
};

// "check", "network", "timing" or "bench". Throws convscope::Error naming the others.
UserKernelTask::Kind userKernelTaskKind(const std::string& name);

// Runs `task` with `row` (the student's kernel, installed), filling `result` ("stage", and what
// the task produced) and calling `save()` after each step, so that the parent knows how far it
// got when the kernel faults or never ends. `say` gets ConvScope's own lines (the kernel's printf
// goes to standard output). Throws on a failure; the caller records it.
void runUserKernelTask(const ConvVariant& row, const UserKernelTask& task, nlohmann::json& result,
                       const std::function<void()>& save, const std::function<void(const std::string&)>& say);

}  // namespace convscope
