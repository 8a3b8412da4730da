// A saved profile: the kernel table of one traced inference (kernel_table.h) with what it was
// measured on, as JSON (schema `convscope-profile/1`, docs/profile-json.md). `convscope-cli
// profile --json` writes it on a GPU machine; the GUI's Profile tab opens it anywhere.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "app/core/engine/kernel_table.h"

namespace convscope {

struct KernelProfile {
  std::string variant;  // registry id
  std::string model;    // model name
  std::string device;   // GPU name
  std::string date;     // ISO 8601, UTC
  int batch = 0;
  std::vector<KernelRow> rows;  // kernels first, then copies (kernelTable's order)
};

void writeKernelProfileJson(const KernelProfile& profile, const std::filesystem::path& path);
// Throws convscope::Error naming the file and what is wrong with it (not JSON, another schema,
// a missing or impossible field: negative times, min above max, a share outside 0..1).
KernelProfile readKernelProfileJson(const std::filesystem::path& path);

}  // namespace convscope
