// Your file, part 2 of 4: the scans that read the input once or twice (README.md, "Stages, in order"; alpha-matrix and single-pass are extra credit).
//   three-round   exclusive_scan_three_round     reduce / spine / scan over tiles (seed 000 §4)
//   alpha-matrix  exclusive_scan_alpha_matrix    seed 004 §6, Algorithms 7 and 8
//   single-pass   exclusive_scan_single_pass     decoupled look-back (the challenge)
// Replace each gpulab::not_implemented(...) with your code; the interface is scan.cuh.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "scan.cuh"

namespace scan {

// ---- 6. three-round ---------------------------------------------------------------------------------
//
// p tiles of whole "pages" (a page = what one block holds in registers at once, e.g. B threads
// x 16 ints), one block per tile, p = (SMs: ws.multiprocessors) x (blocks that fit on an SM:
// cudaOccupancyMaxActiveBlocksPerMultiprocessor, computed once in a static).
// Suggested kernels:
//   __global__ void reduce_tiles(const int* in, std::size_t n, std::size_t tile_size, int* tile_sums);
//   __global__ void spine_scan(int* tile_sums, std::size_t tiles);            // <<<1, 1024>>>
//   __global__ void scan_tiles(const int* in, int* out, std::size_t n, std::size_t tile_size,
//                              const int* tile_offsets);
// Hints:
// - 128-bit loads: *reinterpret_cast<const int4*>(in + i) when i % 4 == 0 and i + 3 < n; fall
//   back to scalar loads at the end of the array. Four int4 per thread in flight per page.
// - Scan a page in registers: each thread sums its vectors, a warp scans the sums with
//   __shfl_up_sync, the warps' totals meet in shared memory (one __syncthreads per page).
// - Carry the running sum of the tile from page to page in a register.
// - For information (not graded): the reference reaches 0.87x CUB at n = 2^28 (RESULTS.md, "NVIDIA H200").
void exclusive_scan_three_round(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("three-round");
}

// ---- 7. alpha-matrix (seed 004 §6) ------------------------------------------------------------------
//
// alpha = ws.config.alpha (1..32). One warp is one AGPU multiprocessor with b = 32 cores and owns
// an alpha x 33 matrix of ints in dynamic shared memory; a block has kAlphaWarpsPerBlock warps,
// so launch it with alpha_matrix_shared_bytes(alpha) bytes (scan.cuh: the alpha sweep's occupancy
// column assumes exactly this layout). Rounds 1 and 2 are three-round's (reuse your kernels with
// one tile per warp); round 3 is Algorithm 8: per matrix of alpha * 32 elements,
//   read alpha rows of 32 (coalesced); element e = 32 j + lane goes to row e % alpha, column e / alpha
//   core c sums column c; the warp scans the 32 column sums; core c scans column c
//   write the matrix back row by row.
// Make alpha a template parameter (dispatch 1..32 once): e % alpha and e / alpha by a constant
// are cheap, and the row loops unroll so that all alpha loads are in flight together.
void exclusive_scan_alpha_matrix(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("alpha-matrix");
}

// ---- 10. single-pass: decoupled look-back (Merrill & Garland 2016), the challenge -------------------
//
// One launch; each block scans one tile and learns the sum of everything before it from its
// predecessors' descriptors (README.md, "Stages, in order"):
// - the tile index: blockIdx.x (relies on in-order dispatch, as CUB does) or atomicAdd on a counter
//   (guaranteed); both are accepted, question 8 compares them;
// - descriptor = one 64-bit word {status, value}: none / aggregate / inclusive prefix, so that a
//   reader never sees a new status with an old value; cuda::atomic_ref (<cuda/atomic>) with
//   memory_order_relaxed loads and stores;
// - descriptors and the counter start at 0: cudaMemsetAsync on ws.take(...) before the launch
//   (a memset is not a kernel launch);
// - warp 0 looks back 32 tiles at a time: lane l reads tile - 1 - l, __ballot_sync finds the
//   nearest inclusive prefix, a warp sum adds the aggregates up to it.
// For information (not graded): the reference reaches 1.05x CUB at n = 2^28 (RESULTS.md).
void exclusive_scan_single_pass(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("single-pass");
}

}  // namespace scan
