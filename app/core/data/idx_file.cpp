#include "app/core/data/idx_file.h"
#include <algorithm>

#include <zlib.h>

#include <cstring>
#include <limits>
#include <memory>

#include "app/core/util/error.h"
#include "app/core/util/input_file.h"

namespace convscope {
namespace {

uint32_t readBigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string elementTypeName(uint8_t code) {
  switch (code) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "int16";
    case 0x0C:
      return "int32";
    case 0x0D:
      return "float32";
    case 0x0E:
      return "float64";
    default:
      return "unknown code " + std::to_string(code);
  }
}

// Where the parser takes its bytes from: memory, a plain file or a gzip stream. `read` fills as
// much of the buffer as there is data for and returns the count (fewer only at the end).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual size_t read(uint8_t* buffer, size_t count) = 0;
  // The bytes left after the header when the source knows them without reading (a plain file or
  // memory), so that a header promising more than exists is refused before allocating.
  virtual bool knowsRemaining(uint64_t& remaining) const = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  size_t read(uint8_t* buffer, size_t count) override {
    const size_t n = std::min(count, bytes_.size() - position_);
    if (n) std::memcpy(buffer, bytes_.data() + position_, n);
    position_ += n;
    return n;
  }
  bool knowsRemaining(uint64_t& remaining) const override {
    remaining = bytes_.size() - position_;
    return true;
  }

 private:
  const std::vector<uint8_t>& bytes_;
  size_t position_ = 0;
};

class PlainFileSource final : public ByteSource {
 public:
  PlainFileSource(InputFile& file, std::vector<uint8_t> start) : file_(file), start_(std::move(start)) {}
  size_t read(uint8_t* buffer, size_t count) override {
    size_t n = std::min(count, start_.size() - used_);
    if (n) std::memcpy(buffer, start_.data() + used_, n);
    used_ += n;
    if (n < count) n += file_.read(buffer + n, count - n);
    position_ += n;
    return n;
  }
  bool knowsRemaining(uint64_t& remaining) const override {
    remaining = file_.size() - position_;
    return true;
  }

 private:
  InputFile& file_;
  std::vector<uint8_t> start_;  // the bytes already read to recognise the format
  size_t used_ = 0;
  uint64_t position_ = 0;
};

// Inflates as it is read, so no more is ever inflated than the parser asks for: a bomb is
// refused by its header before its data is touched.
class GzipSource final : public ByteSource {
 public:
  GzipSource(InputFile& file, std::vector<uint8_t> start) : file_(file), input_(std::move(start)) {
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) throw Error(file_.name() + ": cannot start zlib");
    stream_.next_in = input_.data();
    stream_.avail_in = static_cast<uInt>(input_.size());
  }
  ~GzipSource() override { inflateEnd(&stream_); }

  size_t read(uint8_t* buffer, size_t count) override {
    size_t produced = 0;
    while (produced < count && !ended_) {
      if (stream_.avail_in == 0) {
        input_.resize(1 << 16);
        const size_t n = file_.read(input_.data(), input_.size());
        if (n == 0) throw Error(file_.name() + ": truncated gzip data (the compressed stream ends early)");
        stream_.next_in = input_.data();
        stream_.avail_in = static_cast<uInt>(n);
      }
      const size_t want = std::min<size_t>(count - produced, std::numeric_limits<uInt>::max());
      stream_.next_out = buffer + produced;
      stream_.avail_out = static_cast<uInt>(want);
      const int status = inflate(&stream_, Z_NO_FLUSH);
      produced += want - stream_.avail_out;
      if (status == Z_STREAM_END) {
        ended_ = true;
      } else if (status != Z_OK && !(status == Z_BUF_ERROR && stream_.avail_in == 0)) {
        throw Error(file_.name() + ": corrupt gzip data (" +
                    (stream_.msg ? std::string(stream_.msg) : "zlib error " + std::to_string(status)) + ")");
      }
    }
    return produced;
  }
  bool knowsRemaining(uint64_t&) const override { return false; }

 private:
  InputFile& file_;
  std::vector<uint8_t> input_;
  z_stream stream_{};
  bool ended_ = false;
};

std::string dimsText(const std::vector<int64_t>& dims) {
  std::string text;
  for (int64_t d : dims) text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

IdxArray parse(ByteSource& source, const std::string& name) {
  uint8_t magic[4];
  const size_t got = source.read(magic, 4);
  if (got < 4) throw Error(name + ": too short for an IDX header (" + std::to_string(got) + " bytes)");
  if (magic[0] != 0 || magic[1] != 0)
    throw Error(name + ": not an IDX file (the magic number must start with two zero bytes)");
  if (magic[2] != 0x08)
    throw Error(name + ": IDX element type is " + elementTypeName(magic[2]) +
                "; ConvScope reads unsigned-byte IDX files only");
  const int rank = magic[3];
  if (rank < 1 || rank > 4) throw Error(name + ": IDX rank " + std::to_string(rank) + " is not 1 to 4");
  const size_t headerBytes = 4 + 4 * static_cast<size_t>(rank);
  uint8_t dimBytes[16];
  const size_t dimGot = source.read(dimBytes, 4 * static_cast<size_t>(rank));
  if (dimGot < 4 * static_cast<size_t>(rank))
    throw Error(name + ": truncated in the IDX header (" + std::to_string(4 + dimGot) + " bytes, the header needs " +
                std::to_string(headerBytes) + ")");

  IdxArray array;
  uint64_t expected = 1;
  for (int i = 0; i < rank; ++i) {
    const uint32_t d = readBigEndian32(dimBytes + 4 * i);
    if (d == 0) throw Error(name + ": IDX dimension " + std::to_string(i) + " is zero");
    // A dimension of 2^31 or more cannot be real data; reject it before multiplying.
    if (d > uint32_t{std::numeric_limits<int32_t>::max()} || expected > std::numeric_limits<uint64_t>::max() / d)
      throw Error(name + ": absurd IDX dimension " + std::to_string(d));
    expected *= d;
    array.dims.push_back(d);
  }
  if (expected > kMaxIdxDataBytes)
    throw Error(name + ": the header declares " + dimsText(array.dims) + " = " + formatBytes(expected) +
                " of data; ConvScope's limit for an IDX file is " + formatBytes(kMaxIdxDataBytes) +
                " (kMaxIdxDataBytes)");
  if (uint64_t remaining = 0; source.knowsRemaining(remaining)) {
    if (remaining < expected)
      throw Error(name + ": truncated: the header promises " + std::to_string(expected) +
                  " bytes of data but the file holds " + std::to_string(remaining));
    if (remaining > expected)
      throw Error(name + ": " + std::to_string(remaining - expected) +
                  " unexpected bytes after the data the header describes");
  }
  // Read in chunks, the array growing with what arrives: a compressed file's length is unknown
  // until it is inflated, and 30 bytes of gzip that claim 256 MB must not take 256 MB to refuse
  // (the IDX fuzzer found one).
  constexpr uint64_t kChunkBytes = uint64_t{4} << 20;
  uint64_t read = 0;
  while (read < expected) {
    const uint64_t want = std::min(kChunkBytes, expected - read);
    array.values.resize(static_cast<size_t>(read + want));
    const size_t got = source.read(array.values.data() + read, static_cast<size_t>(want));
    read += got;
    if (got < want) break;
  }
  if (read < expected)
    throw Error(name + ": truncated: the header promises " + std::to_string(expected) +
                " bytes of data but the file holds " + std::to_string(read));
  uint8_t extra = 0;
  if (source.read(&extra, 1) != 0)
    throw Error(name + ": unexpected bytes after the data the header describes (" + std::to_string(expected) +
                " bytes)");
  return array;
}

}  // namespace

IdxArray parseIdx(const std::vector<uint8_t>& bytes, const std::string& name) {
  MemorySource source(bytes);
  return parse(source, name);
}

IdxArray readIdxFile(const std::filesystem::path& path) {
  // No limit on the file's size here: the header's declared size is checked against
  // kMaxIdxDataBytes, and then against the file's size, before the data is read.
  InputFile file(path, "an IDX file", std::numeric_limits<uint64_t>::max());
  std::vector<uint8_t> start(2);
  start.resize(file.read(start.data(), start.size()));
  if (start.size() == 2 && start[0] == 0x1f && start[1] == 0x8b) {
    GzipSource source(file, std::move(start));
    return parse(source, file.name());
  }
  PlainFileSource source(file, std::move(start));
  return parse(source, file.name());
}

}  // namespace convscope
