// Your file, part 2 of 5: tiles of T = 2 x block keys in shared memory (seed 002 §III-C..E).
//   phase2  sort_phase2  one launch sorts every tile (levels 1..t), then phase 0's global steps
//   phase3  sort_phase3  phase 2, and the last level's strides below T in one shared launch
//   phase4  sort_phase4  every level above t: its strides >= T one global launch each, then one
//                        shared launch for its strides T/2 .. 1 (cuda-samples' sortingNetworks)
// Replace each gpulab::not_implemented(...) with your code; the interface is bitonic.cuh.
#include <cuda_runtime.h>

#include "bitonic.cuh"
#include "bitonic_device.cuh"
#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"

namespace bitonic {

// A tile kernel: thread tau loads keys tau and tau + block of its block's tile (coalesced), runs
// the strides in shared memory -- thread tau orders the pair whose lower key is tau with a 0 bit
// inserted at e -- and writes both keys back. Every thread reads keys other threads wrote in the
// previous stride: what must stand between two strides? (racecheck finds it if it is missing.)
// Directions (pad = sentinel, and any power-of-two n): a pair at level s is ascending iff bit s of
// its *global* lower index is 0. Inside the tile sort that makes the even tiles ascending and the
// odd ones descending (002's "direction from the block parity"); in a tile merge of level s it is
// bit s of the tile's first index (002's "global index masked by the merge size"). With pad =
// virtual every merge ascends (cpu-network's mirrored first stride), tiles and tile merges too.
// A tile past n is padded as phase 0 pads.

// Launches: 1 + L(L+1)/2 - t(t+1)/2 (R2).
void sort_phase2(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("phase2");
}

// R3 = R2 - (t - 1): the last level's t strides below T are one tile merge (at the last level every
// pair is ascending).
void sort_phase3(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("phase3");
}

// R4 = 1 + (L - t)(L - t + 3)/2. The tile merge runs at every level now: with pad = sentinel phase
// 3's "all ascending" is right at the last level only. Which n shows it wrong? Try n = T + 1, 2T, 4T
// and 8T.
void sort_phase4(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("phase4");
}

}  // namespace bitonic
