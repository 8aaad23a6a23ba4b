// Reference of the fourth student file (labs/shearsort/shear_device.cuh): the device helpers the
// reference's three files share -- the keys the kernels sort (int32, or 64-bit (key, position)
// composites for pairs), one thread's 32-key network (in shared memory or in registers), seed
// 000's in-place transposition (Appendix B, Algorithm 2), the two tile layouts, the five tile
// algorithms as one kernel template, and sort_tiles, the base case both merge stages start from.
#pragma once
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <utility>

#include "gpulab/cuda_check.hpp"
#include "shearsort.cuh"

namespace shearsort {

// The kit's helpers by their short names, for the reference's files (each includes this header):
// shearsort.cuh leaves them in gpulab:: so that a submission may define helpers of its own.
using gpulab::ceil_div;
using gpulab::ceil_log2;
using gpulab::is_pow2;

// The base case of both merge stages (tile_sorts.cu): every tile of d_keys_in sorted by `variant`'s
// kernel into d_keys_out. Keys only when d_values_in == nullptr; otherwise each tile sorts
// (key, position) pairs as one 64-bit key, so equal keys keep their order (a stable tile) and each
// value follows its key. One launch (none for n == 0).
void sort_tiles(TileVariant variant, const std::int32_t* d_keys_in, const std::uint32_t* d_values_in,
                std::int32_t* d_keys_out, std::uint32_t* d_values_out, std::size_t n);

}  // namespace shearsort

namespace shearsort::device {

inline constexpr unsigned kFullMask = 0xffffffffu;

// ---- what a kernel sorts ---------------------------------------------------------------------------------
//
// Keys only: the int32 itself. Pairs: a 64-bit composite (key with its sign bit flipped, so that
// unsigned order is signed order) << 32 | a position. Sorting composites orders equal keys by
// position: a stable sort whatever the network does with ties, and the position finds the value.
__host__ __device__ __forceinline__ std::uint64_t make_composite(std::int32_t key, std::uint32_t position) {
  return (std::uint64_t(std::uint32_t(key) ^ 0x80000000u) << 32) | position;
}
__host__ __device__ __forceinline__ std::int32_t composite_key(std::uint64_t c) {
  return std::int32_t(std::uint32_t(c >> 32) ^ 0x80000000u);
}
__host__ __device__ __forceinline__ std::uint32_t composite_position(std::uint64_t c) { return std::uint32_t(c); }

// The virtual padding of a partial tile or run. int32: INT_MAX, which ties with a real INT_MAX --
// harmless, because only values are written and the first m values of sort(m real keys + pads) are
// the m real keys' values (a pad and a real INT_MAX are the same value). Composite: all ones, which
// no real composite reaches (positions stay below 2^32 - 1), so pads sort strictly last.
template <class Key>
struct Pad;
template <>
struct Pad<std::int32_t> {
  static constexpr std::int32_t value = INT_MAX;
};
template <>
struct Pad<std::uint64_t> {
  static constexpr std::uint64_t value = ~std::uint64_t{0};
};

// After order(a, b): a <= b. Data-oblivious: both are always written.
template <class Key>
__device__ __forceinline__ void order(Key& a, Key& b) {
  const Key lo = b < a ? b : a;
  b = b < a ? a : b;
  a = lo;
}

// ---- one thread sorts 32 keys in registers (seed 000 §6.3) --------------------------------------------------
//
// The comparators are template arguments, so every register index is a compile-time constant and
// v[] stays in registers (no local memory: check `-Xptxas -v`). A descending sort is the ascending
// network on ~x (bitwise not reverses the order of int32 and of uint64 alike).
template <int Lo, int Hi, class Key>
__device__ __forceinline__ void compare_exchange(Key (&v)[kTileSide]) {
  order(v[Lo], v[Hi]);
}
template <class Key, std::size_t... I>
__device__ __forceinline__ void network_in_registers(Key (&v)[kTileSide], std::index_sequence<I...>) {
  (compare_exchange<kNetwork32[I].lo, kNetwork32[I].hi>(v), ...);
}
template <class Key>
__device__ __forceinline__ void sort_in_registers(Key (&v)[kTileSide], bool descending) {
  const Key flip = descending ? Key(~Key(0)) : Key(0);
#pragma unroll
  for (int i = 0; i < kTileSide; ++i) v[i] ^= flip;
  network_in_registers(v, std::make_index_sequence<kNetwork32.size()>{});
#pragma unroll
  for (int i = 0; i < kTileSide; ++i) v[i] ^= flip;
}

// ---- one thread sorts 32 keys in place in shared memory -------------------------------------------------------
//
// The same odd-even merge network, comparator by comparator: two loads and two stores each (the
// model's 4 shared accesses per compare-exchange). `volatile` keeps every one of them: without it the
// compiler may keep keys in registers between comparators and the stage stops being what it
// claims (and what the bank model predicts). at(e) is the shared word of the thread's e-th key.
template <class Key, class At>
__device__ __forceinline__ void network_in_shared(volatile Key* s, At at, bool descending) {
#pragma unroll 1
  for (int lp = 0; lp < kLog2TileSide; ++lp) {
    const int p = 1 << lp;
#pragma unroll 1
    for (int k = p; k >= 1; k >>= 1)
      for (int j = k & (p - 1); j + k < kTileSide; j += 2 * k)
        for (int i = 0; i < k && i + j + k < kTileSide; ++i)
          if (((i + j) >> (lp + 1)) == ((i + j + k) >> (lp + 1))) {
            const int x = at(i + j), y = at(i + j + k);
            const Key a = s[x], b = s[y];
            const bool swap = descending ? (a < b) : (b < a);
            s[x] = swap ? b : a;
            s[y] = swap ? a : b;
          }
  }
}

// ---- seed 000 Appendix B, Algorithm 2: transpose the plain 32 x 32 tile in place ----------------------------
//
// Word 32 r + c holds element (r, c). Diagonal i = 1..31: lane c (c + i < 32) swaps (c, c + i), word
// 33 c + i in bank c + i, with (c + i, c), word 32 (c + i) + c in bank c: the active lanes hit
// distinct banks in both accesses. Every element moves once, so the seed's barrier per step is not
// needed; one __syncwarp() after the sweep publishes the result.
template <class Key>
__device__ __forceinline__ void transpose_in_place(volatile Key* s, int lane) {
#pragma unroll 1
  for (int i = 1; i < kTileSide; ++i) {
    const int partner = lane + i;
    if (partner < kTileSide) {
      const int upper = lane * kTileSide + partner, lower = partner * kTileSide + lane;
      const Key a = s[upper], b = s[lower];
      s[lower] = a;
      s[upper] = b;
    }
  }
}

// ---- the two tile layouts (the bank matrix: key a = 32 c + i is column c, bank row i) ------------------------

// Key a at word a: column c is words 32c..32c+31 (one per bank), row r is words r + 32j (one bank).
struct PlainLayout {
  static constexpr int kWords = kTileKeys;
  __device__ __forceinline__ static int at(int a) { return a; }
};
// Key a = 32 c + i at word 33 c + i: column c starts c banks later, so a row walk (keys r + 32 j,
// words 33 j + r, banks (j + r) mod 32) and a column walk (words 33 c + i, banks (c + i) mod 32)
// are both conflict-free. 33/32 of the memory.
struct PaddedLayout {
  static constexpr int kWords = kTileSide * (kTileSide + 1);
  __device__ __forceinline__ static int at(int a) { return a + (a >> kLog2TileSide); }
};

// Thread `lane` walks column `lane` (keys 32 lane + i) or row `lane` (keys lane + 32 j).
template <class Layout>
struct ColumnOf {
  int c;
  __device__ __forceinline__ int operator()(int i) const { return Layout::at(c * kTileSide + i); }
};
template <class Layout>
struct RowOf {
  int r;
  __device__ __forceinline__ int operator()(int j) const { return Layout::at(r + kTileSide * j); }
};

// ---- the five tile algorithms: sort(s, lane) sorts the warp's tile at s -------------------------------------
//
// Each ends with __syncwarp(): the caller's reads of other lanes' words come after it.

// tile-bitonic: Batcher's bitonic network on all 1024 keys, 55 steps of 512 comparators, lane
// `lane` taking comparators t = 32 c + lane (c = 0..15) of each step: t with a 0 inserted at bit
// log2 j is the lower index. For strides j < 32 the warp's lower indices span 64 words and hit
// every bank twice: a 2-way conflict in each of the 4 accesses (shearsort_model.cpp, tile_requests).
struct BitonicShared {
  using Layout = PlainLayout;
  template <class Key>
  __device__ static void sort(Key* tile, int lane) {
    volatile Key* s = tile;
#pragma unroll 1
    for (int ls = 1; ls <= 2 * kLog2TileSide; ++ls) {      // merge size 2^ls
#pragma unroll 1
      for (int lj = ls - 1; lj >= 0; --lj) {              // stride j = 2^lj
        const int j = 1 << lj;
#pragma unroll 4
        for (int c = 0; c < kTileKeys / 2 / kWarp; ++c) {
          const int t = c * kWarp + lane;
          const int lo = ((t >> lj) << (lj + 1)) | (t & (j - 1));
          const bool descending = (lo >> ls) & 1;
          const Key a = s[lo], b = s[lo + j];
          const bool swap = descending ? (a < b) : (b < a);
          s[lo] = swap ? b : a;
          s[lo + j] = swap ? a : b;
        }
        __syncwarp();
      }
    }
  }
};

// tile-shear-naive: column phases sort column `lane` in place: all 32 lanes in one bank, 32 words.
struct ShearNaive {
  using Layout = PlainLayout;
  template <class Key>
  __device__ static void sort(Key* tile, int lane) {
    volatile Key* s = tile;
#pragma unroll 1
    for (int round = 0; round <= kShearRounds; ++round) {
      const bool last = round == kShearRounds;
      network_in_shared(s, ColumnOf<Layout>{lane}, !last && (lane & 1));
      __syncwarp();
      if (last) break;
      network_in_shared(s, RowOf<Layout>{lane}, false);
      __syncwarp();
    }
  }
};

// tile-shear-transpose: a column phase is transpose, sort row `lane` (= column `lane` before the
// transpose), transpose back (seed 000 §5); row phases as in naive.
struct ShearTranspose {
  using Layout = PlainLayout;
  template <class Key>
  __device__ static void sort(Key* tile, int lane) {
    volatile Key* s = tile;
#pragma unroll 1
    for (int round = 0; round <= kShearRounds; ++round) {
      const bool last = round == kShearRounds;
      transpose_in_place(s, lane);
      __syncwarp();
      network_in_shared(s, RowOf<Layout>{lane}, !last && (lane & 1));
      __syncwarp();
      transpose_in_place(s, lane);
      __syncwarp();
      if (last) break;
      network_in_shared(s, RowOf<Layout>{lane}, false);
      __syncwarp();
    }
  }
};

// Loads the 32 keys at(0..31) into registers, sorts them, stores them back: 32 + 32 accesses.
template <class Key, class At>
__device__ __forceinline__ void sort_line_in_registers(Key* s, At at, bool descending) {
  Key v[kTileSide];
#pragma unroll
  for (int e = 0; e < kTileSide; ++e) v[e] = s[at(e)];
  sort_in_registers(v, descending);
#pragma unroll
  for (int e = 0; e < kTileSide; ++e) s[at(e)] = v[e];
}

// tile-shear-registers: as transpose, each row sorted in 32 registers (seed 000 §6.3).
struct ShearRegisters {
  using Layout = PlainLayout;
  template <class Key>
  __device__ static void sort(Key* tile, int lane) {
#pragma unroll 1
    for (int round = 0; round <= kShearRounds; ++round) {
      const bool last = round == kShearRounds;
      transpose_in_place<Key>(tile, lane);
      __syncwarp();
      sort_line_in_registers(tile, RowOf<Layout>{lane}, !last && (lane & 1));
      __syncwarp();
      transpose_in_place<Key>(tile, lane);
      __syncwarp();
      if (last) break;
      sort_line_in_registers(tile, RowOf<Layout>{lane}, false);
      __syncwarp();
    }
  }
};

// tile-shear-padded: the 32 x 33 layout, columns and rows read straight into registers.
struct ShearPadded {
  using Layout = PaddedLayout;
  template <class Key>
  __device__ static void sort(Key* tile, int lane) {
#pragma unroll 1
    for (int round = 0; round <= kShearRounds; ++round) {
      const bool last = round == kShearRounds;
      sort_line_in_registers(tile, ColumnOf<Layout>{lane}, !last && (lane & 1));
      __syncwarp();
      if (last) break;
      sort_line_in_registers(tile, RowOf<Layout>{lane}, false);
      __syncwarp();
    }
  }
};

// ---- where tiles come from and go to --------------------------------------------------------------------

struct KeysIO {
  using Key = std::int32_t;
  const std::int32_t* in;
  std::int32_t* out;
  __device__ __forceinline__ Key load(std::size_t base, int a, int valid) const {
    return a < valid ? in[base + a] : Pad<Key>::value;
  }
  __device__ __forceinline__ void store(std::size_t base, int a, Key k) const { out[base + a] = k; }
};

// (key, position in the tile): the value follows through the position (a gather inside the tile's
// 4 KiB of values, served by L1).
struct PairsIO {
  using Key = std::uint64_t;
  const std::int32_t* in;
  const std::uint32_t* values_in;
  std::int32_t* out;
  std::uint32_t* values_out;
  __device__ __forceinline__ Key load(std::size_t base, int a, int valid) const {
    return a < valid ? make_composite(in[base + a], std::uint32_t(a)) : Pad<Key>::value;
  }
  __device__ __forceinline__ void store(std::size_t base, int a, Key k) const {
    out[base + a] = composite_key(k);
    values_out[base + a] = values_in[base + composite_position(k)];
  }
};

// ---- the tile kernel: one warp per tile, kTileWarps tiles per block ------------------------------------------
//
// Staging: lane l moves keys 32 k + l (k = 0..31): each warp access to global memory is one 128-byte
// line, and the shared stores/loads at Layout::at(32 k + l) are conflict-free in both layouts.
// Warps whose tile lies past n return at once (no block-wide barrier follows).
template <class Algo, class IO>
__global__ void __launch_bounds__(kTileWarps * kWarp) tile_sort_kernel(IO io, std::size_t n) {
  using Key = typename IO::Key;
  using Layout = typename Algo::Layout;
  extern __shared__ __align__(16) unsigned char tile_smem[];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const std::size_t base = (std::size_t(blockIdx.x) * kTileWarps + warp) * kTileKeys;
  if (base >= n) return;
  const int valid = n - base < std::size_t(kTileKeys) ? int(n - base) : kTileKeys;
  Key* tile = reinterpret_cast<Key*>(tile_smem) + warp * Layout::kWords;
#pragma unroll 8
  for (int k = 0; k < kTileSide; ++k) {
    const int a = k * kWarp + lane;
    tile[Layout::at(a)] = io.load(base, a, valid);
  }
  __syncwarp();
  Algo::template sort<Key>(tile, lane);
#pragma unroll 8
  for (int k = 0; k < kTileSide; ++k) {
    const int a = k * kWarp + lane;
    if (a < valid) io.store(base, a, tile[Layout::at(a)]);
  }
}

template <class Algo, class IO>
void launch_tile_sort(IO io, std::size_t n) {
  if (n == 0) return;
  const std::size_t tiles = ceil_div(n, kTileKeys);
  const std::size_t blocks = ceil_div(tiles, kTileWarps);
  const std::size_t smem = std::size_t(kTileWarps) * Algo::Layout::kWords * sizeof(typename IO::Key);
  tile_sort_kernel<Algo, IO><<<static_cast<unsigned>(blocks), kTileWarps * kWarp, smem>>>(io, n);
  GPULAB_CHECK_LAUNCH();
}

// ---- warp helpers the merge stages share -----------------------------------------------------------------------

template <class T>
__device__ __forceinline__ T warp_sum(T x) {
#pragma unroll
  for (int s = kWarp / 2; s > 0; s >>= 1) x += __shfl_xor_sync(kFullMask, x, s);
  return x;
}

}  // namespace shearsort::device
