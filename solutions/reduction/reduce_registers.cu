// Reference, part 2 of 3: many elements per thread, folded in registers; two launches.
//   cascading          reduce_cascading           seed 004 §5.1.2, Algorithms 2-3 (commutative)
//   ordered-registers  reduce_ordered_registers   block tiles, striped 128-bit loads, in order (the challenge)
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
// per thread in flight (the latency x bandwidth product of a modern GPU needs tens of KB per SM:
// the grid sweep). Then the block combines its threads (Algorithm 3 lines 8-12) and one
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
// Order needs each warp's values to cover a contiguous range, and cascading's strided columns do
// not. Here a block owns a contiguous share of *block tiles* (warp_share_begin over blocks); a
// block tile is its warps' tiles side by side, so in every round the block reads one contiguous
// run (16 KB at block 256), as cub::BlockLoad does for cub-block-raking. In its tile a warp loads
// kOrderedVectors 128-bit vectors per lane (striped or blocked: vector_of_lane), folds each
// lane's run in order and joins the lanes with the order-preserving shuffle combine.
// Warp w's value for round r goes to a shared ring at slot r*warps + w, which is the tiles'
// order; every kOrderedRing rounds one barrier, then warp 0 folds the ring into the block's
// value while the others go on into the other half of the ring (double buffered: the barrier
// of the next epoch keeps them from overwriting what warp 0 still reads). One barrier per
// kOrderedRing rounds, where a block reduce per tile (cub-block-raking) needs two per tile.
// One contiguous share per warp (no ring) measured 1-2 % slower for affine (H100 and H200,
// 2026-11-23): 0.98x cub-block-raking, against 1.007x for block tiles (H200, n = 2^28).
// Where lane l's kOrderedVectors vectors lie in a warp tile. Striped (vector j*32 + l): every
// load instruction reads 512 contiguous bytes, but each stripe needs its own shuffle combine.
// Blocked (vectors 4l .. 4l + 3): one combine per tile. For 16-byte elements (mat2: one element
// per vector, an expensive combine) blocked wins: H200, n = 2^28, 2026-11-23: striped 1.15 ms,
// blocked 0.98 ms; for affine and sum striped (0.488 ms against 0.500 ms for affine).
template <class T>
inline constexpr bool kOrderedBlocked = kVec<T> == 1;

template <class T>
__device__ __forceinline__ int vector_of_lane(int lane, int j) {
  return kOrderedBlocked<T> ? lane * kOrderedVectors + j : j * kWarp + lane;
}

// A warp tile's value (valid in lane 0): the elements at[0 .. min(tile, left)) in order.
template <class Op>
__device__ __forceinline__ Value<Op> warp_tile_ordered(const Value<Op>* at, std::size_t left, int lane, Op op) {
  using T = Value<Op>;
  constexpr int V = kVec<T>;
  T v = Op::identity();
  if (left >= unit_elements_ordered<T>()) {
    T e[kOrderedVectors][V];
#pragma unroll
    for (int j = 0; j < kOrderedVectors; ++j) load_vector(at + vector_of_lane<T>(lane, j) * V, e[j]);
    if constexpr (kOrderedBlocked<T>) {
#pragma unroll
      for (int j = 0; j < kOrderedVectors; ++j)
#pragma unroll
        for (int k = 0; k < V; ++k) v = op(v, e[j][k]);
      return detail::warp_reduce_ordered(v, op);
    } else {
#pragma unroll
      for (int j = 0; j < kOrderedVectors; ++j) {
        T x = e[j][0];
#pragma unroll
        for (int k = 1; k < V; ++k) x = op(x, e[j][k]);
        v = op(v, detail::warp_reduce_ordered(x, op));
      }
    }
  } else if constexpr (kOrderedBlocked<T>) {  // the last, partial tile (or none: left == 0)
    v = detail::fold_guarded<Op, kOrderedVectors * V>(at, vector_of_lane<T>(lane, 0) * V, left, op);
    v = detail::warp_reduce_ordered(v, op);
  } else {
    for (int j = 0; j < kOrderedVectors; ++j)
      v = op(v, detail::warp_reduce_ordered(
                    detail::fold_guarded<Op, V>(at, vector_of_lane<T>(lane, j) * V, left, op), op));
  }
  return v;
}

template <class Op>
__global__ void ordered_registers_kernel(const Value<Op>* in, std::size_t n, Value<Op>* out, Op op) {
  using T = Value<Op>;
  constexpr std::size_t tile = unit_elements_ordered<T>();
  constexpr int kSlots = kOrderedRing * kWarp;  // one half of the ring, for up to 32 warps
  __shared__ std::uint32_t ring_words[kWords<T> * 2 * kSlots];
  const SharedPlanes<T> ring{ring_words, 2 * kSlots};
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  const std::size_t block_tile = tile * warps;
  const std::size_t rounds = ceil_div(n, block_tile);
  std::size_t round = warp_share_begin(rounds, gridDim.x, blockIdx.x);
  const std::size_t last = warp_share_begin(rounds, gridDim.x, blockIdx.x + 1);
  std::size_t at = round * block_tile + warp * tile;  // this warp's tile in the current round
  T acc = Op::identity();                               // meaningful in thread 0
  for (int half = 0; round < last; half ^= 1) {
    const int count = static_cast<int>(min(last - round, std::size_t{kOrderedRing}));  // rounds this epoch
#pragma unroll 1
    for (int r = 0; r < count; ++r, at += block_tile) {
      const std::size_t begin = min(at, n);  // past the end in the last round: nothing is read
      const T v = warp_tile_ordered(in + begin, n - begin, lane, op);
      if (lane == 0) ring.store(half * kSlots + r * warps + warp, v);
    }
    round += count;
    __syncthreads();
    if (warp == 0) {  // the epoch's count x warps values, in order, 32 at a time (conflict-free)
#pragma unroll 1
      for (int c = 0; c < count * warps; c += kWarp) {
        const T x = c + lane < count * warps ? ring.load(half * kSlots + c + lane) : Op::identity();
        acc = op(acc, detail::warp_reduce_ordered(x, op));
      }
    }
  }
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

template <class Op>
void reduce_ordered_registers(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  detail::one_pass(ordered_registers_kernel<Op>, d_in, n, d_out, ws, op, unit_elements_ordered<Value<Op>>());
}

REDUCTION_FOR_COMMUTATIVE_OPS(REDUCTION_INSTANTIATE_GPU, reduce_cascading)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_ordered_registers)

}  // namespace reduction
