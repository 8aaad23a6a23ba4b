// Your file, part 2 of 3: many elements per thread, folded in registers (README.md, "Stages, in order": 5 and EC).
//   cascading          reduce_cascading           seed 004 §5.1.2, Algorithms 2-3 (commutative only)
//   ordered-registers  reduce_ordered_registers   the challenge: as fast, for any associative operator
// Replace each gpulab::not_implemented(...) with your code; the interface is reduction.cuh.
#include <cuda_runtime.h>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "reduce_device.cuh"
#include "reduction.cuh"

namespace reduction {

// ---- 5. cascading -------------------------------------------------------------------------------------------
//
// Two launches (reduction.cuh, "contracts"): G blocks, G = first_round_grid(units, T / 32,
// SMs x resident blocks from cudaOccupancyMaxActiveBlocksPerMultiprocessor, asked once); each
// thread folds a column of the input seen as a matrix with G x T columns of 128-bit vectors
// (Algorithm 3 line 5), kCascadeVectors independent loads per iteration; the block combines its
// threads and writes one partial; one block of a second launch combines the G partials.
// Benchmark: at n = 2^28 with sum, >= 0.95x cub-sum.
template <class Op>
void reduce_cascading(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  (void)d_in, (void)n, (void)d_out, (void)ws, (void)op;
  gpulab::not_implemented("cascading");
}

// ---- 9. ordered-registers (challenge) ------------------------------------------------------------------------
//
// Give each warp a contiguous share of tiles (warp_share_begin); in a tile, lane l loads
// kOrderedVectors *consecutive* 128-bit vectors (a blocked arrangement), folds them in order, and
// the warp joins its 32 values with shuffles that keep the order: offsets 1, 2, 4, 8, 16 with
// lane i taking op(x_i, x_{i+d}). Why is the usual 16, 8, 4, 2, 1 wrong for a non-commutative op?
// Then warps, then blocks, in index order. Benchmarks: with affine, >= 1.0x cub-block-raking and
// >= 2x cub-scan-last. One share per warp is correct and close; what it takes to pass the peer is
// yours to find (read how cub::BlockLoad feeds cub-block-raking, and measure).
template <class Op>
void reduce_ordered_registers(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  (void)d_in, (void)n, (void)d_out, (void)ws, (void)op;
  gpulab::not_implemented("ordered-registers");
}

REDUCTION_FOR_COMMUTATIVE_OPS(REDUCTION_INSTANTIATE_GPU, reduce_cascading)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_ordered_registers)

}  // namespace reduction
