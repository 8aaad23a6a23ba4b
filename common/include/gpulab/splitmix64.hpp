// splitmix64: tiny, fast and identical on every platform (std:: distributions are not), so a seed
// names the same input for the student, the grader and the reference. The one generator of the
// course: common/src/data.cpp and the labs' own input generators draw from it.
#pragma once

#include <cstdint>
#include <random>

#include "gpulab/math.hpp"  // GPULAB_HD

namespace gpulab {

// splitmix64's output function: a bijection of 64 bits that mixes every input bit into every output
// bit (also on the device: the replay guard's draws and fingerprints, gpulab/fresh_input.cuh).
GPULAB_HD constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct SplitMix64 {
  std::uint64_t state;

  std::uint64_t next() { return splitmix64_mix(state += 0x9E3779B97F4A7C15ull); }
  // The high 32 bits of the next draw (splitmix64's best bits).
  std::uint32_t word() { return static_cast<std::uint32_t>(next() >> 32); }
  // In [0, bound), bound > 0; the modulo bias is below 2^-32.
  std::uint32_t below(std::uint32_t bound) { return static_cast<std::uint32_t>(next() % bound); }
  // In [lo, hi] (inclusive); the modulo bias is below 2^-32 for the ranges the course uses.
  std::int64_t in_range(std::int64_t lo, std::int64_t hi) {
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(span == 0 ? next() : next() % span);
  }
};

// 64 bits of the OS's entropy: seeds no code in the process can know before they are drawn (the
// replay guard's draws, the sort verdict's salts), unlike seeds derived from the problem's.
inline std::uint64_t entropy_seed() {
  std::random_device entropy;
  return (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
}

}  // namespace gpulab
