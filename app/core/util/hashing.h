// A keyed hash and the secure random source the grader's secrets come from.
#pragma once

#include <cstdint>
#include <string>

namespace convscope {

// SipHash-2-4 of `data` under a 128-bit key: the keyed hash behind the leaderboard's pseudonyms (a
// student cannot recompute one without the results folder's secret) and the content hashes.
uint64_t sipHash24(const std::string& data, uint64_t key0, uint64_t key1);
// 16 lower-case hexadecimal digits.
std::string hex64(uint64_t value);

// 8 bytes from the system's secure random source (/dev/urandom). Throws convscope::Error.
uint64_t secureRandom64();

}  // namespace convscope
