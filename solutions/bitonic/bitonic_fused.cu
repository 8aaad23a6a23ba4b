// Reference, part 4 of 5: phase5-fused, seed 002 §VII's "further work" done: more data per block
// and per thread, registers first, and several global strides per launch.
//   phase5-fused  sort_phase5_fused  tiles of 2^14 keys (32 keys in registers x 512 threads), levels
//                                    above the tile 9 global strides per launch, then one tile merge
//
// Launches for n = 2^L, tile 2^t, q strides per launch: 1 + sum over d = 1..L-t of (ceil(d/q) + 1)
// (bitonic.cuh, "the launch contract"; 2^24 with t = 14, q = 9: 22 launches, each one read and one
// write of every key).
//
// The file has three parts: the plan (which layout runs which stride bit, and where each thread's
// keys sit), the kernels (tile sort, tile merge, group of q global strides; templates over the
// tile's shape), and the host side that launches them.
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "bitonic.cuh"
#include "bitonic_device.cuh"
#include "gpulab/cuda_check.hpp"

// ==== the plan =========================================================================================
//
// Which layout runs which stride bit, and where each thread's keys sit (host and device functions;
// the kernels below run the walks).
//
// A block holds 2^C keys, C = KL + BL: 2^KL registers in each of 2^BL threads. In layout R (R = 0
// or R >= 5) thread tau's register m holds local key
//     x = (tau mod 2^R) + m 2^R + (tau div 2^R) 2^(R+KL),
// so local bits R .. R+KL-1 are register bits. R >= 5 keeps a warp's lanes in local bits 0..4;
// R = 0 is the blocked layout (registers = bits 0..KL-1, lanes = bits KL..KL+4). Shared memory holds
// local key x at word x + x/32. The layouts of a shape: BL, BL - KL, BL - 2 KL, ... (>= 5), 5 and 0.

namespace bitonic::fused {

BITONIC_HD constexpr bool is_layout(int KL, int BL, int R) {
  if (R == 0 || R == 5) return true;
  return R > 5 && R <= BL && (BL - R) % KL == 0;
}

// The layout that runs local stride bit `hi` next (a pass runs its strides from the top down): the
// blocked one when allowed and hi < KL + lane_bits (registers below KL, lane shuffles for the
// lowest `lane_bits` lane bits), else the smallest layout R >= 5 with R <= hi < R + KL (it also runs
// the most bits below hi). lane_bits: 5 - KL .. 5 (the reference: 5): fewer shuffles, more
// transposes (a lane shuffle and a transpose cost about the same per key by the instruction counts).
BITONIC_HD constexpr int layout_for(int KL, int BL, int hi, bool allow_blocked, int lane_bits) {
  if (allow_blocked && hi < KL + lane_bits) return 0;
  for (int R = 5; R <= BL; ++R)
    if (is_layout(KL, BL, R) && R <= hi && hi < R + KL) return R;
  return -1;
}

BITONIC_HD constexpr unsigned layout_x(int KL, int R, unsigned tau, unsigned m) {
  return (tau & ((1u << R) - 1)) + (m << R) + ((tau >> R) << (R + KL));
}
BITONIC_HD constexpr unsigned padded_slot(unsigned x) { return x + (x >> 5); }

// Shared words of a tile kernel, and of a group kernel that transposes.
BITONIC_HD constexpr std::size_t shared_words(int C) { return (std::size_t{1} << C) + (std::size_t{1} << (C - 5)); }
// A group launch of q strides (local bits C-q .. C-1) transposes iff they are not all register bits
// of its first layout, BL .. C-1.
BITONIC_HD constexpr bool group_needs_shared(int KL, int BL, int q) { return q > KL; }

// Whether layout R runs stride bit `hi` (R == 0: the blocked layout, when allowed).
BITONIC_HD constexpr bool layout_runs(int KL, int R, int hi, bool allow_blocked, int lane_bits) {
  return R == 0 ? allow_blocked && hi < KL + lane_bits : R >= 5 && R <= hi && hi < R + KL;
}

// The walk of local stride bits hi .. lo from layout `cur`: transpose(from, to) at every change of
// layout (none while `cur` still holds the next bit), then stride(R, e) for every bit e (in layout R;
// R == 0 and e >= KL: a lane shuffle). Returns the layout it ends in. The kernels run it with real
// work (and NOTES.md, "phase5-fused", counts what they cost).
template <class Transpose, class Stride>
BITONIC_HD int walk_bits(int KL, int BL, int lane_bits, int cur, int hi, int lo, bool allow_blocked, Transpose&& transpose,
                         Stride&& stride) {
  while (hi >= lo) {
    const int R = layout_runs(KL, cur, hi, allow_blocked, lane_bits) ? cur : layout_for(KL, BL, hi, allow_blocked, lane_bits);
    if (R != cur) {
      transpose(cur, R);
      cur = R;
    }
    const int bottom = R == 0 ? lo : (lo > R ? lo : R);
    for (int e = hi; e >= bottom; --e) stride(R, e);
    hi = bottom - 1;
  }
  return cur;
}

// The three kernels' walks (the kernels below):
//   tile sort   load in BL; to blocked; levels 1..KL in registers; every level s > KL: bits s-1..0
//               (ends blocked: bits below KL + lane_bits always run there); back to BL; store
//   tile merge  load in BL; bits C-1..0 (ends blocked); back to BL; store
//   group       load in BL; bits C-1..p (p = C - q; a mirrored level's first group does bit C-1,
//               the mirror stride, in BL and flips its upper half); store in the layout it ends in
template <class Transpose, class Stride>
BITONIC_HD void walk_tile_sort(int KL, int BL, int lane_bits, int levels, Transpose&& transpose, Stride&& stride) {
  transpose(BL, 0);
  for (int level = 1; level <= KL; ++level)  // the kernel sorts the K registers whatever `levels`
    for (int e = level - 1; e >= 0; --e) stride(0, e);
  int cur = 0;
  for (int level = KL + 1; level <= levels; ++level)
    cur = walk_bits(KL, BL, lane_bits, cur, level - 1, 0, true, transpose, stride);
  transpose(cur, BL);
}
template <class Transpose, class Stride>
BITONIC_HD void walk_tile_merge(int KL, int BL, int lane_bits, Transpose&& transpose, Stride&& stride) {
  const int cur = walk_bits(KL, BL, lane_bits, BL, KL + BL - 1, 0, true, transpose, stride);
  transpose(cur, BL);
}
template <class Transpose, class Stride>
BITONIC_HD int walk_group(int KL, int BL, int q, bool mirror, Transpose&& transpose, Stride&& stride) {
  int hi = KL + BL - 1;
  if (mirror) stride(BL, hi--);  // (the kernel: register_pairs<KL - 1>, then the flip)
  return walk_bits(KL, BL, 5, BL, hi, KL + BL - q, false, transpose, stride);
}

}  // namespace bitonic::fused

// ==== the kernels ======================================================================================
//
// Templates over the tile's shape: 2^KL registers per thread x 2^BL threads = a tile of 2^C keys,
// C = KL + BL (the stage below instantiates 2^5 x 2^9).
//
// Three kernels, each one pass over the keys (read once, written once):
//   tile sort   levels 1..min(L, C) of every tile
//   tile merge  strides 2^(C-1) .. 1 of one level s > C in every tile
//   group       q = fuse global strides 2^(lo+q-1) .. 2^lo of one level: a block holds the 2^C keys
//               whose indices differ only in their p = C - q lowest bits (2^p >= 32 consecutive keys:
//               every warp access is 128 contiguous bytes) and in the q stride bits
// so a level s > C costs ceil((s - C) / q) group launches + 1 tile merge.
//
// Inside a block the keys have a *local index* x (C bits). A layout says which thread holds which
// x: in layout R (R = 0 or R >= 5) thread tau's register m holds
//     x = (tau mod 2^R) + m 2^R + (tau div 2^R) 2^(R+KL)
// i.e. local bits R .. R+KL-1 are the thread's registers. R >= 5 keeps the lane in bits 0..4 (a
// warp's access for one m is 32 consecutive keys: coalesced globally, conflict-free in shared
// memory); R = 0 is the *blocked* layout (thread tau holds keys tau K .. tau K + K - 1) whose lanes
// sit in bits KL .. KL+4. A stride 2^e (local) is a compare-exchange inside the thread when e is a
// register bit, a lane shuffle when e is a lane bit of the blocked layout, and otherwise a change of
// layout: a transpose through shared memory (word x at x + x/32: every layout conflict-free).
// The layouts a shape uses: R = BL, BL - KL, BL - 2 KL, ... (>= 5), 5, and 0 (layout_for).
//
// Directions without arithmetic: every compare-exchange is min to the lower local index, max to the
// upper, on 32-bit *codes* (the key's order as unsigned integers: int32 x ^ 2^31). A key that
// must sort descending is held complemented (code ^ ~0 reverses the order), so the network's
// direction becomes one XOR per key where it changes (per block in the merges and groups, per
// level in the tile sort), not 4 extra instructions per compare-exchange. The mirrored orientation
// (pad = virtual) needs no flips except in a level's first group, whose upper half the block holds
// in mirrored order (the mirror stride is then a plain stride; NOTES.md, "phase5-fused").

namespace bitonic::fused {

// ---- codes --------------------------------------------------------------------------------------------------

template <class Key>
struct Codec;
template <>
struct Codec<std::int32_t> {
  static __device__ __forceinline__ std::uint32_t to(std::int32_t k) { return static_cast<std::uint32_t>(k) ^ 0x80000000u; }
  static __device__ __forceinline__ std::int32_t from(std::uint32_t c) { return static_cast<std::int32_t>(c ^ 0x80000000u); }
};
// The sentinel's code is the largest: 0xFFFFFFFF.

constexpr unsigned kFullMask = 0xFFFFFFFFu;

__device__ __forceinline__ std::uint32_t umin(std::uint32_t a, std::uint32_t b) { return a < b ? a : b; }
__device__ __forceinline__ std::uint32_t umax(std::uint32_t a, std::uint32_t b) { return a < b ? b : a; }

// ---- the tile shape ---------------------------------------------------------------------------------------------

template <int KL_, int BL_>
struct Shape {
  static constexpr int KL = KL_, BL = BL_, C = KL + BL, K = 1 << KL, B = 1 << BL;
  static_assert(KL >= 3 && KL <= 5 && BL >= 5 && BL <= 10);
  // blocks per SM the register budget is set for (__launch_bounds__): 64 registers per thread
  static constexpr int kMinBlocks = B >= 1024 ? 1 : 65536 / 64 / B;
};

// Calls f(std::integral_constant<int, R>) for the run-time layout R (the switch over a shape's layouts).
template <int KL, int BL, int I, class F>
__device__ __forceinline__ void call_if_layout(int R, F& f) {
  if constexpr (is_layout(KL, BL, I)) {
    if (R == I) f(std::integral_constant<int, I>{});
  }
}
template <int KL, int BL, class F, int... I>
__device__ __forceinline__ void for_layout_impl(int R, F& f, std::integer_sequence<int, I...>) {
  (call_if_layout<KL, BL, I>(R, f), ...);
}
template <int KL, int BL, class F>
__device__ __forceinline__ void with_layout(int R, F f) {
  for_layout_impl<KL, BL>(R, f, std::make_integer_sequence<int, BL + 1>{});
}

// ---- registers, shuffles, transposes -------------------------------------------------------------------------

// Register bit P: pairs (m, m + 2^P), smaller code to m.
template <int P, int K>
__device__ __forceinline__ void register_pairs(std::uint32_t (&v)[K]) {
#pragma unroll
  for (int m = 0; m < K; ++m)
    if ((m & (1 << P)) == 0) {
      const std::uint32_t a = v[m], b = v[m | (1 << P)];
      v[m] = umin(a, b);
      v[m | (1 << P)] = umax(a, b);
    }
}
template <int K>
__device__ __forceinline__ void register_stride(std::uint32_t (&v)[K], int P) {
  switch (P) {  // register numbers must be compile-time constants, or v spills to local memory
    case 0: register_pairs<0>(v); break;
    case 1: register_pairs<1>(v); break;
    case 2: register_pairs<2>(v); break;
    case 3: if constexpr (K > 8) register_pairs<3>(v); break;
    default: if constexpr (K > 16) register_pairs<4>(v); break;
  }
}

// Lane bit j of the blocked layout: the lower lane keeps the smaller code.
template <int K>
__device__ __forceinline__ void lane_stride(std::uint32_t (&v)[K], int j) {
  const int mask = 1 << j;
  const bool lower = (threadIdx.x & mask) == 0;
#pragma unroll
  for (int m = 0; m < K; ++m) {
    const std::uint32_t y = __shfl_xor_sync(kFullMask, v[m], mask);
    v[m] = (lower == (y < v[m])) ? y : v[m];
  }
}

template <int K>
__device__ __forceinline__ void flip(std::uint32_t (&v)[K], std::uint32_t mask) {
#pragma unroll
  for (int m = 0; m < K; ++m) v[m] ^= mask;
}

// Thread tau's words in layout R: slot(x(tau, m)) = base + m * step (one register plus immediates).
template <int KL, int R>
__device__ __forceinline__ int slot_base() {
  return static_cast<int>(padded_slot(layout_x(KL, R, threadIdx.x, 0)));
}
template <int R>
constexpr int slot_step() {
  return R == 0 ? 1 : (1 << R) + (1 << (R - 5));
}

template <int KL, int R, int K>
__device__ __forceinline__ void store_layout(detail::SharedKeys<std::uint32_t> s, const std::uint32_t (&v)[K]) {
  const int base = slot_base<KL, R>();
#pragma unroll
  for (int m = 0; m < K; ++m) s.store(base + m * slot_step<R>(), v[m]);
}
template <int KL, int R, int K>
__device__ __forceinline__ void load_layout(detail::SharedKeys<std::uint32_t> s, std::uint32_t (&v)[K]) {
  const int base = slot_base<KL, R>();
#pragma unroll
  for (int m = 0; m < K; ++m) v[m] = s.load(base + m * slot_step<R>());
}

// Layout `from` to layout `to`: one barrier, between the stores and the loads. None is needed before
// the stores: `from` is always the layout of the previous transpose's loads (or the first one), and a
// layout gives every word to exactly one thread, so each thread overwrites only the words it read
// itself (a leading barrier is not needed: a host emulation's race tracer found none without it).
template <int KL, int BL, int K>
__device__ __forceinline__ void transpose(detail::SharedKeys<std::uint32_t> s, std::uint32_t (&v)[K], int from, int to) {
  with_layout<KL, BL>(from, [&](auto r) { store_layout<KL, decltype(r)::value>(s, v); });
  __syncthreads();
  with_layout<KL, BL>(to, [&](auto r) { load_layout<KL, decltype(r)::value>(s, v); });
}

// Local stride bits hi .. lo (top down), starting in layout `cur`; returns the layout it ends in
// (the plan's walk_bits above).
template <int KL, int BL, bool kAllowBlocked, int K>
__device__ __forceinline__ int run_bits(detail::SharedKeys<std::uint32_t> s, std::uint32_t (&v)[K], int lane_bits, int cur,
                                        int hi, int lo) {
  return walk_bits(
      KL, BL, lane_bits, cur, hi, lo, kAllowBlocked, [&](int from, int to) { transpose<KL, BL>(s, v, from, to); },
      [&](int R, int e) {
        if (kAllowBlocked && R == 0 && e >= KL) lane_stride(v, e - KL);
        else register_stride(v, e - R);
      });
}

// Levels 1..KL inside the thread: its K keys sorted ascending (any sorting network would do; this
// is bitonic sort with compile-time directions).
template <int K>
__device__ __forceinline__ void register_sort(std::uint32_t (&v)[K]) {
#pragma unroll
  for (int k = 2; k <= K; k *= 2)
#pragma unroll
    for (int j = k / 2; j >= 1; j /= 2)
#pragma unroll
      for (int m = 0; m < K; ++m)
        if ((m & j) == 0) {
          const bool up = (m & k) == 0 || k == K;
          const std::uint32_t a = v[m], b = v[m | j];
          v[m] = up ? umin(a, b) : umax(a, b);
          v[m | j] = up ? umax(a, b) : umin(a, b);
        }
}

__device__ __forceinline__ unsigned block_index(bool zig) { return zig ? gridDim.x - 1 - blockIdx.x : blockIdx.x; }

// x, which the compiler may not assume equal to any value it computed before: the stores recompute
// their addresses instead of keeping the loads' 2^KL 64-bit addresses alive across the kernel (which
// spilled at the 64-register budget).
__device__ __forceinline__ unsigned opaque(unsigned x) {
#if defined(__CUDA_ARCH__)
  asm volatile("" : "+r"(x));
#endif
  return x;
}

// ---- tiles: global I/O in layout BL (key x of the tile at base + x) ---------------------------------------

template <class Key, int KL, int BL, bool kGuarded>
__device__ __forceinline__ void load_tile(const detail::Pass<Key>& pass, std::size_t base, std::uint32_t mask,
                                          std::uint32_t (&v)[1 << KL]) {
  const std::size_t first = base + layout_x(KL, BL, threadIdx.x, 0);
#pragma unroll
  for (int m = 0; m < (1 << KL); ++m) {
    const std::size_t i = first + (static_cast<std::size_t>(m) << BL);
    v[m] = (kGuarded ? Codec<Key>::to(pass.load(i)) : Codec<Key>::to(pass.src[i])) ^ mask;
  }
}
template <class Key, int KL, int BL, bool kGuarded>
__device__ __forceinline__ void store_tile(const detail::Pass<Key>& pass, std::size_t base, std::uint32_t mask,
                                           const std::uint32_t (&v)[1 << KL]) {
  const std::size_t first = base + layout_x(KL, BL, threadIdx.x, 0);
#pragma unroll
  for (int m = 0; m < (1 << KL); ++m) {
    const std::size_t i = first + (static_cast<std::size_t>(m) << BL);
    if (kGuarded) pass.store(i, Codec<Key>::from(v[m] ^ mask));
    else pass.dst[i] = Codec<Key>::from(v[m] ^ mask);
  }
}
template <class Key, int KL, int BL>
__device__ __forceinline__ void load_tile_any(const detail::Pass<Key>& pass, std::size_t base, std::uint32_t mask,
                                              std::uint32_t (&v)[1 << KL]) {
  if (base + (std::size_t{1} << (KL + BL)) <= pass.src_count) load_tile<Key, KL, BL, false>(pass, base, mask, v);
  else load_tile<Key, KL, BL, true>(pass, base, mask, v);
}
template <class Key, int KL, int BL>
__device__ __forceinline__ void store_tile_any(const detail::Pass<Key>& pass, std::size_t base, std::uint32_t mask,
                                               const std::uint32_t (&v)[1 << KL]) {
  if (base + (std::size_t{1} << (KL + BL)) <= pass.dst_count) store_tile<Key, KL, BL, false>(pass, base, mask, v);
  else store_tile<Key, KL, BL, true>(pass, base, mask, v);
}

// ---- kernels --------------------------------------------------------------------------------------------------

// Levels 1..levels (levels = min(L, C)) of every tile. Direction of key x at level s: bit s of
// offset + x, offset = the tile's parity at bit C (alternating) or 0 (mirrored: every tile ends
// ascending). Invariant: at level s a key is held as code ^ (its direction at s is down ? ~0 : 0).
template <class Key, int KL, int BL>
__global__ void __launch_bounds__(1 << BL, Shape<KL, BL>::kMinBlocks)
    tile_sort_fused_kernel(detail::Pass<Key> pass, int levels, bool alternating, bool zig, int lane_bits) {
  using S = Shape<KL, BL>;
  const detail::SharedKeys<std::uint32_t> s = detail::dynamic_shared_keys<std::uint32_t>();
  const unsigned b = block_index(zig);
  const std::size_t base = static_cast<std::size_t>(b) << S::C;
  // the direction index of the thread's keys in the blocked layout, above bit KL: offset + tau K
  const unsigned dir = (alternating ? (b & 1u) << S::C : 0u) + (threadIdx.x << KL);
  std::uint32_t v[S::K];
  load_tile_any<Key, KL, BL>(pass, base, 0u, v);
  transpose<KL, BL>(s, v, BL, 0);
  const auto down = [&](int level) { return ((dir >> level) & 1u) ? ~0u : 0u; };
  flip(v, down(KL));
  register_sort(v);  // levels 1..KL: the thread's K keys, ascending in the flipped codes
  int cur = 0;
  for (int level = KL + 1; level <= levels; ++level) {
    flip(v, down(level - 1) ^ down(level));
    cur = run_bits<KL, BL, true>(s, v, lane_bits, cur, level - 1, 0);  // ends in the blocked layout
  }
  flip(v, down(levels > KL ? levels : KL));
  transpose<KL, BL>(s, v, cur, BL);
  store_tile_any<Key, KL, BL>(pass, base, 0u, v);
}

// Strides 2^(C-1) .. 1 of level `level` > C in every tile; the level's direction is one per tile.
template <class Key, int KL, int BL>
__global__ void __launch_bounds__(1 << BL, Shape<KL, BL>::kMinBlocks)
    tile_merge_fused_kernel(detail::Pass<Key> pass, int level, bool alternating, bool zig, int lane_bits) {
  using S = Shape<KL, BL>;
  const detail::SharedKeys<std::uint32_t> s = detail::dynamic_shared_keys<std::uint32_t>();
  const unsigned b = block_index(zig);
  const std::size_t base = static_cast<std::size_t>(b) << S::C;
  const std::uint32_t mask = alternating && !detail::ascending_at(base, level) ? ~0u : 0u;
  std::uint32_t v[S::K];
  load_tile_any<Key, KL, BL>(pass, base, mask, v);
  const int cur = run_bits<KL, BL, true>(s, v, lane_bits, BL, S::C - 1, 0);
  transpose<KL, BL>(s, v, cur, BL);
  store_tile_any<Key, KL, BL>(pass, base, mask, v);
}

// ---- groups: a block's keys in global memory ---------------------------------------------------------------
//
// Block F (its fixed bits: p .. lo-1 and lo+q .. L-1) holds local x <-> global F + spread(x),
// spread(x) = (x mod 2^p) + (x div 2^p) 2^lo. A mirrored level's first group (lo + q = level) holds
// its upper half (local bit C-1 set) mirrored: x <-> mirror(F + spread(x - 2^(C-1))) = top - spread(x),
// top = (F xor fixed bits below lo) + 2^level + (the spread of every local bit but C-1).
// Off: the type of spread(x) < 2^level: unsigned when the network has at most 2^32 keys (fewer
// registers). kMirror: a mirrored level's first group (its own code path: with a run-time choice
// between the two halves' addresses per key the kernel spilled at the 64-register budget).
template <class Off_, bool kMirror_>
struct Group {
  using Off = Off_;
  static constexpr bool kMirror = kMirror_;
  std::size_t F, top;
  unsigned pmask;
  int p, lo;
  __device__ __forceinline__ Off spread(unsigned x) const { return (x & pmask) + (static_cast<Off>(x >> p) << lo); }
  static __device__ __forceinline__ bool upper(unsigned x, int C) { return kMirror && ((x >> (C - 1)) & 1u); }
  __device__ __forceinline__ std::size_t index(unsigned x, int C) const {
    return upper(x, C) ? top - spread(x) : F + spread(x);
  }
  __device__ __forceinline__ std::size_t last(int C) const {  // the block's largest index
    return kMirror ? top - spread(1u << (C - 1)) : F + spread((1u << C) - 1);
  }
};

// Thread tau's keys in layout R: x = x0 + m 2^R, global index lower + spread(m 2^R) or, in a
// mirrored group's upper half, upper - spread(m 2^R). Whether key m is in the upper half (local bit
// C-1) is a compile-time fact of m in layout BL (bit C-1 is a register bit) and one fact per thread
// in the others: the index is never a run-time choice per key. When every register bit of R is a
// stride bit (R >= p: the usual case), spread(m 2^R) = m 2^(R - p + lo): one shift per key.
template <class Key, int KL, int R, bool kGuarded, bool kStore, bool kShift, class G>
__device__ __forceinline__ void group_io_keys(const detail::Pass<Key>& pass, const G& g, int C, std::uint32_t mask,
                                              unsigned x0, std::uint32_t (&v)[1 << KL]) {
  using Off = typename G::Off;
  const std::size_t s0 = g.spread(x0);
  const std::size_t lower = g.F + s0, upper = g.top - s0;
  const int shift = R - g.p + g.lo;
  const auto offset = [&](int m) -> Off {
    return kShift ? static_cast<Off>(static_cast<unsigned>(m)) << shift : g.spread(static_cast<unsigned>(m) << R);
  };
  const auto io = [&](int m, std::size_t i, bool up) {
    if (kStore) {
      const Key k = Codec<Key>::from(v[m] ^ mask ^ (up ? ~0u : 0u));
      if (kGuarded) pass.store(i, k);
      else pass.dst[i] = k;
    } else {
      v[m] = (kGuarded ? Codec<Key>::to(pass.load(i)) : Codec<Key>::to(pass.src[i])) ^ mask;
    }
  };
  if constexpr (G::kMirror) {
    const bool register_bit = R + KL >= C;  // R == BL: bit C-1 is a register bit
    if (!register_bit && ((x0 >> (C - 1)) & 1u)) {
#pragma unroll
      for (int m = 0; m < (1 << KL); ++m) io(m, upper - offset(m), true);
    } else {
#pragma unroll
      for (int m = 0; m < (1 << KL); ++m) {
        const bool up = register_bit && (((static_cast<unsigned>(m) << R) >> (C - 1)) & 1u);
        const Off d = offset(m);
        io(m, up ? upper - d : lower + d, up);
      }
    }
  } else if (kGuarded) {
#pragma unroll
    for (int m = 0; m < (1 << KL); ++m) io(m, lower + offset(m), false);
  } else if (kStore) {
    Key* const at = pass.dst + lower;
#pragma unroll
    for (int m = 0; m < (1 << KL); ++m) at[offset(m)] = Codec<Key>::from(v[m] ^ mask);
  } else {
    const Key* const at = pass.src + lower;
#pragma unroll
    for (int m = 0; m < (1 << KL); ++m) v[m] = Codec<Key>::to(at[offset(m)]) ^ mask;
  }
}
template <class Key, int KL, int R, bool kGuarded, bool kStore, class G>
__device__ __forceinline__ void group_io(const detail::Pass<Key>& pass, const G& g, int C, std::uint32_t mask,
                                         std::uint32_t (&v)[1 << KL]) {
  const unsigned x0 = kStore ? opaque(layout_x(KL, R, threadIdx.x, 0)) : layout_x(KL, R, threadIdx.x, 0);
  // (the mirrored groups keep to one path: with both they spilled at 64 registers)
  if (!G::kMirror && R >= g.p) group_io_keys<Key, KL, R, kGuarded, kStore, true>(pass, g, C, mask, x0, v);
  else group_io_keys<Key, KL, R, kGuarded, kStore, false>(pass, g, C, mask, x0, v);
}

template <int C, class Off, bool kMirror>
__device__ __forceinline__ Group<Off, kMirror> make_group(unsigned b, int level, int lo, int q) {
  Group<Off, kMirror> g;
  g.p = C - q;
  g.pmask = (1u << g.p) - 1;
  g.lo = lo;
  const int low_bits = lo - g.p;  // block bits below the strides (fixed bits p .. lo-1)
  const std::size_t fixed = (static_cast<std::size_t>(b >> low_bits) << (low_bits + q)) | (b & ((1u << low_bits) - 1));
  g.F = fixed << g.p;
  g.top = 0;
  if (kMirror) {
    const std::size_t between = ((std::size_t{1} << lo) - 1) & ~static_cast<std::size_t>(g.pmask);
    g.top = (g.F ^ between) + (std::size_t{1} << level) + g.spread((1u << (C - 1)) - 1);
  }
  return g;
}

template <class Key, int KL, int BL, class Off, bool kMirror>
__device__ __forceinline__ void group_pass(const detail::Pass<Key>& pass, unsigned b, int level, int lo, int q,
                                           bool alternating) {
  using S = Shape<KL, BL>;
  const detail::SharedKeys<std::uint32_t> s = detail::dynamic_shared_keys<std::uint32_t>();
  std::uint32_t v[S::K];
  int p;
  {
    const auto g = make_group<S::C, Off, kMirror>(b, level, lo, q);
    p = g.p;
    const std::uint32_t mask = alternating && !detail::ascending_at(g.F, level) ? ~0u : 0u;
    if (g.last(S::C) < pass.src_count) group_io<Key, KL, BL, false, false>(pass, g, S::C, mask, v);
    else group_io<Key, KL, BL, true, false>(pass, g, S::C, mask, v);
  }
  // the plan's walk_group: in a mirrored level's first group, bit C-1 (a register bit
  // of layout BL) is the mirror stride, after which the upper half (held mirrored) sorts the other way
  const int cur = walk_group(
      KL, BL, S::C - p, kMirror, [&](int from, int to) { transpose<KL, BL>(s, v, from, to); },
      [&](int R, int e) {
        register_stride(v, e - R);
        if (kMirror && e == S::C - 1) {
#pragma unroll
          for (int m = S::K / 2; m < S::K; ++m) v[m] = ~v[m];
        }
      });
  // the block's numbers again (the compiler decides whether to keep or recompute them)
  const auto g = make_group<S::C, Off, kMirror>(b, level, lo, q);
  const std::uint32_t mask = alternating && !detail::ascending_at(g.F, level) ? ~0u : 0u;
  const bool guarded = !(g.last(S::C) < pass.dst_count);
  with_layout<KL, BL>(cur, [&](auto r) {
    if (guarded) group_io<Key, KL, decltype(r)::value, true, true>(pass, g, S::C, mask, v);
    else group_io<Key, KL, decltype(r)::value, false, true>(pass, g, S::C, mask, v);
  });
}

// Strides 2^(lo+q-1) .. 2^lo of level `level` (p = C - q >= 5, lo >= C). kMirror: the first group of
// a mirrored level (lo + q == level, pad = virtual), a kernel of its own (both in one kernel spilled).
// The 64-register budget (Shape::kMinBlocks) holds for the group kernels of n <= 2^32 (32-bit
// offsets); the 64-bit-offset ones spilled a few words at it with 32 keys per thread and get the
// registers they want (CUDA 13.0, -Xptxas -v).
template <class Key, int KL, int BL, class Off>
constexpr int group_min_blocks() {
  return std::is_same_v<Key, std::int32_t> && std::is_same_v<Off, unsigned> ? Shape<KL, BL>::kMinBlocks : 1;
}

template <class Key, int KL, int BL, class Off, bool kMirror>
__global__ void __launch_bounds__(1 << BL, group_min_blocks<Key, KL, BL, Off>())
    fused_steps_kernel(detail::Pass<Key> pass, int level, int lo, int q, bool alternating, bool zig) {
  group_pass<Key, KL, BL, Off, kMirror>(pass, block_index(zig), level, lo, q, alternating);
}

// ---- the host side ----------------------------------------------------------------------------------------------

// Blocks of a group launch: the blocks whose smallest key F is below `extent` (bitonic_model.cpp's
// blocks_of counts the same).
inline std::size_t group_blocks(std::size_t extent, int C, int lo, int q) {
  const int p = C - q;
  return detail::groups_below(ceil_div(extent, std::size_t{1} << p), lo - p, q);
}

template <class Kernel>
void allow_shared(Kernel kernel, std::size_t bytes) {
  if (bytes > 48 * 1024) GPULAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

// The reference's settings: kFusedStrides global strides per launch, every other launch's blocks in
// reverse order (zigzag), lane shuffles for the blocked layout's 5 lane bits.
struct FusedVariant {
  int fuse = kFusedStrides;
  bool zigzag = true;
  int lane_bits = 5;
};

template <class Key, int KL, int BL>
void sort(const Key* d_in, Key* d_out, std::size_t n, SortWorkspace& ws, const FusedVariant& variant) {
  using S = Shape<KL, BL>;
  const auto steps = detail::plan_steps(n, S::C, S::C + 1, variant.fuse);
  if (steps.empty()) return;
  const std::size_t smem = shared_words(S::C) * sizeof(std::uint32_t);
  static std::once_flag attributes;
  std::call_once(attributes, [&] {
    allow_shared(tile_sort_fused_kernel<Key, KL, BL>, smem);
    allow_shared(tile_merge_fused_kernel<Key, KL, BL>, smem);
    allow_shared(fused_steps_kernel<Key, KL, BL, unsigned, false>, smem);
    allow_shared(fused_steps_kernel<Key, KL, BL, unsigned, true>, smem);
    allow_shared(fused_steps_kernel<Key, KL, BL, std::size_t, false>, smem);
    allow_shared(fused_steps_kernel<Key, KL, BL, std::size_t, true>, smem);
  });
  detail::Chain<Key> chain(d_in, d_out, n, ws, steps.size());
  const bool alternating = chain.orientation() == detail::Orientation::alternating;
  const unsigned tiles = detail::grid_for(chain.extent(), 1 << S::C);
  std::size_t launch = 0;
  for (const detail::Step& step : steps) {
    const detail::Pass<Key> pass = chain.next();
    const bool zig = variant.zigzag && (launch++ & 1) != 0;
    switch (step.kind) {
      case detail::StepKind::tile_sort:
        tile_sort_fused_kernel<Key, KL, BL><<<tiles, S::B, smem>>>(pass, step.level, alternating, zig, variant.lane_bits);
        break;
      case detail::StepKind::tile_merge:
        tile_merge_fused_kernel<Key, KL, BL><<<tiles, S::B, smem>>>(pass, step.level, alternating, zig, variant.lane_bits);
        break;
      case detail::StepKind::global: {
        const int q = step.hi - step.lo + 1;
        const std::size_t blocks = group_blocks(chain.extent(), S::C, step.lo, q);
        const std::size_t group_smem = group_needs_shared(KL, BL, q) ? smem : 0;
        const unsigned grid = detail::grid_for(blocks, 1);
        const bool mirror = !alternating && step.lo + q == step.level;
        if (step.level <= 32 && mirror)
          fused_steps_kernel<Key, KL, BL, unsigned, true><<<grid, S::B, group_smem>>>(pass, step.level, step.lo, q, alternating, zig);
        else if (step.level <= 32)
          fused_steps_kernel<Key, KL, BL, unsigned, false><<<grid, S::B, group_smem>>>(pass, step.level, step.lo, q, alternating, zig);
        else if (mirror)
          fused_steps_kernel<Key, KL, BL, std::size_t, true><<<grid, S::B, group_smem>>>(pass, step.level, step.lo, q, alternating, zig);
        else
          fused_steps_kernel<Key, KL, BL, std::size_t, false><<<grid, S::B, group_smem>>>(pass, step.level, step.lo, q, alternating, zig);
        break;
      }
      case detail::StepKind::copy:
        detail::launch_copy(pass, chain.extent());
        break;
    }
    GPULAB_CHECK_LAUNCH();
  }
}

}  // namespace bitonic::fused

// ==== the stage ==========================================================================================

namespace bitonic {

void sort_phase5_fused(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  static_assert(kFusedKeys == 32 && kFusedThreads == 512 && kFusedTileLog2 == 5 + 9,
                "bitonic.cuh's design: 32 keys (2^5) x 512 threads (2^9)");
  fused::sort<std::int32_t, 5, 9>(d_in, d_out, n, ws, fused::FusedVariant{});
}

}  // namespace bitonic
