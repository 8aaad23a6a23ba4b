#include "gpulab/data.hpp"
#include "gpulab/splitmix64.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <set>

namespace gpulab {

namespace {


SplitMix64 rng_for(Distribution d, std::uint64_t seed) {
  return SplitMix64{seed * 0x2545F4914F6CDD1Dull + static_cast<std::uint64_t>(d) + 1};
}

// Fills with draw(rng) and then orders the values as the distribution asks.
template <class T, class Draw>
std::vector<T> fill(Distribution d, std::size_t n, std::uint64_t seed, Draw draw) {
  auto rng = rng_for(d, seed);
  std::vector<T> v(n);
  switch (d) {
    case Distribution::all_equal: {
      const T value = draw(rng);
      std::fill(v.begin(), v.end(), value);
      break;
    }
    case Distribution::few_unique: {
      const std::array<T, 4> values{draw(rng), draw(rng), draw(rng), draw(rng)};
      for (auto& x : v) x = values[rng.next() % values.size()];
      break;
    }
    default:
      for (auto& x : v) x = draw(rng);
  }
  if (d == Distribution::sorted) std::sort(v.begin(), v.end());
  if (d == Distribution::reverse) std::sort(v.begin(), v.end(), std::greater<T>());
  return v;
}

}  // namespace

std::string_view to_string(Distribution d) {
  switch (d) {
    case Distribution::uniform: return "uniform";
    case Distribution::small_range: return "small-range";
    case Distribution::all_equal: return "all-equal";
    case Distribution::sorted: return "sorted";
    case Distribution::reverse: return "reverse";
    case Distribution::few_unique: return "few-unique";
    case Distribution::full_range: return "full-range";
  }
  return "?";
}

std::vector<Distribution> all_distributions() {
  return {Distribution::uniform, Distribution::small_range, Distribution::all_equal, Distribution::sorted,
          Distribution::reverse, Distribution::few_unique,  Distribution::full_range};
}

std::optional<Distribution> parse_distribution(std::string_view name) {
  for (auto d : all_distributions()) {
    std::string canonical(to_string(d)), underscored = canonical;
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    if (name == canonical || name == underscored) return d;
  }
  return std::nullopt;
}

std::vector<std::int32_t> generate_int32(Distribution d, std::size_t n, std::uint64_t seed, std::int32_t lo,
                                          std::int32_t hi) {
  if (lo > hi) std::swap(lo, hi);
  return fill<std::int32_t>(d, n, seed, [&](SplitMix64& r) -> std::int32_t {
    switch (d) {
      case Distribution::small_range: return static_cast<std::int32_t>(r.in_range(0, 49));
      case Distribution::full_range: return static_cast<std::int32_t>(static_cast<std::uint32_t>(r.next()));
      default: return static_cast<std::int32_t>(r.in_range(lo, hi));
    }
  });
}

std::vector<std::uint32_t> generate_uint32(Distribution d, std::size_t n, std::uint64_t seed) {
  return fill<std::uint32_t>(d, n, seed, [&](SplitMix64& r) -> std::uint32_t {
    switch (d) {
      case Distribution::small_range: return static_cast<std::uint32_t>(r.in_range(0, 49));
      default: return static_cast<std::uint32_t>(r.next());  // the full 32-bit range
    }
  });
}

std::vector<float> generate_float(Distribution d, std::size_t n, std::uint64_t seed, float lo, float hi) {
  if (lo > hi) std::swap(lo, hi);
  return fill<float>(d, n, seed, [&](SplitMix64& r) -> float {
    // 24 random mantissa bits: every value is exactly representable and distinct values are common.
    const float unit = static_cast<float>(r.next() >> 40) / static_cast<float>(1u << 24);
    switch (d) {
      case Distribution::small_range: return static_cast<float>(r.in_range(0, 49));
      case Distribution::full_range: return (unit * 2.0f - 1.0f) * 3.0e38f;
      default: return lo + unit * (hi - lo);
    }
  });
}

std::vector<std::size_t> edge_sizes(int k_lo, int k_hi, std::size_t large) {
  std::set<std::size_t> sizes{0, 1, 31, 32, 33, 1023, 1025};
  for (int k = k_lo; k <= k_hi; ++k) {
    sizes.insert(std::size_t{1} << k);
    sizes.insert((std::size_t{1} << k) - 3);
  }
  if (large) sizes.insert(large);
  return {sizes.begin(), sizes.end()};
}

}  // namespace gpulab
