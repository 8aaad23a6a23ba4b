// The few helpers of solutions/shearsort/shear_device.cuh that merge_dway.cu's kernels use,
// copied for the host simulation (the real header holds kernels and launches).
#pragma once
#include <climits>
#include <cstdint>
#include "shearsort.cuh"
namespace shearsort {
using gpulab::ceil_div;
using gpulab::ceil_log2;
using gpulab::is_pow2;
}
namespace shearsort::device {
inline constexpr unsigned kFullMask = 0xffffffffu;
inline std::uint64_t make_composite(std::int32_t key, std::uint32_t position) {
  return (std::uint64_t(std::uint32_t(key) ^ 0x80000000u) << 32) | position;
}
inline std::int32_t composite_key(std::uint64_t c) { return std::int32_t(std::uint32_t(c >> 32) ^ 0x80000000u); }
inline std::uint32_t composite_position(std::uint64_t c) { return std::uint32_t(c); }
template <class Key> struct Pad;
template <> struct Pad<std::int32_t> { static constexpr std::int32_t value = INT_MAX; };
template <> struct Pad<std::uint64_t> { static constexpr std::uint64_t value = ~std::uint64_t{0}; };
template <class Key>
inline void order(Key& a, Key& b) {
  const Key lo = b < a ? b : a;
  b = b < a ? a : b;
  a = lo;
}
template <class T>
inline T warp_sum(T x) {
  for (int s = kWarp / 2; s > 0; s >>= 1) x += __shfl_xor_sync(kFullMask, x, s);
  return x;
}
}  // namespace shearsort::device
