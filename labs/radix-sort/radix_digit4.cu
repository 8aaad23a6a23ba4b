// Your file, part 2 of 3: digit4, LSD radix sort with 4-bit digits in three rounds per pass
// (README.md, "Stages, in order"). A pass is seed 000 §4's colored prefix sums with d = 16 colors
// (a key's color is its digit) followed by a scatter:
//   upsweep    block g counts the digits of its tile of the input: 16 counts per tile
//   spine      one block scans the 16 x G count matrix digit-major: offset(d, g) = the keys with a
//              smaller digit + the keys with digit d in the tiles before g
//   downsweep  block g ranks each key of its tile stably among the tile's keys of its digit and
//              writes it to offset(d, g) + its rank
// 3 launches per pass, pass_count(end_bit, 4) passes (pass_bits: the last may be shorter). Replace
// gpulab::not_implemented(...) with your code; the interface is radix_sort.cuh.
//
// digit4_count is round 1, a stage of its own (digit4-count), and the part graded conflict-free:
// Nsight Compute, every shared-memory access of every kernel it launches (a count done on the host
// launches none: nothing to check, no points). sort_digit4 calls it for
// round 1 of every pass. The downsweep may stage or reorder each chunk by digit in shared memory
// (Satish, Harris & Garland's local sort): its conflicts are yours to weigh against the global
// sectors it saves (`gpulab conflicts radix-sort --stage digit4` reports them; the grade does not
// count them).
// Keys past n: give them a digit that puts them after every real key, and never write them.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "radix_sort.cuh"

namespace radix_sort {

void digit4_count(const std::uint32_t* d_keys, std::size_t n, std::size_t tile_size, std::size_t tiles, int shift,
                  int bits, std::uint32_t* d_tile_counts, const SortConfig& config) {
  // Block g counts tile g's digits: d_tile_counts[d * tiles + g] (every d < 16, 0 for digits the pass
  // does not have). Counting in shared memory is where the banks bite: if lane l keeps its 16
  // counters side by side (counts[l * 16 + d]), which lanes share a bank when every key has the
  // same digit? Seed 000 §4 gives each thread its own bank: counts[d * 32 + l] (config.counters:
  // lane is yours to write, thread is the contrast the experiment measures -- support both).
  (void)d_keys, (void)n, (void)tile_size, (void)tiles, (void)shift, (void)bits, (void)d_tile_counts, (void)config;
  gpulab::not_implemented("digit4-count");
}

void sort_digit4(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                 std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  // About one tile per resident block (seed 000: one tile per processor): with C = ceil(n /
  // kDigit4Chunk) chunks and P = ws.multiprocessors x kDigit4BlocksPerSm, a tile is ceil(C / min(P, C))
  // whole chunks and G = ceil(n / tile size) tiles (not always P: 2^22 keys on 132 SMs make 256, and
  // no tile may start past n). Ping-pong so that the last pass writes d_keys_out;
  // zero passes still write the output (cudaMemcpyAsync device to device).
  (void)d_keys, (void)d_keys_out, (void)d_values, (void)d_values_out, (void)n, (void)ws;
  gpulab::not_implemented("digit4");
}

}  // namespace radix_sort
