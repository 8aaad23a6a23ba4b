// Reference, part 2 of 3: many elements per thread, folded in registers; two launches.
//   cascading          reduce_cascading           seed 004 §5.1.2, Algorithms 2-3 (commutative)
//   ordered-registers  reduce_ordered_registers   blocked 128-bit loads, in order (the challenge)
#include <cuda_runtime.h>

#include "gpulab/cuda_check.hpp"
#include "reduce_device.cuh"
#include "reduction.cuh"

namespace reduction {

using detail::load_vector;

// ---- 5. cascading -------------------------------------------------------------------------------------------
//
// Algorithm 3 views the input as a matrix with p columns (row-major) and lets core e fold column e
// (line 5: T[i p + b rho + e]): here a column is a 128-bit vector and p = grid x block, i.e. a
// grid-stride loop over vectors. Four independent vectors per thread per iteration keep 64 bytes
// per thread in flight (the latency x bandwidth product of a modern GPU needs tens of KB per SM,
// labs-brief §1.5 item 4). Then the block combines its threads (Algorithm 3 lines 8-12) and one
// small launch combines the blocks (Algorithm 2 line 2). A thread's column is not a contiguous
// range: commutative operators only.
template <class Op>
__global__ void cascading_kernel(const Value<Op>* in, std::size_t n, Value<Op>* out, Op op) {
  static_assert(Op::commutative, "cascading (seed 004 Algorithm 3) needs a commutative operator");
  using T = Value<Op>;
  constexpr int V = kVec<T>;
  const std::size_t vectors = n / V;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t tid = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  T acc = Op::identity();
  auto fold = [&](const T (&v)[V]) {
#pragma unroll
    for (int k = 0; k < V; ++k) acc = op(acc, v[k]);
  };
  std::size_t i = tid;
  for (; i + (kCascadeVectors - 1) * stride < vectors; i += kCascadeVectors * stride) {
    T v[kCascadeVectors][V];
#pragma unroll
    for (int u = 0; u < kCascadeVectors; ++u) load_vector(in + (i + u * stride) * V, v[u]);
#pragma unroll
    for (int u = 0; u < kCascadeVectors; ++u) fold(v[u]);
  }
  for (; i < vectors; i += stride) {
    T v[V];
    load_vector(in + i * V, v);
    fold(v);
  }
  // The n % V elements past the last whole vector.
  if (tid < n - vectors * V) acc = op(acc, in[vectors * V + tid]);
  acc = detail::block_reduce_ordered(acc, op);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

template <class Op>
void reduce_cascading(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  detail::one_pass(cascading_kernel<Op>, d_in, n, d_out, ws, op, unit_elements_cascading<Value<Op>>());
}

// ---- 9. ordered-registers ---------------------------------------------------------------------------------
//
// Order needs each thread to own *consecutive* elements (a blocked arrangement), where cascading's
// columns are strided. A warp owns a contiguous share of tiles (warp_share_begin: shares follow
// warp order); in a tile lane l loads kOrderedVectors consecutive 128-bit vectors (64 bytes:
// still every byte of every sector is used, across the four loads), folds them in order, and the
// warp joins its 32 lane values with the order-preserving shuffle combine. The warp's running
// value is (tiles so far) (+) (this tile): left first. Warps, then blocks, are combined in index
// order. No shared memory besides the block's 32 warp partials: nothing to conflict.
template <class Op>
__global__ void ordered_registers_kernel(const Value<Op>* in, std::size_t n, Value<Op>* out, Op op) {
  using T = Value<Op>;
  constexpr int V = kVec<T>, E = kOrderedVectors * V;  // elements per lane per tile
  constexpr std::size_t tile = unit_elements_ordered<T>();
  const int lane = threadIdx.x % kWarp;
  const std::size_t warps = std::size_t(gridDim.x) * (blockDim.x / kWarp);
  const std::size_t w = blockIdx.x * std::size_t(blockDim.x / kWarp) + threadIdx.x / kWarp;
  const std::size_t tiles = ceil_div(n, tile);
  const std::size_t first = warp_share_begin(tiles, warps, w), last = warp_share_begin(tiles, warps, w + 1);
  T acc = Op::identity();  // meaningful in lane 0
  for (std::size_t u = first; u < last; ++u) {
    const std::size_t at = u * tile + std::size_t(lane) * E;
    T v = Op::identity();
    if ((u + 1) * tile <= n) {
      T e[kOrderedVectors][V];
#pragma unroll
      for (int j = 0; j < kOrderedVectors; ++j) load_vector(in + at + j * V, e[j]);
#pragma unroll
      for (int j = 0; j < kOrderedVectors; ++j)
#pragma unroll
        for (int k = 0; k < V; ++k) v = op(v, e[j][k]);
    } else {
      v = detail::fold_guarded<Op, E>(in, at, n, op);  // the last, partial tile
    }
    acc = op(acc, detail::warp_reduce_ordered(v, op));
  }
  // Only lane 0 holds the warp's value; the other lanes' accs mix partial lane ranges.
  acc = detail::block_reduce_ordered(lane == 0 ? acc : Op::identity(), op);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

template <class Op>
void reduce_ordered_registers(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  detail::one_pass(ordered_registers_kernel<Op>, d_in, n, d_out, ws, op, unit_elements_ordered<Value<Op>>());
}

REDUCTION_FOR_COMMUTATIVE_OPS(REDUCTION_INSTANTIATE_GPU, reduce_cascading)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_ordered_registers)

}  // namespace reduction
