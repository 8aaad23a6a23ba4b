// Reference of the optional fifth student file (labs/bitonic/bitonic_device.cuh): what the four
// stage files share -- the key order, the index arithmetic of the network, the compare-exchange,
// the launch plan, the buffers each launch reads and writes, and phase 0's global step kernel,
// which phases 2-4 reuse for their strides >= T.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bitonic.cuh"
#include "gpulab/cuda_check.hpp"

#define BITONIC_HD __host__ __device__ __forceinline__

namespace bitonic {

// The kit's helpers by their short names, for the reference's files (each includes this header):
// bitonic.cuh leaves them in gpulab:: so that a submission may define a ceil_div of its own.
using gpulab::ceil_div;
using gpulab::ceil_log2;

// The one comparison every stage uses, and the largest key (what a padded position holds). The
// kernels are templates over the key so that the order lives in one place: int32 compares signed
// (as uint32 the negative keys would sort last).
template <class Key>
struct KeyOrder;
template <>
struct KeyOrder<std::int32_t> {
  static BITONIC_HD bool less(std::int32_t a, std::int32_t b) { return a < b; }
  static BITONIC_HD std::int32_t sentinel() { return kSentinel; }
};

}  // namespace bitonic

namespace bitonic::detail {

// ---- orientation: which way each merge level faces -------------------------------------------------------
//
// alternating  seed 002 Algorithm 1: merge level s sorts key i ascending iff bit s of i is 0, so the
//              two halves a level merges face opposite ways (a bitonic sequence) and every stride
//              compares i with i ^ j. A descending run carries the largest keys to its *low* end:
//              padding keys move below n in between, so they need storage (pad = sentinel).
// mirrored     every merge is ascending; a level's first stride compares i with its mirror
//              i ^ (k - 1) in the k-block, which turns two ascending halves into two bitonic halves
//              with every key of the lower <= every key of the upper; the other strides are the
//              usual half-cleaners i ^ j. Every comparator then puts the smaller key at the lower
//              index, so a key at index >= n (+infinity) never moves: a comparator whose upper
//              index is >= n can be skipped (pad = virtual; proof in NOTES.md, tested for every
//              n <= 2^11 in labs/bitonic/tests/test_bitonic_model.cpp).
// Inside a tile kernel the tile sits in shared memory or registers, so positions >= n can hold
// the sentinel there for free: tile kernels use the alternating rule on the *local* index when
// mirrored (each tile ends ascending) and on the global index when alternating.
enum class Orientation { alternating, mirrored };

// ---- index arithmetic (host and device) ------------------------------------------------------------------

// The lower key of pair p at stride 2^e: p with a 0 bit inserted at position e.
BITONIC_HD std::size_t lower_of_pair(std::size_t p, int e) {
  return ((p >> e) << (e + 1)) | (p & ((std::size_t{1} << e) - 1));
}
BITONIC_HD int lower_in_tile(int p, int e) { return ((p >> e) << (e + 1)) | (p & ((1 << e) - 1)); }

// Its partner at stride 2^e: lo + 2^e, or the mirror lo ^ (2^(e+1) - 1) (first stride, mirrored).
BITONIC_HD std::size_t partner_of(std::size_t lo, int e, bool mirror) {
  return mirror ? lo ^ ((std::size_t{2} << e) - 1) : lo + (std::size_t{1} << e);
}

// Merge level s sorts key i ascending iff bit s of its direction index is 0.
BITONIC_HD bool ascending_at(std::size_t direction_index, int level) { return ((direction_index >> level) & 1) == 0; }

// Groups of 2^width keys whose indices differ in bits [lo, lo + width) only, numbered in order of
// their smallest key: how many have their smallest key below n. width = 1 counts the pairs of
// stride 2^lo with a real lower key: the grid of a mirrored launch (the rest compare +infinity).
BITONIC_HD std::size_t groups_below(std::size_t n, int lo, int width) {
  const std::size_t low = std::size_t{1} << lo;
  const std::size_t rest = n & ((std::size_t{1} << (lo + width)) - 1);
  return ((n >> (lo + width)) << lo) + (rest < low ? rest : low);
}

// ---- what one launch reads and writes ------------------------------------------------------------------------
//
// Positions >= src_count read as the sentinel; positions >= dst_count are not written. This is
// both how the first launch pads (src = d_in, src_count = n) and how the last launch clips (dst =
// d_out, dst_count = n), and the whole of pad = virtual (every count is n).
template <class Key>
struct Pass {
  const Key* src;
  std::size_t src_count;
  Key* dst;
  std::size_t dst_count;
#if defined(__CUDACC__)
  __device__ __forceinline__ Key load(std::size_t i) const { return i < src_count ? src[i] : KeyOrder<Key>::sentinel(); }
  __device__ __forceinline__ void store(std::size_t i, Key v) const {
    if (i < dst_count) dst[i] = v;
  }
#endif
};

#if defined(__CUDACC__)

// ---- compare-exchange --------------------------------------------------------------------------------------------

// (a, b) in order: a <= b when ascending, a >= b when descending. Branch-free selects, so every
// lane of a warp runs the same instructions and stores both keys (the bank model counts on that).
template <class Key>
__device__ __forceinline__ void compare_exchange(Key& a, Key& b, bool ascending) {
  const bool out_of_order = KeyOrder<Key>::less(b, a);
  const Key small = out_of_order ? b : a;
  const Key large = out_of_order ? a : b;
  a = ascending ? small : large;
  b = ascending ? large : small;
}

// One side of a compare-exchange whose other key y lives in another lane: keep the smaller or the larger.
template <class Key>
__device__ __forceinline__ Key keep(Key x, Key y, bool keep_smaller) {
  return keep_smaller == KeyOrder<Key>::less(y, x) ? y : x;
}

// Shared memory seen as keys. Every access is one 32-bit word (4-byte keys), which is what the bank
// model (bitonic_model.cpp) assumes instruction by instruction.
template <class Key>
struct SharedKeys {
  Key* base;
  __device__ __forceinline__ Key load(int i) const { return base[i]; }
  __device__ __forceinline__ void store(int i, Key v) const { base[i] = v; }
};

template <class Key>
__device__ __forceinline__ SharedKeys<Key> dynamic_shared_keys() {
  extern __shared__ __align__(16) unsigned char bitonic_smem[];
  return SharedKeys<Key>{reinterpret_cast<Key*>(bitonic_smem)};
}

// The textbook shared-memory step (cuda-samples' structure, seed 002 §III-C..E): thread tau of the
// tile's T/2 threads orders the pair (lo, lo + 2^e), lo = tau with a 0 inserted at bit e. A warp's
// 32 lower keys span 64 words when e < 5: every bank it touches holds two of them, a 2-way
// conflict on each of the two loads and two stores (4 excess wavefronts per warp per step).
template <class Key>
__device__ __forceinline__ void shared_step(SharedKeys<Key> s, int e, int level, std::size_t direction_base) {
  const int lo = lower_in_tile(static_cast<int>(threadIdx.x), e);
  const int hi = lo + (1 << e);
  Key a = s.load(lo);
  Key b = s.load(hi);
  compare_exchange(a, b, ascending_at(direction_base + static_cast<std::size_t>(lo), level));
  s.store(lo, a);
  s.store(hi, b);
}

// ---- phase 0's kernel: one stride of one merge level, one pair per thread, global memory ---------------------

template <class Key, Orientation O>
__global__ void global_step_kernel(Pass<Key> pass, std::size_t pairs, int level, int e) {
  const std::size_t p = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (p >= pairs) return;
  const bool mirror = O == Orientation::mirrored && e == level - 1;
  const std::size_t lo = lower_of_pair(p, e);
  const std::size_t hi = partner_of(lo, e, mirror);
  if constexpr (O == Orientation::mirrored) {
    if (hi >= pass.src_count) {  // a virtual partner (+infinity): the comparator leaves lo alone
      if (pass.src != pass.dst) pass.store(lo, pass.load(lo));
      return;
    }
  }
  Key a = pass.load(lo);
  Key b = pass.load(hi);
  compare_exchange(a, b, O == Orientation::mirrored || ascending_at(lo, level));
  pass.store(lo, a);
  pass.store(hi, b);
}

// n == 1: no comparator, but the output must be written.
template <class Key>
__global__ void copy_kernel(const Key* in, Key* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i];
}

#endif  // __CUDACC__

// ---- the launch plan (bitonic.cuh, "the launch contract") --------------------------------------------------------------------

enum class StepKind { copy, global, tile_sort, tile_merge };
struct Step {
  StepKind kind;
  int level = 0;  // merge level s (tile_sort: the number of levels it sorts, min(L, t))
  int hi = 0;     // strides 2^hi .. 2^lo (global: one or, fused, several; tile_merge: t-1 .. 0)
  int lo = 0;
};

// tile_log2 = 0: no tile kernels (phases 0 and 1). Levels s >= merge_from end with one tile merge
// for the strides below the tile; the strides above it go `fuse` per global launch.
inline std::vector<Step> plan_steps(std::size_t n, int tile_log2, int merge_from, int fuse) {
  std::vector<Step> steps;
  if (n == 0) return steps;
  const int L = ceil_log2(n);
  if (tile_log2 == 0 && L == 0) return {Step{StepKind::copy}};
  int first = 1;
  if (tile_log2 > 0) {
    steps.push_back(Step{StepKind::tile_sort, std::min(L, tile_log2)});
    first = tile_log2 + 1;
  }
  for (int s = first; s <= L; ++s) {
    const bool merge = s >= merge_from;
    const int lowest_global = merge ? tile_log2 : 0;
    for (int e = s - 1; e >= lowest_global;) {
      const int lo = std::max(lowest_global, e - fuse + 1);
      steps.push_back(Step{StepKind::global, s, e, lo});
      e = lo - 1;
    }
    if (merge) steps.push_back(Step{StepKind::tile_merge, s, tile_log2 - 1, 0});
  }
  return steps;
}

// ---- the buffers of a run ------------------------------------------------------------------------------------------
//
// Launch 0 reads d_in, launch R-1 writes d_out, the others work in place in `work`: d_out, or with
// pad = sentinel and n not a power of two (and more than one launch) the padded copy of 2^L keys
// in scratch. extent() is the index range the kernels cover: 2^L (sentinel) or n (virtual).
template <class Key>
class Chain {
 public:
  Chain(const Key* d_in, Key* d_out, std::size_t n, SortWorkspace& ws, std::size_t launches)
      : in_(d_in), out_(d_out), n_(n), launches_(launches), virtual_(ws.config.pad == Pad::virtual_inf) {
    const std::size_t padded = n > 1 ? std::size_t{1} << ceil_log2(n) : n;
    extent_ = virtual_ ? n : padded;
    work_ = d_out;
    work_count_ = n;
    if (!virtual_ && padded != n && launches > 1) {
      work_ = ws.take<Key>(padded);
      work_count_ = padded;
    }
  }
  Orientation orientation() const { return virtual_ ? Orientation::mirrored : Orientation::alternating; }
  std::size_t extent() const { return extent_; }
  std::size_t launches() const { return launches_; }

  Pass<Key> next() {
    if (issued_ >= launches_) throw std::logic_error("bitonic: more launches than planned");
    const bool first = issued_ == 0, last = issued_ + 1 == launches_;
    ++issued_;
    return Pass<Key>{first ? in_ : work_, first ? n_ : work_count_, last ? out_ : work_, last ? n_ : work_count_};
  }

 private:
  const Key* in_;
  Key* out_;
  Key* work_ = nullptr;
  std::size_t n_, launches_, extent_ = 0, work_count_ = 0, issued_ = 0;
  bool virtual_;
};

// ---- host helpers ----------------------------------------------------------------------------------------------------

inline int checked_block(const SortWorkspace& ws) {
  const int b = ws.config.block;
  if (b < 64 || b > 1024 || (b & (b - 1)) != 0)
    throw std::invalid_argument("block=" + std::to_string(b) + ": the block size must be a power of two in [64, 1024]");
  return b;
}

inline int log2_of(int power_of_two) {
  int k = 0;
  while ((1 << k) < power_of_two) ++k;
  return k;
}

inline unsigned grid_for(std::size_t threads, int block) {
  const std::size_t blocks = ceil_div(threads, static_cast<std::size_t>(block));
  if (blocks > static_cast<std::size_t>(INT_MAX)) throw std::invalid_argument("bitonic: n too large for one grid");
  return static_cast<unsigned>(std::max<std::size_t>(blocks, 1));
}

#if defined(__CUDACC__)

template <class Key, Orientation O>
void launch_global_step(const Pass<Key>& pass, std::size_t extent, int level, int e, int block) {
  const std::size_t pairs = groups_below(extent, e, 1);
  global_step_kernel<Key, O><<<grid_for(pairs, block), block>>>(pass, pairs, level, e);
  GPULAB_CHECK_LAUNCH();
}

template <class Key>
void launch_copy(const Pass<Key>& pass, std::size_t n) {
  copy_kernel<Key><<<grid_for(n, 256), 256>>>(pass.src, pass.dst, n);
  GPULAB_CHECK_LAUNCH();
}

#endif  // __CUDACC__

}  // namespace bitonic::detail
