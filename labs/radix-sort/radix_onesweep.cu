// Your file, part 3 of 3 (the challenge, extra credit): onesweep, LSD radix sort with r-bit digits
// (ws.config.radix_bits: 1, 2, 4, 6 or 8) and ONE launch per pass (Adinets & Merrill, "Onesweep",
// CUB's algorithm). Replace gpulab::not_implemented(...) with your code; the interface is
// radix_sort.cuh.
//
//   histogram  one launch counts the digits of every pass at once: P x 2^r bins (global atomics of
//              per-block histograms)
//   pass p     one launch; each block takes the next tile (an atomic counter, not blockIdx.x) and
//                - ranks its keys stably by digit within the tile (warp multisplit: which lanes of a
//                  warp hold my digit? r ballots answer it, or __match_any_sync);
//                - publishes the tile's 2^r digit counts as soon as it knows them, then looks back
//                  over the tiles before it, digit by digit (decoupled look-back, as the scan lab's
//                  single-pass scan, with one word per (tile, digit));
//                - reorders the tile by digit in shared memory and writes it out: each digit's keys
//                  leave as one contiguous run, at bin start + keys of that digit in earlier tiles.
// Launches: 1 + P, P = pass_count(end_bit, r). The look-back state of all passes can be cleared by
// one cudaMemsetAsync. Shared memory: how much does one tile of keys (and values) take, and how
// many blocks fit an SM?
#include <cuda_runtime.h>

#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "radix_sort.cuh"

namespace radix_sort {

void sort_onesweep(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                   std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  (void)d_keys, (void)d_keys_out, (void)d_values, (void)d_values_out, (void)n, (void)ws;
  gpulab::not_implemented("onesweep");
}

}  // namespace radix_sort
