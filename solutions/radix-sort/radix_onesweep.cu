// Reference, part 3 of 3 (the challenge): onesweep, LSD radix sort with r-bit digits (r = 8 by
// default) and one launch per pass (after Adinets & Merrill's Onesweep, CUB's algorithm since 1.13;
// written from the paper's description and CUB's published design notes; the ballot loop's PTX
// follows CUB's MatchAny, see match_by_ballots).
//
//   histogram  one launch for every pass: each block counts the digits of its share of the keys for
//              all P passes at once (per-warp histograms in shared memory, then global atomics)
//                                                                                   reads n
//   pass p     one launch: block b takes the next tile from an atomic counter and
//                1. counts the tile's digits per warp (shared atomics) and publishes the tile's 2^r
//                   digit counts at once ("early counts": the tiles behind wait less);
//                2. scans them (where each digit starts in the tile, and where each warp's keys of
//                   that digit start) and the pass's bins (where each digit starts in the output);
//                3. ranks every key by warp multisplit: the lanes holding one digit find each other
//                   with r ballots (one per digit bit), the highest of them adds the group to the
//                   warp's running offset of that digit with one shared atomic and hands the old
//                   value to the group: rank = old + peers below -- a position in the tile sorted by
//                   digit, stable (warp order, then item order, then lane order = input order);
//                4. reorders the tile by digit in shared memory;
//                5. looks back over the tiles before it, digit by digit (decoupled look-back, one
//                   thread per digit, several predecessors per memory round trip), publishes its
//                   inclusive prefix;
//                6. writes each digit's keys to bin offset + keys of that digit in earlier tiles +
//                   position: runs of one digit leave contiguous.               reads n, writes n
// Launches: 1 + P (CUB launches a separate kernel for the exclusive sum of the bins: 2 + P; here
// each pass block scans the 2^r bins itself -- 256 words, a few instructions per thread).
// Bytes: n + 2nP words (+2nP with values), plus 2^r words per tile of look-back state.
//
// The shape: 384 threads x 20 keys per tile, held to 3 blocks per SM (56 registers), as CUB's sm_90
// policy for 32-bit keys (384 x 19 with 64-bit offsets) compiles to (NOTES.md, "Where the reference
// loses to CUB");
// the ballot ranking replaced __match_any_sync (slower for few-bit labels, as CUB's own source
// notes) after the first measurement on an H100 (solutions/radix-sort/NOTES.md).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cuda/atomic>
#include <stdexcept>
#include <string>

#include "gpulab/cuda_check.hpp"
#include "radix_sort.cuh"

namespace radix_sort {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
__device__ __forceinline__ int warp_id() { return threadIdx.x >> 5; }
__device__ __forceinline__ unsigned lanes_up_to_me() {
  unsigned mask;
  asm("mov.u32 %0, %%lanemask_le;" : "=r"(mask));
  return mask;
}

__device__ __forceinline__ std::uint32_t warp_inclusive_scan(std::uint32_t x) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const std::uint32_t y = __shfl_up_sync(kFullMask, x, d);
    if (lane_id() >= d) x += y;
  }
  return x;
}

// to_ordered without a switch: x ^ (sign | float_mask & (x >> 31 arithmetic)).
//   u32: sign 0, float_mask 0 -> x;   i32: sign 2^31 -> x ^ 2^31;
//   f32: negative -> x ^ ~0 = ~x, positive -> x ^ 2^31.
struct KeyOrder {
  std::uint32_t sign, float_mask;
  __device__ __forceinline__ explicit KeyOrder(KeyType type)
      : sign(type == KeyType::u32 ? 0u : 0x80000000u), float_mask(type == KeyType::f32 ? ~0u : 0u) {}
  __device__ __forceinline__ std::uint32_t operator()(std::uint32_t x) const {
    return x ^ (sign | (float_mask & static_cast<std::uint32_t>(static_cast<std::int32_t>(x) >> 31)));
  }
  // The key whose ordered form is ~0: the largest digit in every pass (0x7fffffff, a NaN, for f32).
  __device__ __forceinline__ std::uint32_t last_key() const { return ~sign; }
};

// ---- the histogram of every pass --------------------------------------------------------------------

template <int kRadixBits>
struct HistogramShape {
  static constexpr int kDigits = 1 << kRadixBits;
  static constexpr int kMaxPasses = (32 + kRadixBits - 1) / kRadixBits;
  static constexpr int kBins = kDigits * kMaxPasses;  // <= 1024
};
constexpr int kHistogramThreads = 256;
constexpr int kHistogramWarps = kHistogramThreads / 32;
constexpr int kHistogramStep = 16 * kHistogramThreads;  // keys per block step: four uint4 per thread

// Warp w adds into its own copy of the histograms (contention only inside a warp: with all keys
// equal, 32 lanes hit one counter -- shared atomics serialise, which is contention, not a bank
// conflict); at the end the block adds its copies into bins[pass][digit] with global atomics.
// Four 128-bit loads per thread are in flight per step; the pass loop is unrolled to its maximum.
template <int kRadixBits>
__global__ void __launch_bounds__(kHistogramThreads)
    onesweep_histogram(const std::uint32_t* __restrict__ keys, std::size_t n, KeyType type, int end_bit, int passes,
                       std::uint32_t* __restrict__ bins) {
  using Shape = HistogramShape<kRadixBits>;
  __shared__ std::uint32_t hist[kHistogramWarps][Shape::kBins];
  for (int i = threadIdx.x; i < kHistogramWarps * Shape::kBins; i += kHistogramThreads) (&hist[0][0])[i] = 0;
  __syncthreads();
  std::uint32_t* mine = hist[warp_id()];
  const KeyOrder order(type);
  auto count = [&](std::uint32_t key) {
    const std::uint32_t ordered = order(key);
#pragma unroll
    for (int p = 0; p < Shape::kMaxPasses; ++p)
      if (p < passes)
        atomicAdd(&mine[p * Shape::kDigits + digit_of(ordered, p * kRadixBits, pass_bits(end_bit, kRadixBits, p))], 1u);
  };
  for (std::size_t base = blockIdx.x * static_cast<std::size_t>(kHistogramStep); base < n;
       base += static_cast<std::size_t>(gridDim.x) * kHistogramStep) {
    if (base + kHistogramStep <= n) {
      uint4 v[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) v[q] = *reinterpret_cast<const uint4*>(keys + base + 4 * (q * kHistogramThreads + threadIdx.x));
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        count(v[q].x);
        count(v[q].y);
        count(v[q].z);
        count(v[q].w);
      }
    } else {
      for (int q = 0; q < 4; ++q)
        for (int c = 0; c < 4; ++c) {
          const std::size_t i = base + 4 * (q * kHistogramThreads + threadIdx.x) + c;
          if (i < n) count(keys[i]);
        }
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < passes * Shape::kDigits; b += kHistogramThreads) {
    std::uint32_t total = 0;
#pragma unroll
    for (int w = 0; w < kHistogramWarps; ++w) total += hist[w][b];
    if (total) atomicAdd(&bins[b], total);
  }
}

// ---- look-back words --------------------------------------------------------------------------------
// One 32-bit word per (tile, digit): 0 = not yet; bit 31 clear = the tile's own count + 1 (an
// aggregate, never 0); bit 31 set = the inclusive prefix over tiles 0..this one. Counts fit in 31 bits
// because n <= kMaxKeys. Relaxed atomics on single words: nothing else hangs on them.
constexpr std::uint32_t kPrefixFlag = 0x80000000u;
// A wait that never ends is a bug (every tile waited for took its number before this one, so it is
// running): trap after ~2^24 polls (seconds) instead of hanging the GPU.
constexpr unsigned kSpinLimit = 1u << 24;

__device__ __forceinline__ void publish(std::uint32_t* word, std::uint32_t value) {
  cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(*word).store(value, cuda::memory_order_relaxed);
}
__device__ __forceinline__ std::uint32_t poll(std::uint32_t* word) {
  return cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(*word).load(cuda::memory_order_relaxed);
}

// The count of digit d in the tiles before `tile`: kWindow predecessors' words are loaded per
// memory round trip, then used nearest first; only a word that is still 0 is polled again. Before
// tile 0 lies an empty inclusive prefix.
template <int kWindow>
__device__ __forceinline__ std::uint32_t look_back_window(std::uint32_t* look_back, std::size_t tile, int digits, int d) {
  std::uint32_t exclusive = 0;
  long long g = static_cast<long long>(tile) - 1;
  while (true) {
    std::uint32_t word[kWindow];
#pragma unroll
    for (int k = 0; k < kWindow; ++k) word[k] = g - k >= 0 ? poll(&look_back[(g - k) * digits + d]) : kPrefixFlag;
#pragma unroll
    for (int k = 0; k < kWindow; ++k) {
      for (unsigned spins = 0; word[k] == 0; ++spins) {
        if (spins == kSpinLimit) __trap();
        word[k] = poll(&look_back[(g - k) * digits + d]);
      }
      if (word[k] & kPrefixFlag) return exclusive + (word[k] & ~kPrefixFlag);
      exclusive += word[k] - 1;
    }
    g -= kWindow;
  }
}

// Block-wide exclusive scans of two values per thread (threads >= 2^r pass 0s); one barrier.
template <int kWarps>
__device__ __forceinline__ void block_exclusive_scan2(std::uint32_t (&totals)[2][kWarps], std::uint32_t& a,
                                                      std::uint32_t& b) {
  const std::uint32_t a_inclusive = warp_inclusive_scan(a), b_inclusive = warp_inclusive_scan(b);
  if (lane_id() == 31) {
    totals[0][warp_id()] = a_inclusive;
    totals[1][warp_id()] = b_inclusive;
  }
  __syncthreads();
  std::uint32_t a_before = 0, b_before = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    if (w < warp_id()) {
      a_before += totals[0][w];
      b_before += totals[1][w];
    }
  }
  a = a_before + a_inclusive - a;
  b = b_before + b_inclusive - b;
}

// ---- the pass ------------------------------------------------------------------------------------------

// The lanes whose digit equals mine: one ballot per digit bit; a lane stays a peer while its bit
// equals mine (bits above a short last pass's width are 0 everywhere and change nothing).
// In PTX because of what ptxas makes of the C++ (a bool, __ballot_sync, one ? ones : ~ones): ~6 SASS
// instructions per bit for sm_90 with CUDA 13.0, where the bit tested straight into a predicate,
// the vote on it and the inversion under !p take ~3 -- CUB's MatchAny (cub/util_ptx.cuh) is written
// the same way. At r = 8 the C++ form was a fifth of the pass kernel's instructions per key.
template <int kBits>
__device__ __forceinline__ unsigned match_by_ballots(std::uint32_t d) {
  unsigned peers = kFullMask;
#pragma unroll
  for (int b = 0; b < kBits; ++b) {
    unsigned same;
    asm("{\n\t"
        ".reg .pred one;\n\t"
        "and.b32 %0, %1, %2;\n\t"
        "setp.ne.u32 one, %0, 0;\n\t"
        "vote.sync.ballot.b32 %0, one, 0xffffffff;\n\t"
        "@!one not.b32 %0, %0;\n\t"
        "}"
        : "=r"(same)
        : "r"(d), "r"(1u << b));
    peers &= same;
  }
  return peers;
}

constexpr int kThreads = kOnesweepThreads, kItems = kOnesweepItems, kTile = kOnesweepTile;
constexpr int kWarps = kThreads / 32, kWarpKeys = 32 * kItems;
constexpr int kWindow = kOnesweepLookBackWindow;
// Registers: keys and ranks in registers (values are loaded after the ranking): 65536 / (3 x 384) = 56,
// CUB's budget for its one-sweep pass; 2 blocks (80 registers) left 24 warps an SM to hide DRAM
// latency (NOTES.md, "Where the reference loses to CUB"). ptxas spills 8 bytes keys-only.
constexpr int kMinBlocks = 3;

template <int kRadixBits, bool kPairs>
struct PassShared {
  static constexpr int kDigits = 1 << kRadixBits;
  std::uint32_t warp_offsets[kWarps][kDigits];  // per warp and digit: counts, then running positions
  std::uint32_t digit_base[kDigits];            // output index of digit d's first key minus its tile start
  std::uint32_t scan_totals[2][kWarps];
  std::uint32_t tile_keys[kTile];               // the tile sorted by digit
  std::uint32_t tile_values[kPairs ? kTile : 1];
  unsigned tile;
};

// kU32: u32 keys are their own ordered form, and with the key type known at compile time the
// digit is a shift and a mask; a run-time KeyOrder costs ~9 SASS instructions per key at r = 8 in
// the digit computations, the compiler recomputing the transform's constants at each (56
// registers). CUB's Twiddle is likewise the identity for unsigned keys at compile time. i32 and f32
// keys take the run-time transform.
template <int kRadixBits, bool kPairs, bool kU32>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    onesweep_pass(const std::uint32_t* __restrict__ keys_in, const std::uint32_t* __restrict__ values_in,
                  std::uint32_t* __restrict__ keys_out, std::uint32_t* __restrict__ values_out, std::size_t n,
                  KeyType type, int shift, int bits, const std::uint32_t* __restrict__ bins, std::uint32_t* look_back,
                  unsigned* tile_counter) {
  using Shared = PassShared<kRadixBits, kPairs>;
  constexpr int kDigits = Shared::kDigits;
  static_assert(kDigits <= kThreads, "one thread per digit in the look-back");
  extern __shared__ uint4 shared_raw[];
  Shared& s = *reinterpret_cast<Shared*>(shared_raw);
  const int t = threadIdx.x, lane = lane_id(), warp = warp_id();
  const KeyOrder order(kU32 ? KeyType::u32 : type);
  const std::uint32_t digit_mask = (1u << bits) - 1u;
  // An item's digit is recomputed from its key at each use (a shift and a mask for u32 keys):
  // held packed, four to a register, the digits took 5 registers, and with one ranking path for
  // full and partial tiles ptxas then spilled 84 bytes at 56 registers; recomputed, nothing spills.
  auto digit = [&](std::uint32_t key) { return (order(key) >> shift) & digit_mask; };

  // 1. The tile, in the order blocks start; this pass's bin count of digit t (scanned below) is
  //    loaded meanwhile; each warp clears its counters.
  std::uint32_t bin = 0;
  if (t < kDigits) bin = bins[t];
  if (t == 0) s.tile = atomicAdd(tile_counter, 1u);
  for (int d = lane; d < kDigits; d += 32) s.warp_offsets[warp][d] = 0;
  __syncthreads();
  const std::size_t tile = s.tile;
  const std::size_t tile_base = tile * kTile;
  const int valid = static_cast<int>(std::min<std::size_t>(kTile, n - tile_base));
  const bool full = valid == kTile;
  const int warp_base = warp * kWarpKeys;
  auto in_range = [&](int j) { return full || warp_base + 32 * j + lane < valid; };

  // 2. Load: lane l of warp w holds item j = key tile_base + w * 32 * kItems + 32 j + l (each load
  //    instruction reads 128 contiguous bytes; order (w, j, lane) is the input order). A partial
  //    tile is padded with last_key(): the padding has the largest digit and comes after every key
  //    in input order, so a stable ranking puts it at positions valid .. kTile - 1, which are never
  //    written out, and counting, ranking and reordering need no range checks: one copy of the
  //    unrolled ranking instead of two (3552 -> 2056 SASS instructions at r = 8 with u32 keys, so
  //    less to fetch into the instruction caches; CUB pads the same way).
  std::uint32_t key[kItems];
  if (full) {
#pragma unroll
    for (int j = 0; j < kItems; ++j) key[j] = keys_in[tile_base + warp_base + 32 * j + lane];
  } else {
    const std::uint32_t pad = order.last_key();
#pragma unroll
    for (int j = 0; j < kItems; ++j) key[j] = in_range(j) ? keys_in[tile_base + warp_base + 32 * j + lane] : pad;
  }

  // 3. Count each warp's digits, then thread d: the warps' offsets within digit d (warp_offsets[w][d]
  //    := keys of d in warps before w) and the tile's count of d, published at once for the tiles
  //    behind; one block scan gives the digit starts in the tile and in the output (the bins). The
  //    padding is counted (its ranks must not collide); only the last tile has any, and no tile
  //    looks back at the last one.
#pragma unroll
  for (int j = 0; j < kItems; ++j) atomicAdd(&s.warp_offsets[warp][digit(key[j])], 1u);
  __syncthreads();
  std::uint32_t count = 0;
  if (t < kDigits) {
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const std::uint32_t c = s.warp_offsets[w][t];
      s.warp_offsets[w][t] = count;
      count += c;
    }
    publish(&look_back[tile * kDigits + t], tile == 0 ? (kPrefixFlag | count) : count + 1);
  }
  std::uint32_t start = count;  // thread d: where digit d starts in the tile sorted by digit
  block_exclusive_scan2<kWarps>(s.scan_totals, start, bin);
  if (t < kDigits) {
#pragma unroll
    for (int w = 0; w < kWarps; ++w) s.warp_offsets[w][t] += start;
  }
  __syncthreads();

  // 4. Warp multisplit of item j: peers, the highest peer adds the group to the warp's running
  //    offset of the digit and hands the old value to the group: rank = old + peers at or below me
  //    - 1, a position in the tile sorted by digit.
  std::uint32_t rank[kItems];
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const std::uint32_t d = digit(key[j]);
    const unsigned peers = match_by_ballots<kRadixBits>(d);
    const int leader = 31 - __clz(peers);
    std::uint32_t old = 0;
    if (lane == leader) old = atomicAdd(&s.warp_offsets[warp][d], static_cast<std::uint32_t>(__popc(peers)));
    old = __shfl_sync(kFullMask, old, leader);
    rank[j] = old + __popc(peers & lanes_up_to_me()) - 1;
  }

  // 5. Reorder the tile by digit in shared memory (no barrier needed before: nobody else reads
  //    tile_keys yet; the ranks, padding included, are a permutation of 0 .. kTile - 1); values are
  //    loaded now and reordered after the look-back (their loads are in flight meanwhile).
#pragma unroll
  for (int j = 0; j < kItems; ++j) s.tile_keys[rank[j]] = key[j];
  std::uint32_t value[kPairs ? kItems : 1];
  if constexpr (kPairs) {
#pragma unroll
    for (int j = 0; j < kItems; ++j) value[j] = in_range(j) ? values_in[tile_base + warp_base + 32 * j + lane] : 0u;
  }

  // 6. Thread d looks back for digit d's count in the earlier tiles, publishes this tile's
  //    inclusive prefix and where digit d's keys go: bin start + earlier tiles - tile start.
  if (t < kDigits) {
    std::uint32_t before_tile = 0;
    if (tile > 0) {
      before_tile = look_back_window<kWindow>(look_back, tile, kDigits, t);
      publish(&look_back[tile * kDigits + t], kPrefixFlag | (before_tile + count));
    }
    s.digit_base[t] = bin + before_tile - start;
  }
  if constexpr (kPairs) {
#pragma unroll
    for (int j = 0; j < kItems; ++j) s.tile_values[rank[j]] = value[j];
  }
  __syncthreads();

  // 7. Write out: thread t takes positions t, t + kThreads, ...: runs of one digit leave contiguous.
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int pos = j * kThreads + t;
    if (full || pos < valid) {
      const std::uint32_t k = s.tile_keys[pos];
      const std::size_t dest = s.digit_base[digit(k)] + static_cast<std::uint32_t>(pos);
      keys_out[dest] = k;
      if constexpr (kPairs) values_out[dest] = s.tile_values[pos];
    }
  }
}

// ---- host ---------------------------------------------------------------------------------------------

template <class Kernel>
int blocks_per_sm(Kernel kernel, int threads) {
  int blocks = 0;
  GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
  return std::max(blocks, 1);
}

using PassFn = void (*)(const std::uint32_t*, const std::uint32_t*, std::uint32_t*, std::uint32_t*, std::size_t,
                        KeyType, int, int, const std::uint32_t*, std::uint32_t*, unsigned*);

// The pass kernel for (r, pairs, u32 keys), with its opt-in to more than 48 KB of dynamic shared
// memory (once).
template <int kRadixBits, bool kPairs, bool kU32>
PassFn pass_kernel(std::size_t& shared) {
  shared = sizeof(PassShared<kRadixBits, kPairs>);
  static const PassFn k = [] {
    const PassFn fn = onesweep_pass<kRadixBits, kPairs, kU32>;
    if (sizeof(PassShared<kRadixBits, kPairs>) > 48 * 1024)
      GPULAB_CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(sizeof(PassShared<kRadixBits, kPairs>))));
    return fn;
  }();
  return k;
}

template <int kRadixBits>
void onesweep(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
              std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  constexpr int kDigits = 1 << kRadixBits;
  const bool pairs = d_values != nullptr;
  const int end_bit = ws.config.end_bit;
  const int passes = pass_count(end_bit, kRadixBits);
  const KeyType type = ws.config.key;
  const std::size_t tiles = gpulab::ceil_div(n, static_cast<std::size_t>(kTile));
  std::uint32_t* keys_tmp = ws.take<std::uint32_t>(n);
  std::uint32_t* values_tmp = pairs ? ws.take<std::uint32_t>(n) : nullptr;
  // One piece, one memset: bins (passes x 2^r), tile counters (passes), look-back (passes x tiles x 2^r).
  const std::size_t bin_words = static_cast<std::size_t>(passes) * kDigits;
  const std::size_t look_back_words = static_cast<std::size_t>(passes) * tiles * kDigits;
  const std::size_t words = bin_words + passes + look_back_words;
  std::uint32_t* state = ws.take<std::uint32_t>(words, 256);
  GPULAB_CUDA_CHECK(cudaMemsetAsync(state, 0, words * sizeof(std::uint32_t)));
  std::uint32_t* bins = state;
  unsigned* counters = state + bin_words;
  std::uint32_t* look_back = state + bin_words + passes;

  // The histogram: enough blocks to fill the GPU, each with at least 16 keys per thread.
  static const int per_sm = blocks_per_sm(onesweep_histogram<kRadixBits>, kHistogramThreads);
  const std::size_t wanted = gpulab::ceil_div(n, 16 * kHistogramThreads);
  const auto grid = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(wanted, static_cast<std::size_t>(per_sm) * ws.multiprocessors)));
  onesweep_histogram<kRadixBits><<<grid, kHistogramThreads>>>(d_keys, n, type, end_bit, passes, bins);
  GPULAB_CHECK_LAUNCH();

  std::size_t shared = 0;
  const PassFn pass = type == KeyType::u32 ? (pairs ? pass_kernel<kRadixBits, true, true>(shared)
                                                    : pass_kernel<kRadixBits, false, true>(shared))
                                           : (pairs ? pass_kernel<kRadixBits, true, false>(shared)
                                                    : pass_kernel<kRadixBits, false, false>(shared));
  for (int p = 0; p < passes; ++p) {
    // Ping-pong: pass p writes the output when P - 1 - p is even, so the last pass always does.
    const bool to_out = (passes - 1 - p) % 2 == 0;
    std::uint32_t* keys_dst = to_out ? d_keys_out : keys_tmp;
    std::uint32_t* values_dst = pairs ? (to_out ? d_values_out : values_tmp) : nullptr;
    const std::uint32_t* keys_src = p == 0 ? d_keys : (to_out ? keys_tmp : d_keys_out);
    const std::uint32_t* values_src = pairs ? (p == 0 ? d_values : (to_out ? values_tmp : d_values_out)) : nullptr;
    pass<<<static_cast<unsigned>(tiles), kThreads, shared>>>(keys_src, values_src, keys_dst, values_dst, n, type,
                                                            p * kRadixBits, pass_bits(end_bit, kRadixBits, p),
                                                            bins + p * kDigits, look_back + p * tiles * kDigits,
                                                            counters + p);
    GPULAB_CHECK_LAUNCH();
  }
}

}  // namespace

void sort_onesweep(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                   std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  if (n > kMaxKeys) throw std::length_error("onesweep: n = " + std::to_string(n) + " is above kMaxKeys");
  if (n == 0) return;
  if (ws.config.end_bit == 0) {  // nothing to sort, but the poisoned output must still be written
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(d_keys_out, d_keys, n * 4, cudaMemcpyDeviceToDevice));
    if (d_values) GPULAB_CUDA_CHECK(cudaMemcpyAsync(d_values_out, d_values, n * 4, cudaMemcpyDeviceToDevice));
    return;
  }
  switch (ws.config.radix_bits) {
    case 1: return onesweep<1>(d_keys, d_keys_out, d_values, d_values_out, n, ws);
    case 2: return onesweep<2>(d_keys, d_keys_out, d_values, d_values_out, n, ws);
    case 4: return onesweep<4>(d_keys, d_keys_out, d_values, d_values_out, n, ws);
    case 6: return onesweep<6>(d_keys, d_keys_out, d_values, d_values_out, n, ws);
    case 8: return onesweep<8>(d_keys, d_keys_out, d_values, d_values_out, n, ws);
    default:
      throw std::invalid_argument("onesweep: bits=" + std::to_string(ws.config.radix_bits) +
                                  " is not one of 1, 2, 4, 6, 8");
  }
}

}  // namespace radix_sort
