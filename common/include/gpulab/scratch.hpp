// Device scratch memory handed out in aligned pieces: the harness allocates one block per stage
// outside the timed region (a cudaMalloc inside it would dominate small problems), the stage takes
// what it needs, and reset() before every run lets a run take the same pieces again.
// Host-only C++ (no CUDA headers): student interfaces (<lab>.cuh) derive their workspace from it.
#pragma once
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "gpulab/math.hpp"

namespace gpulab {

class Scratch {
 public:
  Scratch() = default;
  Scratch(void* base, std::size_t bytes) : base_(static_cast<unsigned char*>(base)), bytes_(bytes) {}

  // The next `count` elements of T, aligned to `align` bytes (16: int4 loads work on them).
  template <class T>
  T* take(std::size_t count, std::size_t align = 16) {
    const std::size_t begin = round_up(used_, std::max(align, alignof(T)));
    const std::size_t want = count * sizeof(T);
    if (begin > bytes_ || want > bytes_ - begin)
      throw std::length_error("scratch: take(" + std::to_string(count) + " x " + std::to_string(sizeof(T)) +
                              " bytes): only " + std::to_string(bytes_ - std::min(begin, bytes_)) +
                              " bytes left; use less scratch (" + std::to_string(bytes_) + " bytes in all)");
    used_ = begin + want;
    return reinterpret_cast<T*>(base_ + begin);
  }
  void reset() { used_ = 0; }
  std::size_t used_bytes() const { return used_; }
  std::size_t capacity_bytes() const { return bytes_; }
  void* base() const { return base_; }

 private:
  unsigned char* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t used_ = 0;
};

}  // namespace gpulab
