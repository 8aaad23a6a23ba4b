// Your file, part 3 of 5: phase4-conflict-free, phase 4 without shared-memory bank conflicts.
//   phase4-conflict-free  sort_phase4_conflict_free  the launches of phase 4; 0 excess wavefronts
// Replace gpulab::not_implemented(...) with your code; the interface is bitonic.cuh.
#include <cuda_runtime.h>

#include "bitonic.cuh"
#include "bitonic_device.cuh"
#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"

namespace bitonic {

// Phase 4's shared step is 2-way conflicted at every stride below 32 (gpulab experiment bitonic
// bank-model --param draw=1 draws it; seed 000 §5 says sorting networks in shared memory conflict).
// Why: the bank of word i is i mod 32, so for a stride j < 32 bit log2 j of a key's bank is bit
// log2 j of its index, and every lower key of the stride sits in 16 of the 32 banks.
// Give each warp 64 consecutive keys of the tile, lane l holding two of them in registers. Which
// strides are then inside a thread, which are a __shfl_xor_sync between lanes, and which still
// need shared memory -- and when those do, are a warp's 32 lower keys 32 consecutive words?
// Same launches as phase 4; gpulab conflicts bitonic --stage phase4-conflict-free must show 0.
void sort_phase4_conflict_free(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("phase4-conflict-free");
}

}  // namespace bitonic
