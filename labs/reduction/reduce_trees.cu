// Your file, part 1 of 3: one value per block, a launch per level (README.md, "Stages, in order": 1-4).
//   cpu               reduce_cpu                 the left fold (the oracle every stage is checked against)
//   global-tree       reduce_global_tree         seed 003's find-max pattern, in global memory
//   tree-interleaved  reduce_tree_interleaved    block tree in shared memory, interleaved addressing
//   tree              reduce_tree                seed 004 §5.1.1, Algorithm 1 (commutative only)
// Replace each gpulab::not_implemented(...) with your code; the interface is reduction.cuh.
// Every function is a template over the operator: write it once with Op::identity() and op(l, r),
// never with 0 and +; the instantiations at the end build it for the operators it supports.
#include <cuda_runtime.h>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "reduce_device.cuh"
#include "reduction.cuh"

namespace reduction {

// ---- 1. cpu ----------------------------------------------------------------------------------------------
template <class Op>
Value<Op> reduce_cpu(const Value<Op>* in, std::size_t n, Op op) {
  // One loop from the identity, left to right: acc = op(acc, in[i]).
  (void)in, (void)n, (void)op;
  gpulab::not_implemented("cpu");
}

// ---- 2. global-tree (seed 003) -----------------------------------------------------------------------------
//
// Level d = 1, 2, ... combines nodes of 2^d elements, one launch per level, in global memory.
// Seed 003's kernFindMax is where this starts, and it is not right for every n and every operator
// (question 8 asks why): make yours work for every n and every operator. Hint: let node j of level d live at its last existing element,
// min((j + 1) 2^d, n) - 1; then a node without a right half needs no work. Combine left first.
// Level 1 reads d_in and writes a copy in ws.take<Value<Op>>(n); the last level writes d_out.
template <class Op>
void reduce_global_tree(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  // n == 0: write_value_kernel<<<1, 1>>>(d_out, Op::identity()). Launches: max(1, ceil(log2 n)).
  (void)d_in, (void)n, (void)d_out, (void)ws, (void)op;
  gpulab::not_implemented("global-tree");
}

// ---- 3./4. block trees in shared memory ------------------------------------------------------------------
//
// A block of T = ws.config.block threads reduces 2T consecutive elements to one partial; repeat
// on the partials (ping-pong between two pieces of ws) until one is left, the last level writing
// d_out. Elements past n are Op::identity(). Keep multi-word elements in shared memory as
// SharedPlanes<Value<Op>> (reduction.cuh): then every access is 32 bits wide.
template <class Op>
void reduce_tree_interleaved(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  // Thread t starts with elements (2t, 2t+1); at stride s = 1, 2, ..., thread t with k = 2 s t < T
  // does x[k] = op(x[k], x[k + s]). Why is this in order, and which banks do the lanes hit?
  (void)d_in, (void)n, (void)d_out, (void)ws, (void)op;
  gpulab::not_implemented("tree-interleaved");
}

template <class Op>
void reduce_tree(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  // Algorithm 1: x[t] = in[t] (+) in[T + t] while loading, then for s = T/2 .. 1: if (t < s)
  // x[t] = op(x[t], x[t + s]) (the seed's listing forgets the "if"). Conflict-free; order?
  (void)d_in, (void)n, (void)d_out, (void)ws, (void)op;
  gpulab::not_implemented("tree");
}

REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_CPU, reduce_cpu)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_global_tree)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_tree_interleaved)
REDUCTION_FOR_COMMUTATIVE_OPS(REDUCTION_INSTANTIATE_GPU, reduce_tree)

}  // namespace reduction
