// The names of a model's classes from a labels file: one name a line, in the order of the model's
// outputs -- the plain form in which ImageNet's 1,000 names and most published models' labels
// come. The CLI's `classify --labels` reads it; a model with many classes is then shown by name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace convscope {

// No labels file is read past this size (ImageNet's 21,843 names take about 500 kB).
inline constexpr uint64_t kLabelsFileMaxBytes = 16u << 20;
// Nor does it name more classes than this (no classifier ConvScope runs has more outputs).
inline constexpr size_t kMaxClassNames = 100000;

// The names, line by line. A line ending in CR LF counts as one ending in LF, and the last line
// needs no line end; a name keeps its inner spaces and commas ("tench, Tinca tinca"). Refused,
// naming the file and the line: an empty or blank line (it would shift every later name), a NUL
// byte or bytes that are not UTF-8 (a binary file given by mistake), more than kMaxClassNames
// names, and a file with none.
std::vector<std::string> readLabelsFile(const std::filesystem::path& path);

}  // namespace convscope
