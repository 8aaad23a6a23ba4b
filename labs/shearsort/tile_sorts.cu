// Your file, part 1 of 3: the two CPU stages and the five tile stages.
//   cpu                   sort_cpu               the whole array, stable, on the host (the oracle)
//   cpu-shear             tile_shear_cpu         ShearSort on every tile, on the host
//   tile-bitonic          tile_bitonic           a 1024-key bitonic network in shared memory
//   tile-shear-naive      tile_shear_naive       ShearSort, columns sorted in place
//   tile-shear-transpose  tile_shear_transpose   ShearSort, transpose / sort rows / transpose back
//   tile-shear-registers  tile_shear_registers   as transpose, each row sorted in 32 registers
//   tile-shear-padded     tile_shear_padded      ShearSort on a 32 x 33 tile, no transposes
// Replace each gpulab::not_implemented(...) with your code; the interface is shearsort.cuh.
// The merge stages (merge_pairwise.cu, merge_dway.cu) start from your tiles, and a stable merge
// sort needs stable tiles: write the tile kernel once, as a template over the key type, so that it
// can also sort 64-bit (key, position-in-tile) composites. Put what several files share in
// shear_device.cuh.
#include <cuda_runtime.h>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "shear_device.cuh"
#include "shearsort.cuh"

namespace shearsort {

// ---- 1.-2. the CPU stages ----------------------------------------------------------------------------------

// The whole array, ascending and stable. keys_out gets the sorted keys; with values (both value
// pointers non-null) values_out[i] is the value that came with keys_out[i], and equal keys keep
// their input order. The standard library is allowed here: this is the oracle.
void sort_cpu(const std::int32_t* keys_in, const std::uint32_t* values_in, std::int32_t* keys_out,
              std::uint32_t* values_out, std::size_t n) {
  (void)keys_in, (void)values_in, (void)keys_out, (void)values_out, (void)n;
  gpulab::not_implemented("cpu");
}

// ShearSort on every tile of kTileKeys keys, on the host. Tile key a = 32 c + i is column c (32
// consecutive keys), row i. Follow the round count in shearsort.cuh exactly, pad the last tile with
// INT_MAX and copy back only the keys below n. Sorting one column or row with std::sort is fine
// here; the GPU stages will use a comparator network instead. Try --param input=final-phase with
// and without the last column phase: what do the seeds' log2 w rounds leave?
void tile_shear_cpu(const std::int32_t* in, std::int32_t* out, std::size_t n) {
  (void)in, (void)out, (void)n;
  gpulab::not_implemented("cpu-shear");
}

// ---- 3.-7. the tile stages ------------------------------------------------------------------------------------
//
// Every stage: one warp per tile, kTileWarps warps (tiles) per block, one launch (the model's
// grid and R(n) = 1). Lane l moves keys 32 k + l (k = 0..31) between global and shared memory, so
// that every warp access is one 128-byte line. A partial last tile is padded in shared memory with
// a key that sorts last; nothing past n is read or written. Everything a lane reads that another
// lane wrote must come after a __syncwarp(); nothing needs the whole block.

// Batcher's bitonic network on the 1024 keys: 55 steps (merge size 2..1024, stride j), each with
// 512 compare-exchanges, 16 per lane. Which comparators does lane l take in a step, and which banks
// do the 32 lanes hit when j < 32? The bank model (gpulab experiment shearsort bank-model) counts
// 2560 excess wavefronts per tile for one natural choice; ncu should agree with yours.
void tile_bitonic(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("tile-bitonic");
}

// ShearSort with thread c sorting column c (keys 32 c .. 32 c + 31) and thread r row r (keys r,
// r + 32, ..., one bank) in shared memory, one compare-exchange at a time (kNetwork32, or any
// network). Access shared memory through a volatile pointer: otherwise the compiler may keep keys
// in registers between comparators, and the stage is not the one the model (and ncu) describe.
// Where do the 32 lanes' column accesses fall in the bank matrix?
void tile_shear_naive(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("tile-shear-naive");
}

// A column phase becomes: transpose the tile in place, sort rows, transpose back (seed 000 §5).
// The transposition is seed 000's Algorithm 2 (Appendix B): on diagonal i = 1..31, lane c swaps
// element (c, c + i) with (c + i, c). Which banks do the two words of a swap sit in? The seed puts
// a barrier in every step: how many does a warp need?
void tile_shear_transpose(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("tile-shear-transpose");
}

// As tile-shear-transpose, but a thread loads its row into 32 registers, runs the network there and
// stores the row back (seed 000 §6.3): 64 shared accesses a line instead of 4 per comparator. A
// local array stays in registers only when every index is a compile-time constant: unroll the
// network completely (kNetwork32 is constexpr). Check with -Xptxas -v: 0 bytes stack frame.
void tile_shear_registers(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("tile-shear-registers");
}

// Store the tile 32 x 33: key a = 32 c + i at word 33 c + i. Which banks does a column walk hit now,
// and a row walk? Then no transposes are needed (seed 000 kept the tile at w^2 words because
// shared memory was small; 33/32 of it costs 3 %).
void tile_shear_padded(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("tile-shear-padded");
}

}  // namespace shearsort
