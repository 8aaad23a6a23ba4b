// Seeded input generators and the sizes that break GPU code.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

enum class Distribution {
  uniform,      // uniform in the generator's [lo, hi]
  small_range,  // 0..49: sums stay small, many repeats
  all_equal,    // one value everywhere
  sorted,       // non-decreasing
  reverse,      // non-increasing
  few_unique,   // 4 distinct values
  full_range,   // every bit pattern of the type (for ints: the full 32-bit range)
};

std::string_view to_string(Distribution d);
std::optional<Distribution> parse_distribution(std::string_view name);
std::vector<Distribution> all_distributions();

// Deterministic for (seed, n, distribution): the grader regenerates a student's input from them.
std::vector<std::int32_t> generate_int32(Distribution d, std::size_t n, std::uint64_t seed,
                                          std::int32_t lo = -1000, std::int32_t hi = 1000);
std::vector<std::uint32_t> generate_uint32(Distribution d, std::size_t n, std::uint64_t seed);
std::vector<float> generate_float(Distribution d, std::size_t n, std::uint64_t seed, float lo = -1.0f,
                                  float hi = 1.0f);

// 0, 1, 31, 32, 33, 1023, 1025, 2^k and 2^k - 3 for k in [k_lo, k_hi], then `large` when non-zero.
std::vector<std::size_t> edge_sizes(int k_lo = 10, int k_hi = 20, std::size_t large = 0);

}  // namespace gpulab
