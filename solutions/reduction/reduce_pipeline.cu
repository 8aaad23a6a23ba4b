// Reference, part 3 of 3: a warp is seed 004's multiprocessor (b = 32 cores) with a small
// shared-memory structure; order is kept for any associative operator.
//   pipeline-heap  reduce_pipeline_heap   the pipeline algorithm, node L at word L (2-way conflicts)
//   pipeline       reduce_pipeline        seed 004 §5.2, Algorithms 4-6, the 2b layout of Fig. 8 (no conflicts)
//   matrix         reduce_matrix          seed 004 §5.2.1: b x (b + 1) staging, lane c folds a row
#include <cuda_runtime.h>

#include "gpulab/cuda_check.hpp"
#include "reduce_device.cuh"
#include "reduction.cuh"

namespace reduction {

using detail::load_vector;

// ---- 6./7. the pipeline algorithm (seed 004 §5.2) ---------------------------------------------------------
//
// The input is a matrix of rows (Fig. 6(a)); a warp takes a contiguous share of rows. Its 32
// lanes run a binary tree over 2b = 64 shared words, leaves = nodes 0..31 (the current row),
// node 32 + m = node 2m (+) node 2m + 1, root = node 62, and node 63 is the running value. At
// every step lane e stores leaf e of the next row and computes node 32 + e from nodes 2e, 2e + 1,
// so rows sit on different tree levels at once and every lane works at every step (Fig. 7).
// After the last row, log2 b = 5 steps with identity leaves drain the tree (Algorithm 5 lines
// 21-24): a warp with r rows takes r + 5 steps.
//
// A row here is 32 lanes x one 128-bit vector (kVec elements, folded in order in the lane's
// registers first, seed 004 §3.5.1 item 1), so that a step moves 512 bytes for 4 shared accesses.
//
// Where node L lives (word index in the warp's 64 words):
//   heap:   word L. Lanes e and e + 16 load nodes 2e and 2e + 32, the same bank: both operand
//           loads are 2-way conflicts, 2 excess wavefronts per step.
//   2b:     Fig. 8: even L at word L/2 (row 0), odd L at word 32 + ((L-1)/2 + 16) mod 32 (row 1,
//           rotated by half a row). These are exactly Algorithm 5's i_s, i_r, i_1, i_2 (lines
//           3-15); every access maps the 32 lanes onto 32 distinct banks. 004 proves it for the
//           leaf store and the two operand loads; the result store (banks 16 + e/2 for even e,
//           (e-1)/2 for odd e) is a bijection too, which the proof leaves out.
enum class TreeLayout { heap, two_b };

template <TreeLayout L>
__device__ __forceinline__ int node_word(int node) {
  if constexpr (L == TreeLayout::heap) return node;
  else return (node % 2 == 0) ? node / 2 : kWarp + ((node - 1) / 2 + kWarp / 2) % kWarp;
}

// Lane `lane`'s 128-bit vector of row r (identity past n), still unfolded: the loop folds it two
// steps later, so the load's latency overlaps two tree steps.
template <class Op>
__device__ __forceinline__ void load_row(const Value<Op>* in, std::size_t n, std::size_t r, int lane,
                                         Value<Op> (&e)[kVec<Value<Op>>]) {
  using T = Value<Op>;
  constexpr int V = kVec<T>;
  const std::size_t at = r * unit_elements_pipeline<T>() + std::size_t(lane) * V;
  if (at + V <= n) {
    load_vector(in + at, e);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) e[k] = at + k < n ? in[at + k] : Op::identity();
  }
}

template <class Op, TreeLayout L>
__global__ void pipeline_kernel(const Value<Op>* in, std::size_t n, Value<Op>* out, Op op) {
  using T = Value<Op>;
  extern __shared__ std::uint32_t smem[];
  constexpr int kDrain = 5;  // log2 b
  const int lane = threadIdx.x % kWarp, warp_in_block = threadIdx.x / kWarp;
  const SharedPlanes<T> y{smem + warp_in_block * 2 * kWarp * kWords<T>, 2 * kWarp};
  const std::size_t warps = std::size_t(gridDim.x) * (blockDim.x / kWarp);
  const std::size_t w = blockIdx.x * std::size_t(blockDim.x / kWarp) + warp_in_block;
  const std::size_t rows = ceil_div(n, unit_elements_pipeline<T>());
  const std::size_t first = warp_share_begin(rows, warps, w), last = warp_share_begin(rows, warps, w + 1);

  // Algorithm 5 never initialises y; the inner nodes and node 63 would feed garbage into the
  // first rows. All 64 words start as the identity.
  y.store(lane, Op::identity());
  y.store(kWarp + lane, Op::identity());
  const int i_s = node_word<L>(lane), i_r = node_word<L>(kWarp + lane);
  const int i_1 = node_word<L>(2 * lane);
  int i_2 = node_word<L>(2 * lane + 1);
  // The AGPU reads one word per core per instruction. In the heap layout nvcc sees that nodes 2e
  // and 2e + 1 are adjacent words and fuses the two operand loads into one 64-bit load (PTX
  // ld.shared.v2.u32), served in half-warp phases without conflicts: that would hide the very
  // conflict pipeline-heap is here to show (reduction_model.hpp, pipeline_step_requests with
  // fused_operands). The empty asm makes i_2 opaque, so both layouts issue the same two 32-bit
  // loads and differ only in their addresses.
  asm volatile("" : "+r"(i_2));
  __syncwarp();

  // One step: the leaf of the newest row in, every node one level up.
  auto step = [&](const T leaf) {
    y.store(i_s, leaf);
    // The AGPU executes "y[i_r] <- y[i_1] (+) y[i_2]" as one SIMD step (reads, then writes).
    // Since Volta the lanes of a warp are not in lockstep: __syncwarp() orders the leaf store
    // before the operand loads, and the loads before the result store (racecheck flags both).
    // Leaves and results use disjoint words, so the next leaf store needs no third barrier.
    __syncwarp();
    const T a = y.load(i_1), b = y.load(i_2);
    __syncwarp();
    // Lane 31 computes node 63 from node 62 (the root: the newest row) and node 63 (the rows
    // before it). Algorithm 5 line 19 writes y[i_1] (+) y[i_2] = root (+) running for every
    // lane, so a warp's rows come out last-to-first: R_{r-1} (+) ... (+) R_1 (+) R_0. With +
    // (the paper's only experiment, §5.3) that is the same number; with a non-commutative
    // operator it is wrong as soon as a warp has two rows. The older
    // rows must be on the left: lane 31 swaps its operands. The addresses, hence the banks, do
    // not change.
    y.store(i_r, lane == kWarp - 1 ? op(b, a) : op(a, b));
  };
  auto fold = [&](const T (&e)[kVec<T>]) {
    T v = e[0];
#pragma unroll
    for (int k = 1; k < kVec<T>; ++k) v = op(v, e[k]);
    return v;
  };
  auto fetch = [&](std::size_t r, T (&e)[kVec<T>]) {
    if (r < last) {
      load_row<Op>(in, n, r, lane, e);
    } else {  // drain (Algorithm 5 lines 21-24): identity leaves, not 0 (line 22)
#pragma unroll
      for (int k = 0; k < kVec<T>; ++k) e[k] = Op::identity();
    }
  };

  if (first < last) {
    // Two buffers, unrolled by two steps without register moves: the row used at step r was
    // requested at step r - 2 (1 KB per warp in flight besides the tree).
    T even[kVec<T>], odd[kVec<T>];
    fetch(first, even);
    fetch(first + 1, odd);
    for (std::size_t r = first; r < last + kDrain; r += 2) {
      step(fold(even));
      fetch(r + 2, even);
      if (r + 1 < last + kDrain) {
        step(fold(odd));
        fetch(r + 3, odd);
      }
    }
  }
  __syncwarp();
  // Algorithm 5 line 26: the running value, node 2b - 1 (word 3b/2 - 1 in the 2b layout).
  const T mine = y.load(node_word<L>(2 * kWarp - 1));
  // Warps in index order (Algorithm 6 on the block's warps, via the ordered shuffle combine).
  const T total = detail::block_reduce_ordered(lane == 0 ? mine : Op::identity(), op);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

template <class Op, TreeLayout L>
void pipeline_rounds(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  const std::size_t shared = std::size_t(detail::checked_block(ws) / kWarp) * 2 * kWarp * sizeof(Value<Op>);
  detail::one_pass(pipeline_kernel<Op, L>, d_in, n, d_out, ws, op, unit_elements_pipeline<Value<Op>>(), shared);
}

template <class Op>
void reduce_pipeline_heap(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  pipeline_rounds<Op, TreeLayout::heap>(d_in, n, d_out, ws, op);
}

template <class Op>
void reduce_pipeline(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  pipeline_rounds<Op, TreeLayout::two_b>(d_in, n, d_out, ws, op);
}

// ---- 8. matrix (seed 004 §5.2.1) ------------------------------------------------------------------------------
//
// Per tile of b^2 = 1024 consecutive elements: load row r (elements 32 r .. 32 r + 31, lane l
// takes 32 r + l: coalesced) into row r of a 32 x 33 matrix (word 33 r + l, bank (r + l) mod 32);
// then lane c folds row c, the 32 consecutive elements 32 c .. 32 c + 31, at words 33 c + i
// (bank (c + i) mod 32). The pad column (§6.1's method, Fig. 11) makes both conflict-free. Lane
// values join in lane order (ordered shuffles), tiles in order into the warp's running value.
// 1056 words per warp: the multiplicity M/b^2 that made this the slowest stage on the K20c.
template <class Op>
__global__ void matrix_kernel(const Value<Op>* in, std::size_t n, Value<Op>* out, Op op) {
  using T = Value<Op>;
  extern __shared__ std::uint32_t smem[];
  constexpr int kPitch = kWarp + 1;
  const int lane = threadIdx.x % kWarp, warp_in_block = threadIdx.x / kWarp;
  const SharedPlanes<T> m{smem + warp_in_block * kWarp * kPitch * kWords<T>, kWarp * kPitch};
  const std::size_t warps = std::size_t(gridDim.x) * (blockDim.x / kWarp);
  const std::size_t w = blockIdx.x * std::size_t(blockDim.x / kWarp) + warp_in_block;
  const std::size_t tiles = ceil_div(n, unit_elements_matrix());
  const std::size_t first = warp_share_begin(tiles, warps, w), last = warp_share_begin(tiles, warps, w + 1);
  T acc = Op::identity();  // meaningful in lane 0
  for (std::size_t u = first; u < last; ++u) {
    const std::size_t base = u * unit_elements_matrix();
    const bool whole = base + unit_elements_matrix() <= n;
    T row[kWarp];
#pragma unroll
    for (int r = 0; r < kWarp; ++r) {
      const std::size_t e = base + r * kWarp + lane;
      row[r] = (whole || e < n) ? in[e] : Op::identity();
    }
#pragma unroll
    for (int r = 0; r < kWarp; ++r) m.store(r * kPitch + lane, row[r]);
    __syncwarp();
    T v = m.load(lane * kPitch);
#pragma unroll
    for (int i = 1; i < kWarp; ++i) v = op(v, m.load(lane * kPitch + i));
    __syncwarp();  // the next tile's stores must wait for these loads
    acc = op(acc, detail::warp_reduce_ordered(v, op));
  }
  acc = detail::block_reduce_ordered(lane == 0 ? acc : Op::identity(), op);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

template <class Op>
void reduce_matrix(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  const std::size_t shared = std::size_t(detail::checked_block(ws) / kWarp) * kWarp * (kWarp + 1) * sizeof(Value<Op>);
  detail::one_pass(matrix_kernel<Op>, d_in, n, d_out, ws, op, unit_elements_matrix(), shared);
}

REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_pipeline_heap)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_pipeline)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_matrix)

}  // namespace reduction
