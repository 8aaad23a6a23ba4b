// Your file, part 3 of 4: colored prefix sums (extra credit; README.md, "Stages, in order"; seed 000 §4, Fig. 2).
//   colored-direct         colored_exclusive_scan_direct
//   colored-conflict-free  colored_exclusive_scan_conflict_free
// d = ws.config.colors (1..16) colors; d_colors[i] is element i's color.
// out[i] = sum of d_values[j] over j < i with d_colors[j] == d_colors[i].
// Replace each gpulab::not_implemented(...) with your code; the interface is scan.cuh.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "scan.cuh"

namespace scan {

// Both versions are three rounds over tiles, one warp per tile (seed 000 §4):
//   1. reduce: per warp, the sum of each color over its tile -> a d x p matrix (row c = color c).
//      Sums do not care about order: lane l can add each element it loads to counts[c * 32 + l].
//   2. spine: <<<d, 1024>>>, block c scans row c.
//   3. scan: the warp walks its tile in pages of kColoredPage = 1024 elements:
//      a. stage the page in shared memory (values, and colors packed 4 per 32-bit word);
//         thread t owns elements 32t .. 32t + 31 of the page: pad the page (one word per 32) so
//         that thread t's elements start in bank t;
//      b. thread t sums its elements per color into counts[c * 32 + t] (bank t: no conflicts);
//      c. the offset step: counts[c * 32 + t] := carry[c] + sum over threads < t of color c.
//         Lane c < d keeps carry[c], the sum of color c before this page, in a register;
//      d. thread t walks its elements again: out = counts[color * 32 + t]; counts[...] += value;
//      e. write the page back (coalesced).
// Only step c differs between the two versions (scan.cuh states both access patterns: the
// colors-sweep's bank model assumes them). Keep everything else identical, including the shared
// memory per warp, so that the time difference is the conflicts'.
// Suggested kernels:
//   __global__ void colored_reduce(const int* values, const std::uint8_t* colors, std::size_t n, ...);
//   __global__ void colored_spine(int* tile_sums, std::size_t tiles);
//   template <bool kConflictFree> __global__ void colored_scan(...);

void colored_exclusive_scan_direct(const int* d_values, const std::uint8_t* d_colors, int* d_out, std::size_t n,
                                   ScanWorkspace& ws) {
  // Offset step: lane c < d walks counts[c * 32 + j] for j = 0..31 (exclusive running sum in
  // place). All d lanes are in bank j at step j: expect a d-way conflict.
  (void)d_values, (void)d_colors, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("colored-direct");
}

void colored_exclusive_scan_conflict_free(const int* d_values, const std::uint8_t* d_colors, int* d_out,
                                          std::size_t n, ScanWorkspace& ws) {
  // Offset step: transpose counts into trans[t * kColoredTransposeStride + c] (all 32 lanes, one
  // color per instruction), walk trans[j * kColoredTransposeStride + c] with lane c, transpose
  // back. Why an odd stride? Must show 0 excess wavefronts.
  (void)d_values, (void)d_colors, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("colored-conflict-free");
}

}  // namespace scan
