// Your file, part 2 of 3: merge-pairwise, the whole sort.
//   merge-pairwise  merge_pairwise  tiles by your base case, then ceil(log2 tiles) passes that merge
//                                   runs two at a time, partitioned by merge path (seed 000 §5, §6.3)
// Replace gpulab::not_implemented(...) with your code; the interface is shearsort.cuh.
#include <cuda_runtime.h>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "shear_device.cuh"
#include "shearsort.cuh"

namespace shearsort {

// 1. The tiles: your tile kernel for ws.config.base_case (--param base), d_keys_in -> a buffer.
//    With values, sort (key, position-in-tile) so that equal keys keep their order, and let each
//    value follow its key.
// 2. Passes with run length L = 1024, 2048, ...: runs [2jL, (2j+1)L) and [(2j+1)L, (2j+2)L) merge
//    into one (the last run may be short, or alone). Cut the output into equal pieces and find,
//    for the first output of each piece, how many keys come from the left run: the merge-path
//    co-rank, a binary search along the cross diagonal (one launch). Then merge each piece in
//    shared memory (a second launch). Stable: on equal keys the left run goes first -- in the
//    co-rank and in the merge alike. A run that is used up is a flag, not a sentinel key: real
//    keys can be INT_MAX.
// 3. Ping-pong between d_keys_out and a buffer from ws.take (values likewise). Which buffer must
//    the tiles go to so that the last pass writes d_keys_out? (1 + 2 P2 launches, P2 passes.)
// Keys only when both value pointers are null.
void merge_pairwise(const std::int32_t* d_keys_in, const std::uint32_t* d_values_in, std::int32_t* d_keys_out,
                    std::uint32_t* d_values_out, std::size_t n, ShearWorkspace& ws) {
  (void)d_keys_in, (void)d_values_in, (void)d_keys_out, (void)d_values_out, (void)n, (void)ws;
  gpulab::not_implemented("merge-pairwise");
}

}  // namespace shearsort
