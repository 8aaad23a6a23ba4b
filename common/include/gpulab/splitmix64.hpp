// splitmix64: tiny, fast and identical on every platform (std:: distributions are not), so a seed
// names the same input for the student, the grader and the reference. The one generator of the
// course: common/src/data.cpp and the labs' own input generators draw from it.
#pragma once

#include <cstdint>

namespace gpulab {

struct SplitMix64 {
  std::uint64_t state;

  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
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

}  // namespace gpulab
