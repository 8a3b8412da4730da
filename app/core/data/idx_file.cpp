#include "data/idx_file.h"

#include <zlib.h>

#include <fstream>
#include <limits>

#include "util/error.h"

namespace convscope {
namespace {

uint32_t readBigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string elementTypeName(uint8_t code) {
  switch (code) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return "unknown code " + std::to_string(code);
  }
}

std::vector<uint8_t> gunzip(const std::vector<uint8_t>& compressed, const std::string& name,
                            size_t maxBytes) {
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) throw Error(name + ": cannot start zlib");
  std::vector<uint8_t> out;
  std::vector<uint8_t> chunk(1 << 20);
  stream.next_in = const_cast<Bytef*>(compressed.data());
  stream.avail_in = static_cast<uInt>(compressed.size());
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    stream.next_out = chunk.data();
    stream.avail_out = static_cast<uInt>(chunk.size());
    status = inflate(&stream, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END) {
      inflateEnd(&stream);
      throw Error(name + ": corrupt or truncated gzip data (" +
                  (stream.msg ? std::string(stream.msg) : "unexpected end of data") + ")");
    }
    out.insert(out.end(), chunk.data(), chunk.data() + (chunk.size() - stream.avail_out));
    if (out.size() > maxBytes) {
      inflateEnd(&stream);
      throw Error(name + ": decompresses to more than " + std::to_string(maxBytes >> 20) +
                  " MiB, far larger than any image data set");
    }
    if (status == Z_OK && stream.avail_in == 0 && stream.avail_out != 0) {
      inflateEnd(&stream);
      throw Error(name + ": truncated gzip data (the compressed stream ends early)");
    }
  }
  inflateEnd(&stream);
  return out;
}

}  // namespace

std::vector<uint8_t> readMaybeGzippedFile(const std::filesystem::path& path, size_t maxBytes) {
  const std::string name = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(name + ": file not found");
  if (std::filesystem::is_directory(path, ec)) throw Error(name + ": is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(name + ": cannot be opened for reading");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(name + ": read error");
  if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) return gunzip(bytes, name, maxBytes);
  if (bytes.size() > maxBytes) throw Error(name + ": file is larger than any image data set");
  return bytes;
}

IdxArray parseIdx(const std::vector<uint8_t>& bytes, const std::string& name) {
  if (bytes.size() < 4)
    throw Error(name + ": too short for an IDX header (" + std::to_string(bytes.size()) + " bytes)");
  if (bytes[0] != 0 || bytes[1] != 0)
    throw Error(name + ": not an IDX file (the magic number must start with two zero bytes)");
  if (bytes[2] != 0x08)
    throw Error(name + ": IDX element type is " + elementTypeName(bytes[2]) +
                "; ConvScope reads unsigned-byte IDX files only");
  const int rank = bytes[3];
  if (rank < 1 || rank > 4)
    throw Error(name + ": IDX rank " + std::to_string(rank) + " is not 1 to 4");
  const size_t headerBytes = 4 + 4 * static_cast<size_t>(rank);
  if (bytes.size() < headerBytes)
    throw Error(name + ": truncated in the IDX header (" + std::to_string(bytes.size()) +
                " bytes, the header needs " + std::to_string(headerBytes) + ")");

  IdxArray array;
  uint64_t expected = 1;
  for (int i = 0; i < rank; ++i) {
    const uint32_t d = readBigEndian32(bytes.data() + 4 + 4 * i);
    if (d == 0) throw Error(name + ": IDX dimension " + std::to_string(i) + " is zero");
    // A dimension of 2^31 or more cannot be real data; reject it before multiplying.
    if (d > uint32_t{std::numeric_limits<int32_t>::max()} ||
        expected > std::numeric_limits<uint64_t>::max() / d)
      throw Error(name + ": absurd IDX dimension " + std::to_string(d));
    expected *= d;
    array.dims.push_back(d);
  }
  const uint64_t actual = bytes.size() - headerBytes;
  if (actual < expected)
    throw Error(name + ": truncated: the header promises " + std::to_string(expected) +
                " bytes of data but the file holds " + std::to_string(actual));
  if (actual > expected)
    throw Error(name + ": " + std::to_string(actual - expected) +
                " unexpected bytes after the data the header describes");
  array.values.assign(bytes.begin() + static_cast<std::ptrdiff_t>(headerBytes), bytes.end());
  return array;
}

IdxArray readIdxFile(const std::filesystem::path& path) {
  return parseIdx(readMaybeGzippedFile(path), path.string());
}

}  // namespace convscope
