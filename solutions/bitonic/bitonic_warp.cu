// Reference, part 3 of 5: phase4-conflict-free, phase 4 without shared-memory bank conflicts.
//
// The textbook shared step (bitonic_device.cuh, shared_step) is 2-way conflicted exactly when the
// stride is below 32: a warp's 32 lower keys then span 64 words, two per bank (seed 000 §5's
// complaint about sorting networks in shared memory). Here each warp owns 64 consecutive keys of
// the tile -- lane l holds a = key 64w + l and b = key 64w + 32 + l in registers -- so
//   stride 32        is a compare-exchange inside the thread (a with b),
//   strides 16 .. 1  pair lane l with lane l ^ j, the same register: __shfl_xor_sync,
//   strides >= 64    stay in shared memory, where a warp's lower keys are 32 consecutive words
//                    (no conflict), and so are the stores and loads of a and b.
// Same launches as phase 4; 0 excess wavefronts (bitonic_model.cpp checks every request).
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "bitonic.cuh"
#include "bitonic_device.cuh"
#include "gpulab/cuda_check.hpp"

namespace bitonic {

using detail::Orientation;

namespace {

constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kWarpKeysLog2 = 6;  // a warp's 64 keys: strides below 64 never leave the warp

template <Orientation O>
__device__ __forceinline__ std::size_t direction_base(std::size_t tile_base) {
  return O == Orientation::alternating ? tile_base : 0;
}

// Strides 2^top .. 1 (top <= 5) of merge level `level` on the warp's registers; a_index is the
// direction index of a (b's is a_index + 32).
template <class Key>
__device__ __forceinline__ void warp_steps(Key& a, Key& b, int top, int level, std::size_t a_index) {
  const int lane = static_cast<int>(threadIdx.x) & (kWarp - 1);
  const bool a_up = detail::ascending_at(a_index, level), b_up = detail::ascending_at(a_index + kWarp, level);
  for (int e = top; e >= 0; --e) {
    if (e == 5) {  // stride 32: a and b are the pair (and face the same way: level >= 6)
      detail::compare_exchange(a, b, a_up);
      continue;
    }
    const int j = 1 << e;
    const bool lower = (lane & j) == 0;
    const Key pa = __shfl_xor_sync(kFullMask, a, j);
    const Key pb = __shfl_xor_sync(kFullMask, b, j);
    a = detail::keep(a, pa, lower == a_up);
    b = detail::keep(b, pb, lower == b_up);
  }
}

template <class Key, Orientation O>
__global__ void tile_sort_warp_kernel(detail::Pass<Key> pass, int levels) {
  const detail::SharedKeys<Key> s = detail::dynamic_shared_keys<Key>();
  const int block = static_cast<int>(blockDim.x);
  const int la = 2 * kWarp * (static_cast<int>(threadIdx.x) / kWarp) + (static_cast<int>(threadIdx.x) & (kWarp - 1));
  const std::size_t base = blockIdx.x * 2 * std::size_t(block);
  const std::size_t dir = direction_base<O>(base) + static_cast<std::size_t>(la);
  Key a = pass.load(base + la);
  Key b = pass.load(base + la + kWarp);
  for (int level = 1; level <= levels; ++level) {
    if (level > kWarpKeysLog2) {  // strides >= 64 cross warps: through shared memory
      s.store(la, a);
      s.store(la + kWarp, b);
      for (int e = level - 1; e >= kWarpKeysLog2; --e) {
        __syncthreads();
        detail::shared_step(s, e, level, direction_base<O>(base));
      }
      __syncthreads();
      a = s.load(la);
      b = s.load(la + kWarp);
    }
    warp_steps(a, b, std::min(level - 1, 5), level, dir);
  }
  pass.store(base + la, a);
  pass.store(base + la + kWarp, b);
}

template <class Key, Orientation O>
__global__ void tile_merge_warp_kernel(detail::Pass<Key> pass, int level, int tile_log2) {
  const detail::SharedKeys<Key> s = detail::dynamic_shared_keys<Key>();
  const int block = static_cast<int>(blockDim.x);
  const int la = 2 * kWarp * (static_cast<int>(threadIdx.x) / kWarp) + (static_cast<int>(threadIdx.x) & (kWarp - 1));
  const std::size_t base = blockIdx.x * 2 * std::size_t(block);
  Key a = pass.load(base + la);
  Key b = pass.load(base + la + kWarp);
  if (tile_log2 > kWarpKeysLog2) {
    s.store(la, a);
    s.store(la + kWarp, b);
    for (int e = tile_log2 - 1; e >= kWarpKeysLog2; --e) {
      __syncthreads();
      detail::shared_step(s, e, level, direction_base<O>(base));
    }
    __syncthreads();
    a = s.load(la);
    b = s.load(la + kWarp);
  }
  warp_steps(a, b, std::min(tile_log2 - 1, 5), level, direction_base<O>(base) + static_cast<std::size_t>(la));
  pass.store(base + la, a);
  pass.store(base + la + kWarp, b);
}

template <class Key, Orientation O>
void run_warp_tile_steps(const std::vector<detail::Step>& steps, detail::Chain<Key>& chain, int block) {
  const int tile = 2 * block, tile_log2 = detail::log2_of(tile);
  const std::size_t shared = static_cast<std::size_t>(tile) * sizeof(Key);
  const unsigned tiles = detail::grid_for(chain.extent(), tile);
  for (const detail::Step& step : steps) {
    const detail::Pass<Key> pass = chain.next();
    switch (step.kind) {
      case detail::StepKind::tile_sort:
        tile_sort_warp_kernel<Key, O><<<tiles, block, shared>>>(pass, step.level);
        break;
      case detail::StepKind::tile_merge:
        tile_merge_warp_kernel<Key, O><<<tiles, block, shared>>>(pass, step.level, tile_log2);
        break;
      case detail::StepKind::global:
        detail::launch_global_step<Key, O>(pass, chain.extent(), step.level, step.hi, block);
        break;
      case detail::StepKind::copy:
        detail::launch_copy(pass, chain.extent());
        break;
    }
    GPULAB_CHECK_LAUNCH();
  }
}

}  // namespace

void sort_phase4_conflict_free(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  using Key = std::int32_t;
  const int block = detail::checked_block(ws);
  const int t = detail::log2_of(2 * block);
  const auto steps = detail::plan_steps(n, t, t + 1, 1);
  if (steps.empty()) return;
  detail::Chain<Key> chain(d_in, d_out, n, ws, steps.size());
  if (chain.orientation() == Orientation::mirrored) run_warp_tile_steps<Key, Orientation::mirrored>(steps, chain, block);
  else run_warp_tile_steps<Key, Orientation::alternating>(steps, chain, block);
}

}  // namespace bitonic
