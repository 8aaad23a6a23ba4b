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
// Graded conflict-free (Nsight Compute, every shared-memory access of the stage). Counting in
// shared memory is where the banks bite: if lane l keeps its 16 counters side by side
// (counts[l * 16 + d]), which lanes share a bank when every key has the same digit? Seed 000 §4
// gives each thread its own bank: counts[d * 32 + l] (the "counters" knob: lane is yours to write,
// thread is the contrast the experiment measures -- support both). In the downsweep, a store at a
// data-dependent index into shared memory (say, reordering the tile by digit) conflicts for almost
// every input: find a rank that needs none (a per-thread table indexed [d * threads + t] is
// conflict-free: why?), and write each key straight from its register to global memory.
// Keys past n: give them a digit that puts them after every real key, and never write them.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "radix_sort.cuh"

namespace radix_sort {

void sort_digit4(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                 std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  // G = min(ws.multiprocessors x kDigit4BlocksPerSm, chunks of kDigit4Chunk keys) tiles of whole
  // chunks (seed 000: one tile per processor). Ping-pong so that the last pass writes d_keys_out;
  // zero passes still write the output (cudaMemcpyAsync device to device).
  (void)d_keys, (void)d_keys_out, (void)d_values, (void)d_values_out, (void)n, (void)ws;
  gpulab::not_implemented("digit4");
}

}  // namespace radix_sort
