// The IDX format of MNIST and Fashion-MNIST: a big-endian header (magic, element type, rank,
// dimensions) followed by the raw elements. ConvScope reads unsigned-byte files, gzipped or not,
// and validates every header field against the file's real length before allocating anything.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace convscope {

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> values;
};

// Parses IDX bytes already in memory; `name` is used in error messages.
IdxArray parseIdx(const std::vector<uint8_t>& bytes, const std::string& name);

// Reads a file (transparently gunzipping it when it starts with the gzip magic) and parses it.
// Throws convscope::Error naming the file and the problem.
IdxArray readIdxFile(const std::filesystem::path& path);

// Reads a whole file, gunzipping it if needed. Refuses decompressed data over `maxBytes`.
std::vector<uint8_t> readMaybeGzippedFile(const std::filesystem::path& path,
                                          size_t maxBytes = size_t{1} << 30);

}  // namespace convscope
