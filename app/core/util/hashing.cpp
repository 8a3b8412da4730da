#include "app/core/util/hashing.h"

#include <cstdio>
#include <fstream>

#include "app/core/util/error.h"

namespace convscope {
namespace {

uint64_t rotl(uint64_t x, int b) {
  return (x << b) | (x >> (64 - b));
}

void sipRound(uint64_t& v0, uint64_t& v1, uint64_t& v2, uint64_t& v3) {
  v0 += v1;
  v1 = rotl(v1, 13);
  v1 ^= v0;
  v0 = rotl(v0, 32);
  v2 += v3;
  v3 = rotl(v3, 16);
  v3 ^= v2;
  v0 += v3;
  v3 = rotl(v3, 21);
  v3 ^= v0;
  v2 += v1;
  v1 = rotl(v1, 17);
  v1 ^= v2;
  v2 = rotl(v2, 32);
}

}  // namespace

uint64_t sipHash24(const std::string& data, uint64_t key0, uint64_t key1) {
  uint64_t v0 = 0x736f6d6570736575ULL ^ key0, v1 = 0x646f72616e646f6dULL ^ key1;
  uint64_t v2 = 0x6c7967656e657261ULL ^ key0, v3 = 0x7465646279746573ULL ^ key1;
  const size_t length = data.size();
  const auto byte = [&](size_t i) { return uint64_t(static_cast<unsigned char>(data[i])); };
  size_t i = 0;
  for (; i + 8 <= length; i += 8) {
    uint64_t m = 0;
    for (int b = 0; b < 8; ++b) m |= byte(i + b) << (8 * b);
    v3 ^= m;
    sipRound(v0, v1, v2, v3);
    sipRound(v0, v1, v2, v3);
    v0 ^= m;
  }
  uint64_t last = uint64_t(length & 0xff) << 56;
  for (int b = 0; i + b < length; ++b) last |= byte(i + b) << (8 * b);
  v3 ^= last;
  sipRound(v0, v1, v2, v3);
  sipRound(v0, v1, v2, v3);
  v0 ^= last;
  v2 ^= 0xff;
  for (int r = 0; r < 4; ++r) sipRound(v0, v1, v2, v3);
  return v0 ^ v1 ^ v2 ^ v3;
}

std::string hex64(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

uint64_t secureRandom64() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  uint64_t value = 0;
  if (!in.read(reinterpret_cast<char*>(&value), sizeof value))
    throw Error("/dev/urandom: cannot read the secure random source");
  return value;
}

}  // namespace convscope
