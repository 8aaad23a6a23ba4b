// Integer helpers every lab needs on the host and in kernels (constexpr, so usable in both).
#pragma once
#include <cstddef>

#if defined(__CUDACC__)
#define GPULAB_HD __host__ __device__
#else
#define GPULAB_HD
#endif

namespace gpulab {

GPULAB_HD constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
// Smallest k with 2^k >= n (0 for n <= 1).
GPULAB_HD constexpr int ceil_log2(std::size_t n) {
  int k = 0;
  while ((std::size_t{1} << k) < n) ++k;
  return k;
}
GPULAB_HD constexpr std::size_t round_up(std::size_t a, std::size_t multiple) { return ceil_div(a, multiple) * multiple; }
GPULAB_HD constexpr bool is_pow2(std::size_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace gpulab
