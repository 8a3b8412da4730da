// The IDX format of MNIST and Fashion-MNIST: a big-endian header (magic, element type, rank,
// dimensions) followed by the raw elements. ConvScope reads unsigned-byte files, gzipped or not.
// The header is read first and checked -- against the file's real length for a plain file, and
// against kMaxIdxDataBytes for both -- before the data it declares is allocated or inflated.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace convscope {

// The most data (the product of the dimensions, in bytes) an IDX file may declare: 256 MiB,
// over five times the Fashion-MNIST training set (47 MB), which still leaves the float copy the
// data set makes of it (4 bytes per pixel, 1 GiB) within an ordinary machine's memory.
constexpr uint64_t kMaxIdxDataBytes = uint64_t{256} << 20;

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> values;
};

// Parses IDX bytes already in memory; `name` is used in error messages.
IdxArray parseIdx(const std::vector<uint8_t>& bytes, const std::string& name);

// Reads a file (gunzipping it as a stream when it starts with the gzip magic) and parses it.
// Refuses anything that is not a regular file (a folder, /dev/zero, a FIFO, a link loop).
// Throws convscope::Error naming the file and the problem.
IdxArray readIdxFile(const std::filesystem::path& path);

}  // namespace convscope
