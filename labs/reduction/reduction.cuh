// The reduction lab's interface: the operators, the workspace, and the functions your files
// (labs/reduction/reduce_trees.cu, reduce_registers.cu, reduce_pipeline.cu, with helpers of your own
// in reduce_device.cuh) implement.
// Do not edit.
//
//   reduce(in[0..n), op) = in[0] (+) in[1] (+) ... (+) in[n-1], combined left to right;
//   n == 0 gives op.identity().
//
// Every stage is generic over the operator: a template whose operator type Op provides
//   Op::value_type                  the element (4, 8 or 16 bytes; a whole number of 32-bit words)
//   Op::identity()                  e with e (+) x == x (+) e == x
//   op(l, r)                        l (+) r, where l holds elements that come *before* r
//   Op::commutative                 whether op(l, r) == op(r, l) for all l, r
// Seed 004 §5.1 assumes a commutative (+) (tree, cascading); §5.2 keeps the order (pipeline,
// matrix). A stage that relies on commutativity is built for sum and max only; the others for all
// five operators (explicit instantiations at the end of each .cu file).
//
// GPU functions receive device pointers (d_in 16-byte aligned: cudaMalloc gives 256), enqueue
// their kernels on the default stream and return: the harness synchronises, times and checks.
// They must not allocate, copy between host and device, or synchronise; scratch memory comes from
// the ReduceWorkspace. The output (one element, d_out[0]) is poisoned before every run.
#pragma once
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gpulab/math.hpp"
#include "gpulab/scratch.hpp"

#if defined(__CUDACC__)
#define REDUCTION_HD __host__ __device__ __forceinline__
#else
#define REDUCTION_HD inline
#endif

namespace reduction {

// ---- names: what this header takes in namespace reduction ------------------------------------------
//
// The lab's own names only (README.md lists them): kWarp, the operators SumOp, MaxOp, IntervalOp,
// AffineOp, Mat2Op and their Interval, Affine, Mat2, Value, kWords, kVec, word_of, SharedPlanes,
// write_value_kernel, ReduceConfig, ReduceWorkspace, reduce_workspace_bytes, the contract's k...
// constants, unit_elements_*, first_round_grid, warp_share_begin, the stage functions and the
// REDUCTION_* macros. Generic helpers stay in gpulab/math.hpp (gpulab::ceil_div, round_up,
// ceil_log2, is_pow2): a helper of your own by such a name, in namespace reduction or anywhere, does
// not clash with this header.

inline constexpr int kWarp = 32;  // b of seed 004: cores per multiprocessor = banks = a warp

// ---- the five operators ------------------------------------------------------------------------------

// int32 + wrapping modulo 2^32 (added as uint32: signed overflow is undefined behaviour in C++).
struct SumOp {
  using value_type = std::int32_t;
  static constexpr bool commutative = true;
  static constexpr const char* name = "sum";
  REDUCTION_HD static value_type identity() { return 0; }
  REDUCTION_HD value_type operator()(value_type l, value_type r) const {
    return static_cast<value_type>(static_cast<std::uint32_t>(l) + static_cast<std::uint32_t>(r));
  }
};

// int32 max. The identity is INT_MIN, not 0: the max of an all-negative array is negative.
struct MaxOp {
  using value_type = std::int32_t;
  static constexpr bool commutative = true;
  static constexpr const char* name = "max";
  REDUCTION_HD static value_type identity() { return INT_MIN; }
  REDUCTION_HD value_type operator()(value_type l, value_type r) const { return l < r ? r : l; }
};

// The order oracle: index ranges concatenated. Input element i is (i, i); (a, b) (+) (c, d) is
// (a, d) when b + 1 == c and INVALID otherwise (sticky); EMPTY is the identity. The reduction of
// the input is (0, n - 1) exactly when every element was combined once and in order: a swapped
// pair, a dropped or doubled element, or an identity padded as (0, 0) all end in INVALID.
struct alignas(8) Interval {
  std::uint32_t lo, hi;
  friend REDUCTION_HD bool operator==(const Interval& x, const Interval& y) { return x.lo == y.lo && x.hi == y.hi; }
};
struct IntervalOp {
  using value_type = Interval;
  static constexpr bool commutative = false;
  static constexpr const char* name = "interval";
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;    // lo of EMPTY: no real index is this large
  static constexpr std::uint32_t kInvalid = 0xFFFFFFFEu;  // lo of INVALID
  REDUCTION_HD static value_type identity() { return {kEmpty, kEmpty}; }
  REDUCTION_HD static value_type invalid() { return {kInvalid, kInvalid}; }
  REDUCTION_HD static value_type element(std::uint32_t i) { return {i, i}; }
  REDUCTION_HD value_type operator()(value_type l, value_type r) const {
    if (l.lo == kEmpty) return r;
    if (r.lo == kEmpty) return l;
    if (l.lo == kInvalid || r.lo == kInvalid || l.hi + 1 != r.lo) return invalid();
    return {l.lo, r.hi};
  }
};

// x -> a x + c (mod 2^32). l (+) r is "l, then r": x -> r.a (l.a x + l.c) + r.c.
struct alignas(8) Affine {
  std::uint32_t a, c;
  friend REDUCTION_HD bool operator==(const Affine& x, const Affine& y) { return x.a == y.a && x.c == y.c; }
};
struct AffineOp {
  using value_type = Affine;
  static constexpr bool commutative = false;
  static constexpr const char* name = "affine";
  REDUCTION_HD static value_type identity() { return {1u, 0u}; }
  REDUCTION_HD value_type operator()(value_type l, value_type r) const { return {r.a * l.a, r.a * l.c + r.c}; }
};

// 2x2 matrices of uint32, row-major, product modulo 2^32 (16 bytes: one 128-bit load each).
struct alignas(16) Mat2 {
  std::uint32_t m00, m01, m10, m11;
  friend REDUCTION_HD bool operator==(const Mat2& x, const Mat2& y) {
    return x.m00 == y.m00 && x.m01 == y.m01 && x.m10 == y.m10 && x.m11 == y.m11;
  }
};
struct Mat2Op {
  using value_type = Mat2;
  static constexpr bool commutative = false;
  static constexpr const char* name = "mat2";
  REDUCTION_HD static value_type identity() { return {1u, 0u, 0u, 1u}; }
  REDUCTION_HD value_type operator()(value_type l, value_type r) const {
    return {l.m00 * r.m00 + l.m01 * r.m10, l.m00 * r.m01 + l.m01 * r.m11,
            l.m10 * r.m00 + l.m11 * r.m10, l.m10 * r.m01 + l.m11 * r.m11};
  }
};

// 32-bit words per element, and elements per 128-bit (16-byte) load.
template <class T>
inline constexpr int kWords = static_cast<int>(sizeof(T) / 4);
template <class T>
inline constexpr int kVec = static_cast<int>(16 / sizeof(T));
static_assert(kWords<Mat2> == 4 && kVec<Affine> == 2 && kVec<std::int32_t> == 4);

// One element's 32-bit words (host and device; nvcc turns the memcpy into register moves).
template <class T>
REDUCTION_HD std::uint32_t word_of(const T& v, int i) {
  std::uint32_t w[kWords<T>];
  std::memcpy(w, &v, sizeof(T));
  return w[i];
}

#if defined(__CUDACC__)
// A shared-memory array of elements stored as kWords<T> planes of 32-bit words (structure of
// arrays): word i of element j lives at base[i * stride + j]. Every access is then a 32-bit
// access, so the bank analysis of one plane (the model's, for int32) holds for every operator.
template <class T>
struct SharedPlanes {
  std::uint32_t* base;
  int stride;  // words per plane (>= the number of elements)
  __device__ __forceinline__ T load(int j) const {
    std::uint32_t w[kWords<T>];
#pragma unroll
    for (int i = 0; i < kWords<T>; ++i) w[i] = base[i * stride + j];
    T v;
    memcpy(&v, w, sizeof(T));
    return v;
  }
  __device__ __forceinline__ void store(int j, const T& v) const {
    std::uint32_t w[kWords<T>];
    memcpy(w, &v, sizeof(T));
#pragma unroll
    for (int i = 0; i < kWords<T>; ++i) base[i * stride + j] = w[i];
  }
};

// out[0] = v: what a stage launches for n == 0 (<<<1, 1>>>): the result is the identity.
template <class T>
__global__ void write_value_kernel(T* out, T v) {
  out[0] = v;
}
#endif

// ---- the knobs and the scratch memory ------------------------------------------------------------------

struct ReduceConfig {
  int block = 256;        // threads per block: a power of two in [64, 1024]
  int blocks_per_sm = 0;  // first-round grid = SMs x this; 0: as many as fit (occupancy)
};

// Device scratch memory, allocated by the harness outside the timed region:
// reduce_workspace_bytes(n, sizeof(element)) bytes (gpulab/scratch.hpp). The harness calls reset()
// before every run, so a run may take the same pieces again. Each piece is its own region: a
// write past one is caught (compute-sanitizer names the region; the check fails on the guard
// bytes the harness leaves after it).
struct ReduceWorkspace : gpulab::Scratch {
  ReduceConfig config;
  int multiprocessors = 1;  // SMs of the device

  // `count` elements of T, 256-byte aligned unless `align` says otherwise (CUB's temporary storage
  // is documented for cudaMalloc's 256); a std::length_error when the workspace has too few left.
  template <class T>
  T* take(std::size_t count, std::size_t align = 256) {
    return Scratch::take<T>(count, align);
  }
};

// n elements (global-tree's copy, cub-scan-last's scan) + 16 MiB (partials) + one byte per element
// (CUB's temp storage: DeviceScan's tile descriptors grow with n and the element size; mat2 at
// n = 2^28 asked 25 MB on an H100, 2026-11-23, more than a fixed 16 MiB).
constexpr std::size_t reduce_workspace_bytes(std::size_t n, std::size_t element_bytes) {
  return n * element_bytes + n + (std::size_t{1} << 24);
}

// ---- contracts the model (reduction_model.hpp) relies on ------------------------------------------------
//
// Tree stages (global-tree aside): a block of T threads reduces 2T consecutive elements to one;
// levels repeat until one value is left, the last level writing d_out: R = number of levels.
//
// One-pass stages (cascading, pipeline*, matrix, ordered-registers): the first launch has G blocks
// (G = min(SMs x resident blocks, ceil(units / (warps per block x kMinUnitsPerWarp)))), each
// writing one partial; a second launch of one block combines the G partials in order into d_out.
// When G == 1 the first launch writes d_out itself: R = 1. n == 0: one launch writes the identity.
// A "unit" is what one warp consumes per step:
//   cascading           32 x kCascadeVectors 128-bit vectors (4 in flight per thread)
//   pipeline(-heap)     a row: 32 lanes x one 128-bit vector (kVec elements) each
//   matrix              a 32 x 32 tile of 1024 consecutive elements
//   ordered-registers   a warp tile: 32 x kOrderedVectors consecutive 128-bit vectors
inline constexpr int kCascadeVectors = 4;
inline constexpr int kOrderedVectors = 4;
// ordered-registers' shared memory in the model (its shared bytes): warp values of this many
// rounds per half, two halves, up to 32 warps.
inline constexpr int kOrderedRing = 8;
inline constexpr int kMinUnitsPerWarp = 8;
template <class T>
constexpr std::size_t unit_elements_cascading() { return std::size_t{kWarp} * kCascadeVectors * kVec<T>; }
template <class T>
constexpr std::size_t unit_elements_pipeline() { return std::size_t{kWarp} * kVec<T>; }
constexpr std::size_t unit_elements_matrix() { return std::size_t{kWarp} * kWarp; }
template <class T>
constexpr std::size_t unit_elements_ordered() { return std::size_t{kWarp} * kOrderedVectors * kVec<T>; }

// The first-round grid rule above (max_grid = SMs x resident blocks per SM).
constexpr int first_round_grid(std::size_t units, int warps_per_block, int max_grid) {
  const std::size_t wanted = gpulab::ceil_div(units, std::size_t(warps_per_block) * kMinUnitsPerWarp);
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(wanted, std::size_t(max_grid))));
}
// Units [begin, end) of warp w out of W warps, as even as possible (the first units % W get one
// more): every warp's share is contiguous and shares follow warp order, so the order is kept.
REDUCTION_HD constexpr std::size_t warp_share_begin(std::size_t units, std::size_t warps, std::size_t w) {
  return w * (units / warps) + std::min(w, units % warps);
}

// ---- the stages (README.md): d_in and d_out are device pointers ------------------------------------------

template <class Op>
using Value = typename Op::value_type;

// 1. cpu: the left fold on the host (host pointers).
template <class Op>
Value<Op> reduce_cpu(const Value<Op>* in, std::size_t n, Op op = {});
// 2.-4. one value per block, a launch per level (reduce_trees.cu)
template <class Op>
void reduce_global_tree(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});
template <class Op>
void reduce_tree_interleaved(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});
template <class Op>  // commutative operators only
void reduce_tree(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});
// 5., 9. many elements per thread in registers (reduce_registers.cu)
template <class Op>  // commutative operators only
void reduce_cascading(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});
template <class Op>
void reduce_ordered_registers(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});
// 6.-8. a warp is seed 004's multiprocessor with a small shared-memory structure (reduce_pipeline.cu)
template <class Op>
void reduce_pipeline_heap(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});
template <class Op>
void reduce_pipeline(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});
template <class Op>
void reduce_matrix(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});

// Baselines (provided, reduction_cub.cu): cub::DeviceReduce (commutative only: CUB documents
// that it does not support non-commutative operators), a kernel on cub::BlockReduce with
// BLOCK_REDUCE_RAKING (order-preserving) + one small launch, and cub::DeviceScan's last element.
template <class Op>
void reduce_cub_device(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});
template <class Op>
void reduce_cub_block_raking(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});
template <class Op>
void reduce_cub_scan_last(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op = {});

// Explicit instantiations: REDUCTION_INSTANTIATE_GPU(reduce_tree, SumOp) etc. Each student file
// ends with its own (keep them: the harness links against exactly these):
//   reduce_trees.cu     REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_CPU, reduce_cpu)
//                       REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_global_tree)
//                       REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_tree_interleaved)
//                       REDUCTION_FOR_COMMUTATIVE_OPS(REDUCTION_INSTANTIATE_GPU, reduce_tree)
//   reduce_registers.cu REDUCTION_FOR_COMMUTATIVE_OPS(REDUCTION_INSTANTIATE_GPU, reduce_cascading)
//                       REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_ordered_registers)
//   reduce_pipeline.cu  REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_pipeline_heap)
//                       REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_pipeline)
//                       REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_matrix)
#define REDUCTION_INSTANTIATE_GPU(fn, OP)                                                                  \
  template void fn<OP>(const OP::value_type*, std::size_t, OP::value_type*, ReduceWorkspace&, OP);
#define REDUCTION_INSTANTIATE_CPU(fn, OP) template OP::value_type fn<OP>(const OP::value_type*, std::size_t, OP);
#define REDUCTION_FOR_ALL_OPS(X, fn) X(fn, SumOp) X(fn, MaxOp) X(fn, IntervalOp) X(fn, AffineOp) X(fn, Mat2Op)
#define REDUCTION_FOR_COMMUTATIVE_OPS(X, fn) X(fn, SumOp) X(fn, MaxOp)

}  // namespace reduction
