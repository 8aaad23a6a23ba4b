// Reference, part 1 of 3: one value per block and a launch per level.
//   cpu               reduce_cpu                 the left fold from the identity
//   global-tree       reduce_global_tree         seed 003's find-max pattern, padded correctly
//   tree-interleaved  reduce_tree_interleaved    interleaved addressing: in order, bank conflicts
//   tree              reduce_tree                seed 004 §5.1.1 Algorithm 1: sequential addressing
#include <cuda_runtime.h>

#include "gpulab/cuda_check.hpp"
#include "reduce_device.cuh"
#include "reduction.cuh"

namespace reduction {

// ---- 1. cpu -------------------------------------------------------------------------------------------

template <class Op>
Value<Op> reduce_cpu(const Value<Op>* in, std::size_t n, Op op) {
  Value<Op> acc = Op::identity();
  for (std::size_t i = 0; i < n; ++i) acc = op(acc, in[i]);
  return acc;
}

// ---- 2. global-tree (seed 003, kernFindMax) -------------------------------------------------------------
//
// Level d combines nodes of 2^d elements in place. Node j of level d covers [j 2^d, (j+1) 2^d)
// clipped to n and lives at its last existing element, min((j+1) 2^d, n) - 1: then a node whose
// right half is empty already sits where its left child sits and needs no work, and n need not be
// a power of two. Seed 003 instead only walks the largest power of two <= n (elements past it are
// never compared) and pads with 0. Thread j works on node j (003 computes
// index * 2^d - 1, so its thread 0 idles at every level). The left child is combined first,
// op(left, right) -- 003 writes max(buff[right], buff[left]), harmless only because max
// commutes -- so the order is kept. Level 1 reads the input (copying a lone last element); the
// last level, a single node, writes d_out: R = max(1, ceil(log2 n)) launches.

template <class Op>
__global__ void global_tree_first(const Value<Op>* in, std::size_t n, Value<Op>* buf, Value<Op>* out, Op op) {
  const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (2 * j >= n) return;
  const Value<Op> v = 2 * j + 1 < n ? op(in[2 * j], in[2 * j + 1]) : in[2 * j];
  if (out) out[0] = v;
  else buf[std::min(2 * j + 2, n) - 1] = v;
}

template <class Op>
__global__ void global_tree_level(Value<Op>* buf, std::size_t n, int d, Value<Op>* out, Op op) {
  const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t half = std::size_t{1} << (d - 1);
  const std::size_t left = (2 * j + 1) * half - 1;  // last element of the left child
  if (left + 1 >= n) return;                       // no right child: nothing to do
  const std::size_t right = std::min((j + 1) * 2 * half, n) - 1;
  const Value<Op> v = op(buf[left], buf[right]);
  if (out) out[0] = v;
  else buf[right] = v;
}

template <class Op>
void reduce_global_tree(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  const int block = detail::checked_block(ws);
  if (n == 0) {
    write_value_kernel<<<1, 1>>>(d_out, Op::identity());
    GPULAB_CHECK_LAUNCH();
    return;
  }
  int levels = 0;
  while ((std::size_t{1} << levels) < n) ++levels;
  levels = std::max(levels, 1);
  Value<Op>* buf = levels > 1 ? ws.take<Value<Op>>(n) : nullptr;
  global_tree_first<<<static_cast<unsigned>(ceil_div(ceil_div(n, 2), block)), block>>>(
      d_in, n, buf, levels == 1 ? d_out : nullptr, op);
  GPULAB_CHECK_LAUNCH();
  for (int d = 2; d <= levels; ++d) {
    const std::size_t half = std::size_t{1} << (d - 1);
    const std::size_t nodes = ceil_div(n - half, 2 * half);  // nodes with a right child
    global_tree_level<<<static_cast<unsigned>(ceil_div(nodes, block)), block>>>(buf, n, d,
                                                                                 d == levels ? d_out : nullptr, op);
    GPULAB_CHECK_LAUNCH();
  }
}

// ---- 3./4. block trees in shared memory -----------------------------------------------------------------
//
// A block of T threads reduces 2T consecutive elements to one partial; the partials are reduced
// the same way until one value is left (seed 004 Algorithm 1, lines 4-26): R = levels. Elements
// past n are the identity (not 0: max, interval, affine and mat2 would change).

enum class Addressing { interleaved, sequential };

template <class Op, Addressing A>
__global__ void block_tree_kernel(const Value<Op>* in, std::size_t n, Value<Op>* out, Op op) {
  using T = Value<Op>;
  extern __shared__ std::uint32_t smem[];
  const int t = threadIdx.x, block = blockDim.x;
  const SharedPlanes<T> x{smem, block};
  const std::size_t base = blockIdx.x * 2 * std::size_t(block);
  if constexpr (A == Addressing::interleaved) {
    // Thread t starts with the adjacent pair (2t, 2t+1); level s joins x[2st] with its right
    // neighbour x[2st + s]: always two adjacent ranges, left first, so any associative operator
    // works. The cost is the stride: 2s t hits bank (2s t) mod 32, a gcd(2s, 32)-way conflict
    // for the active lanes (reduction_model.hpp, tree_interleaved_requests).
    const std::size_t i = base + 2 * std::size_t(t);
    const T a = i < n ? in[i] : Op::identity();
    const T b = i + 1 < n ? in[i + 1] : Op::identity();
    x.store(t, op(a, b));
    __syncthreads();
    for (int s = 1; s < block; s *= 2) {
      const int k = 2 * s * t;
      if (k < block) x.store(k, op(x.load(k), x.load(k + s)));
      __syncthreads();
    }
  } else {
    // Algorithm 1: the first (+) while loading (lines 9-11: elements t and T + t), then
    // x[t] (+)= x[t + s] for s = T/2 .. 1 (line 14, with the "t < s" guard the seed omits). Active lanes touch consecutive words: no conflicts. But element t
    // meets element T + t first: the order is lost, so this is for commutative operators only.
    static_assert(Op::commutative, "tree (seed 004 Algorithm 1) needs a commutative operator");
    const std::size_t i = base + t;
    const T a = i < n ? in[i] : Op::identity();
    const T b = i + block < n ? in[i + block] : Op::identity();
    x.store(t, op(a, b));
    __syncthreads();
    for (int s = block / 2; s > 0; s /= 2) {
      if (t < s) x.store(t, op(x.load(t), x.load(t + s)));
      __syncthreads();
    }
  }
  if (t == 0) out[blockIdx.x] = x.load(0);
}

template <class Op, Addressing A>
void block_tree_levels(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  using T = Value<Op>;
  const int block = detail::checked_block(ws);
  if (n == 0) {
    write_value_kernel<<<1, 1>>>(d_out, Op::identity());
    GPULAB_CHECK_LAUNCH();
    return;
  }
  const std::size_t per_block = 2 * std::size_t(block);
  const std::size_t shared = std::size_t(block) * sizeof(T);
  // Ping-pong: level i writes buffer i % 2; level i + 2 has fewer partials than level i.
  const std::size_t first = ceil_div(n, per_block);
  T* buffers[2] = {nullptr, nullptr};
  if (first > 1) {
    buffers[0] = ws.take<T>(first);
    buffers[1] = ws.take<T>(ceil_div(first, per_block));
  }
  const T* src = d_in;
  std::size_t count = n;
  for (int level = 0;; ++level) {
    const std::size_t blocks = ceil_div(count, per_block);
    T* dst = blocks == 1 ? d_out : buffers[level % 2];
    block_tree_kernel<Op, A><<<static_cast<unsigned>(blocks), block, shared>>>(src, count, dst, op);
    GPULAB_CHECK_LAUNCH();
    if (blocks == 1) break;
    src = dst;
    count = blocks;
  }
}

template <class Op>
void reduce_tree_interleaved(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  block_tree_levels<Op, Addressing::interleaved>(d_in, n, d_out, ws, op);
}

template <class Op>
void reduce_tree(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  block_tree_levels<Op, Addressing::sequential>(d_in, n, d_out, ws, op);
}

REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_CPU, reduce_cpu)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_global_tree)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_tree_interleaved)
REDUCTION_FOR_COMMUTATIVE_OPS(REDUCTION_INSTANTIATE_GPU, reduce_tree)

}  // namespace reduction
