// The transpose lab: YOUR file. Write every stage below (read labs/transpose/README.md first).
// The interface and the layout of in/out are in transpose.cuh; lab.cu checks each stage against a
// CPU transpose and times it. Run one stage with
//   build/default/gpulab run transpose --stage tiled --n 1000x999
// and all tests with ctest, or `gpulab run transpose --impl student`.
//
// Rules of the game:
//   * every size must work (1 x n, n x 1, 31 x 33, 1000 x 999): bounds-check the tile edges instead
//     of assuming multiples of 32;
//   * index with std::size_t: 8192 x 8192 is fine in int, 100000 x 100000 is not;
//   * check every launch with GPULAB_CHECK_LAUNCH();
//   * the empty matrix (rows or cols = 0) is valid: launch nothing (a grid of 0 CTAs is an error).
// (README, "Rules" and "Stages, in order".)
#include <cuda_runtime.h>

#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "transpose.cuh"

namespace transpose {

// ---- 1. copy -----------------------------------------------------------------------------------
// The roof: out[i] = in[i] for all rows * cols floats. Everything else is measured against it.
// Hints:
//   * a grid-stride loop (i += gridDim.x * blockDim.x) handles any size with a bounded grid;
//   * reinterpret the buffers as float4 for 128-bit loads (cudaMalloc returns 256-byte aligned
//     pointers), then copy the 0..3 floats left over with a second, scalar loop or kernel;
//   * 256 threads per CTA is a good start; compare with the `memcpy` baseline stage.
void copy(const float* in, float* out, std::size_t rows, std::size_t cols) {
  (void)in, (void)out, (void)rows, (void)cols;
  gpulab::not_implemented("copy");
}

// ---- 2. copy-shared ----------------------------------------------------------------------------
// Same result as copy, but every 32 x 32 tile is staged in a __shared__ float tile[32][32]:
// read a tile row by row, __syncthreads(), write it back to the same place.
// Hints:
//   * CTA = dim3(kTile, kBlockRows) = 32 x 8 threads; thread (tx, ty) handles rows ty, ty + 8, ...
//   * grid = (ceil(cols / 32), ceil(rows / 32)); gridDim.y is at most 65535, so loop over tile rows
//     (tile_row += gridDim.y) if you want n x 1 with n > 2 million to work;
//   * this shows what a round trip through shared memory costs when there are no conflicts.
void copy_shared(const float* in, float* out, std::size_t rows, std::size_t cols) {
  (void)in, (void)out, (void)rows, (void)cols;
  gpulab::not_implemented("copy-shared");
}

// ---- 3. naive ----------------------------------------------------------------------------------
// out[c * rows + r] = in[r * cols + c], one element per thread (or four, with the 32 x 8 CTA).
// Hint: let threadIdx.x walk c, so the reads of a warp are coalesced. Where do the writes of one
// warp land? Count the 128-byte lines one warp instruction touches (seed 000 §2.1, "coalesced").
void naive(const float* in, float* out, std::size_t rows, std::size_t cols) {
  (void)in, (void)out, (void)rows, (void)cols;
  gpulab::not_implemented("naive");
}

// ---- 4. tiled ----------------------------------------------------------------------------------
// Coalesced on both sides: read a 32 x 32 tile of in along its rows into __shared__ float
// tile[32][32], __syncthreads(), then write the tile's COLUMNS as rows of out, at the transposed
// tile position (tile (i, j) of in becomes tile (j, i) of out).
// Hints:
//   * on the write side, threadIdx.x must walk the rows of out contiguously: lane x reads tile[x][y];
//   * that column read is the 32-way bank conflict this stage is meant to show: run
//     `ncu --section SourceCounters` (README) and look at "L1 Wavefronts Shared Excessive";
//   * __syncthreads() again before the tile is reused.
void tiled(const float* in, float* out, std::size_t rows, std::size_t cols) {
  (void)in, (void)out, (void)rows, (void)cols;
  gpulab::not_implemented("tiled");
}

// ---- 5. padded ---------------------------------------------------------------------------------
// tiled with one change: tile[32][33]. Work out with the bank model (README) which bank word
// (x, y) of the tile falls in, for x = 0..31, before and after the padding.
// Must be conflict-free (graded with Nsight Compute). Keep blockDim.x == 32: the README shows
// why padding stops working when a warp spans two tile rows.
void padded(const float* in, float* out, std::size_t rows, std::size_t cols) {
  (void)in, (void)out, (void)rows, (void)cols;
  gpulab::not_implemented("padded");
}

// ---- 6. swizzled -------------------------------------------------------------------------------
// A 32 x 32 tile again, no padding: store logical element (row, col) at tile[row][p(row, col)],
// where p(row, .) is a permutation of 0..31 that depends on the row. Choose p so that the row-wise
// stores and the column-wise loads both touch 32 distinct banks (draw the bank matrix: README,
// "Stages, in order"); one cheap integer operation suffices. Must be conflict-free.
void swizzled(const float* in, float* out, std::size_t rows, std::size_t cols) {
  (void)in, (void)out, (void)rows, (void)cols;
  gpulab::not_implemented("swizzled");
}

// ---- 7. in-place-sweep -------------------------------------------------------------------------
// seed 000 Appendix B, Algorithm 2. Load a 32 x 32 tile row-wise into __shared__ float
// tile[32 * 32] (no padding), transpose it IN PLACE, then store its rows as rows of out.
// The sweep: for each diagonal i = 1..31, lane `col` (< 32 - i) swaps tile[col][col + i] with
// tile[col + i][col].
// Hints:
//   * write the sweep as a __device__ function transposing one square; stage 8 reuses it;
//   * check the banks of both words lane `col` touches in one step: they are conflict-free;
//   * how do the 8 warps of a 32 x 8 CTA share the 31 diagonals without racing?
//   * out-of-range tile elements: fill them with 0.0f so the sweep never reads uninitialised
//     shared memory, and never store them.
// Must be conflict-free.
void in_place_sweep(const float* in, float* out, std::size_t rows, std::size_t cols) {
  (void)in, (void)out, (void)rows, (void)cols;
  gpulab::not_implemented("in-place-sweep");
}

// ---- 8. in-place-sweep-rect --------------------------------------------------------------------
// The seed's m = 2n case: a 64 x 32 tile (64 rows of in, 32 columns), stored row-major in
// __shared__ float tile[64 * 32], is two 32 x 32 squares one above the other. Sweep each square in
// place; then element (r, c) of the 32 x 64 transposed tile is element (r, c % 32) of square c / 32.
// Hints:
//   * write that index arithmetic as a small __device__ function;
//   * grid.y counts 64-row tiles; the CTA is still 32 x 8 (each thread loads 8 elements);
//   * on the way out, lanes walk c % 32 inside one square, so the reads are row-wise.
// Must be conflict-free.
void in_place_sweep_rect(const float* in, float* out, std::size_t rows, std::size_t cols) {
  (void)in, (void)out, (void)rows, (void)cols;
  gpulab::not_implemented("in-place-sweep-rect");
}

}  // namespace transpose
