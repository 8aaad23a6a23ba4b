// Reference, part 2 of 5: tiles of T = 2 x block keys in shared memory (seed 002 §III-C..E).
//   phase2  sort_phase2  levels 1..t of every tile in one launch, then phase 0's global steps
//   phase3  sort_phase3  phase 2, and the last level's strides < T in one tile-merge launch
//   phase4  sort_phase4  every level s > t: its strides >= T one global launch each, then one
//                        tile merge for the strides < T (cuda-samples' sortingNetworks structure)
// A tile kernel's thread tau loads keys tau and tau + B of its tile (coalesced), runs the textbook
// shared_step (bitonic_device.cuh) once per stride with a barrier between strides, and writes the
// same two keys back. Directions (bitonic_device.cuh, "orientation"): alternating uses the global
// index, so tile b of the tile sort ends ascending iff b is even -- seed 002's "direction from the
// block parity" -- and a tile merge of level s faces by bit s of its tile's index, "the global index
// masked by the merge size" (§III-E). Mirrored uses the local index: every tile ends ascending.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "bitonic.cuh"
#include "bitonic_device.cuh"
#include "gpulab/cuda_check.hpp"

namespace bitonic {

using detail::Orientation;

namespace {

template <Orientation O>
__device__ __forceinline__ std::size_t direction_base(std::size_t tile_base) {
  return O == Orientation::alternating ? tile_base : 0;
}

// Levels 1..levels of the network inside every tile (levels = min(L, t)).
template <class Key, Orientation O>
__global__ void tile_sort_shared_kernel(detail::Pass<Key> pass, int levels) {
  const detail::SharedKeys<Key> s = detail::dynamic_shared_keys<Key>();
  const int block = static_cast<int>(blockDim.x), tau = static_cast<int>(threadIdx.x);
  const std::size_t base = blockIdx.x * 2 * std::size_t(block);
  s.store(tau, pass.load(base + tau));
  s.store(block + tau, pass.load(base + block + tau));
  for (int level = 1; level <= levels; ++level)
    for (int e = level - 1; e >= 0; --e) {
      __syncthreads();
      detail::shared_step(s, e, level, direction_base<O>(base));
    }
  __syncthreads();
  pass.store(base + tau, s.load(tau));
  pass.store(base + block + tau, s.load(block + tau));
}

// Level `level` > t, strides 2^(t-1) .. 1: each tile is two halves of a bitonic sequence already
// split by the global strides, so the tile is merged on its own.
template <class Key, Orientation O>
__global__ void tile_merge_shared_kernel(detail::Pass<Key> pass, int level, int tile_log2) {
  const detail::SharedKeys<Key> s = detail::dynamic_shared_keys<Key>();
  const int block = static_cast<int>(blockDim.x), tau = static_cast<int>(threadIdx.x);
  const std::size_t base = blockIdx.x * 2 * std::size_t(block);
  s.store(tau, pass.load(base + tau));
  s.store(block + tau, pass.load(base + block + tau));
  for (int e = tile_log2 - 1; e >= 0; --e) {
    __syncthreads();
    detail::shared_step(s, e, level, direction_base<O>(base));
  }
  __syncthreads();
  pass.store(base + tau, s.load(tau));
  pass.store(base + block + tau, s.load(block + tau));
}

template <class Key, Orientation O>
void run_tile_steps(const std::vector<detail::Step>& steps, detail::Chain<Key>& chain, int block) {
  const int tile = 2 * block, tile_log2 = detail::log2_of(tile);
  const std::size_t shared = static_cast<std::size_t>(tile) * sizeof(Key);
  const unsigned tiles = detail::grid_for(chain.extent(), tile);
  for (const detail::Step& step : steps) {
    const detail::Pass<Key> pass = chain.next();
    switch (step.kind) {
      case detail::StepKind::tile_sort:
        tile_sort_shared_kernel<Key, O><<<tiles, block, shared>>>(pass, step.level);
        break;
      case detail::StepKind::tile_merge:
        tile_merge_shared_kernel<Key, O><<<tiles, block, shared>>>(pass, step.level, tile_log2);
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

// Which levels end with a tile merge for their strides < T.
enum class TileMerge { none, last_level, every_level };

template <class Key>
void sort_tiles(const Key* d_in, Key* d_out, std::size_t n, SortWorkspace& ws, TileMerge merge) {
  const int block = detail::checked_block(ws);
  const int t = detail::log2_of(2 * block), L = ceil_log2(n);
  const int merge_from = merge == TileMerge::none ? INT_MAX : merge == TileMerge::last_level ? L : t + 1;
  const auto steps = detail::plan_steps(n, t, merge_from, 1);
  if (steps.empty()) return;
  detail::Chain<Key> chain(d_in, d_out, n, ws, steps.size());
  if (chain.orientation() == Orientation::mirrored) run_tile_steps<Key, Orientation::mirrored>(steps, chain, block);
  else run_tile_steps<Key, Orientation::alternating>(steps, chain, block);
}

}  // namespace

void sort_phase2(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  sort_tiles(d_in, d_out, n, ws, TileMerge::none);
}

void sort_phase3(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  sort_tiles(d_in, d_out, n, ws, TileMerge::last_level);
}

void sort_phase4(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  sort_tiles(d_in, d_out, n, ws, TileMerge::every_level);
}

}  // namespace bitonic
