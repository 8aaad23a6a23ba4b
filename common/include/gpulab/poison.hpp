// The output poison: what a stage's output holds before the stage runs. Host-only (no CUDA
// headers), so the labs' CPU models and checkers can name it too.
#pragma once
#include <algorithm>
#include <cstddef>
#include <span>

namespace gpulab {

// The byte written by DeviceBuffer::poison(): 0xA5A5A5A5 as int32 is -1515870811 and as float32
// about -2.9e-16, values no lab produces from its generators, so an unwritten element never
// looks right.
inline constexpr unsigned char kPoisonByte = 0xA5;

// True when `v` is non-empty and every byte of it is still the poison: the stage never wrote it.
// A checker says so instead of listing a wrong value per element.
template <class T>
bool all_poisoned(std::span<const T> v) {
  const auto bytes = std::as_bytes(v);
  return !bytes.empty() &&
         std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{kPoisonByte}; });
}

}  // namespace gpulab
