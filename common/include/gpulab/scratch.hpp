// Device scratch memory handed out in aligned pieces: the harness allocates one block per stage
// outside the timed region (a cudaMalloc inside it would dominate small problems), the stage takes
// what it needs, and reset() before every run lets a run take the same pieces again.
// Host-only C++ (no CUDA headers): student interfaces (<lab>.cuh) derive their workspace from it.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <typeinfo>

#include "gpulab/math.hpp"

namespace gpulab {

// One take of a run: where it lies in the arena and what was asked for (the kit names it in a
// guard failure and to compute-sanitizer: "scratch #2: take<int>(1024)").
struct ScratchRegion {
  std::size_t offset = 0;         // bytes from the arena's base
  std::size_t bytes = 0;          // count x element_bytes: what the stage may touch
  std::size_t guard = 0;          // bytes after it that no take hands out (the kit checks them)
  std::size_t count = 0;
  std::size_t element_bytes = 0;
  const char* type = "";          // typeid(T).name(): mangled, recorded for the price of a pointer
};

// Told of every take and reset; the kit's implementation (common/src/scratch_arena.cpp) registers
// each region with compute-sanitizer through NVTX, and is attached only while a tool listens, so a
// take without a tool costs what it did.
class ScratchObserver {
 public:
  virtual void taken(std::size_t index, const ScratchRegion& region) = 0;
  virtual void reset() = 0;

 protected:
  ~ScratchObserver() = default;
};

class Scratch {
 public:
  // Regions recorded per run for the kit's guard check; takes past this many still get their
  // guard gap (and their NVTX region) but are not checked.
  static constexpr std::size_t kMaxRecorded = 64;

  Scratch() = default;
  // `guard_bytes` after every region belong to no take (the harness's arenas: 256, checked after
  // the run; 0 for a plain arena).
  Scratch(void* base, std::size_t bytes, std::size_t guard_bytes = 0, ScratchObserver* observer = nullptr)
      : base_(static_cast<unsigned char*>(base)), bytes_(bytes), guard_(guard_bytes), observer_(observer) {}

  // The next `count` elements of T, aligned to `align` bytes (16: int4 loads work on them).
  template <class T>
  T* take(std::size_t count, std::size_t align = 16) {
    const std::size_t begin = round_up(used_, std::max(align, alignof(T)));
    const std::size_t want = count * sizeof(T);
    if (begin > bytes_ || want > bytes_ - begin)
      throw std::length_error("scratch: take(" + std::to_string(count) + " x " + std::to_string(sizeof(T)) +
                              " bytes): only " + std::to_string(bytes_ - std::min(begin, bytes_)) +
                              " bytes left; use less scratch (" + std::to_string(bytes_) + " bytes in all)");
    // The guard shrinks at the very end of the arena rather than refusing a take that fits.
    const ScratchRegion region{begin, want, std::min(guard_, bytes_ - begin - want), count, sizeof(T), typeid(T).name()};
    record(region);
    used_ = begin + want + region.guard;
    return reinterpret_cast<T*>(base_ + begin);
  }
  void reset() {
    used_ = 0;
    taken_ = 0;
    if (observer_) observer_->reset();
  }
  std::size_t used_bytes() const { return used_; }  // regions, alignment and guards handed out so far
  std::size_t capacity_bytes() const { return bytes_; }
  void* base() const { return base_; }
  // This run's takes, in order (the first kMaxRecorded of them).
  std::span<const ScratchRegion> regions() const { return {regions_.data(), std::min(taken_, kMaxRecorded)}; }

 private:
  void record(const ScratchRegion& region) {
    if (taken_ < kMaxRecorded) regions_[taken_] = region;
    if (observer_) observer_->taken(taken_, region);
    ++taken_;
  }

  unsigned char* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t guard_ = 0;
  ScratchObserver* observer_ = nullptr;
  std::size_t used_ = 0;
  std::size_t taken_ = 0;
  std::array<ScratchRegion, kMaxRecorded> regions_{};
};

// A Thrust allocator served from a run's scratch (thrust::cuda::par_nosync(ScratchAllocator{&ws})):
// a library baseline takes its temporary storage from the arena the harness allocated before
// timing, so the timed region holds no cudaMalloc. Nothing is freed: the next reset() is.
struct ScratchAllocator {
  using value_type = char;
  Scratch* scratch;
  char* allocate(std::ptrdiff_t bytes) { return scratch->take<char>(static_cast<std::size_t>(bytes), 256); }
  void deallocate(char*, std::size_t) {}
};

}  // namespace gpulab
