// Your file, part 3 of 3: a warp is seed 004's multiprocessor with a small shared-memory
// structure; order is kept (README.md, "Stages, in order": 6-8).
//   pipeline-heap  reduce_pipeline_heap   the pipeline algorithm with node L at word L
//   pipeline       reduce_pipeline        seed 004 §5.2, Algorithms 4-6, the 2b layout of Fig. 8
//   matrix         reduce_matrix          seed 004 §5.2.1: b x (b + 1) staging
// Replace each gpulab::not_implemented(...) with your code; the interface is reduction.cuh.
#include <cuda_runtime.h>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "reduce_device.cuh"
#include "reduction.cuh"

namespace reduction {

// ---- 6./7. the pipeline algorithm ---------------------------------------------------------------------------
//
// Each warp owns 64 shared words (2b) and a contiguous share of rows (a row = 32 lanes x one
// 128-bit vector, folded in the lane first). Leaves = nodes 0..31, node 32 + m = node 2m (+)
// node 2m + 1, root = node 62, node 63 = the running value. Per step lane e stores leaf e of the
// next row and computes node 32 + e; after the last row, 5 steps with identity leaves drain it.
// Read Algorithm 5 closely before you copy it: it never initialises the 64 words, it flushes with
// 0, and its lane 31 combines (newest root) (+) (running value). Which order does that produce?
// The lanes are not in lockstep: which __syncwarp() calls does one step need?
//   pipeline-heap: node L at word L.      pipeline: Fig. 8 (even L: word L/2; odd L: word
//   32 + ((L - 1)/2 + 16) mod 32). Predict the bank conflicts of both before you measure.
template <class Op>
void reduce_pipeline_heap(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  (void)d_in, (void)n, (void)d_out, (void)ws, (void)op;
  gpulab::not_implemented("pipeline-heap");
}

template <class Op>
void reduce_pipeline(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  (void)d_in, (void)n, (void)d_out, (void)ws, (void)op;
  gpulab::not_implemented("pipeline");
}

// ---- 8. matrix ------------------------------------------------------------------------------------------------
//
// Per tile of 1024 consecutive elements: row r (elements 32 r + lane) goes to word 33 r + lane of
// the warp's 32 x 33 matrix; lane c then folds words 33 c .. 33 c + 31 (elements 32 c .. 32 c + 31);
// the lanes join in order; tiles join in order. 1056 words per warp: compute the occupancy.
template <class Op>
void reduce_matrix(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  (void)d_in, (void)n, (void)d_out, (void)ws, (void)op;
  gpulab::not_implemented("matrix");
}

REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_pipeline_heap)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_pipeline)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_matrix)

}  // namespace reduction
