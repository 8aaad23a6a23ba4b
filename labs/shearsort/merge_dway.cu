// Your file, part 3 of 3: merge-dway, the challenge.
//   merge-dway  merge_dway  tiles by your base case, then ceil(log_d tiles) passes that merge d runs
//                           at a time, a warp's heap of d - 1 buffers in shared memory (seed 004 §7.3)
// Replace gpulab::not_implemented(...) with your code; the interface is shearsort.cuh.
#include <cuda_runtime.h>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "shear_device.cuh"
#include "shearsort.cuh"

namespace shearsort {

// Seed 004 §7.3 with the lab's base case: Part 1 the tiles (as merge-pairwise), Part 2 passes that
// merge d = ws.config.d runs (a power of two in [2, 256]) with one warp per heap. The heap's d - 1
// internal nodes each keep a sorted buffer of b keys in shared memory (004: b = w = 32, a key a lane;
// b = 64, two keys a lane, is allowed too, and is what the reference uses: kDwayBufferKeys), its d
// leaves read the runs in global memory; Heapify takes the b smallest from the child whose last key
// passed up is smaller and merges them with the node's buffer (the last phase of a bitonic network on
// 2b keys: shuffles). Think before you code:
//   - a child with nothing left is "+infinity" by a flag, never by a key value (keys can be
//     INT_MAX), and a child that has passed nothing up yet is "-infinity";
//   - runs need not be a multiple of b keys, and the last group may have fewer than d runs;
//   - seed 004 partitions with separators chosen by value (Parts 3-4), which do not suit this lab
//     (question 8 asks why). Cut each pass's output into equal chunks instead and find, for each chunk's first output, how many keys of each run come before it in
//     the order (key, run, position) -- a d-way merge-path co-rank -- so that every warp has work
//     and equal keys keep their input order (ws.config.dway_chunk suggests a chunk; you may ignore it);
//   - with values, the heap can order (key, input position) composites: ties keep their order.
// Shared memory per warp grows with d (and with b): how many warps stay resident at d = 256 (004 §7.3.6)?
// shearsort.cuh's dway_shared_bytes_per_warp(d, key_bytes, b) is the reference's layout; yours may differ.
void merge_dway(const std::int32_t* d_keys_in, const std::uint32_t* d_values_in, std::int32_t* d_keys_out,
                std::uint32_t* d_values_out, std::size_t n, ShearWorkspace& ws) {
  (void)d_keys_in, (void)d_values_in, (void)d_keys_out, (void)d_values_out, (void)n, (void)ws;
  gpulab::not_implemented("merge-dway");
}

}  // namespace shearsort
