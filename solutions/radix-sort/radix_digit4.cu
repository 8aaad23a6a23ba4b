// Reference, part 2 of 3: digit4, LSD radix sort with 4-bit digits in three rounds per pass.
//
// A pass is colored prefix sums with d = 16 colors (seed 000 §4: the color of a key is its digit)
// followed by a scatter, in the three rounds of seed 000's prefix sums algorithm:
//   upsweep    block g counts the digits of its tile (one tile of whole chunks per resident block,
//              seed 000's "tile of ceil(n/p) contiguous elements")       reads n
//   spine      one block scans the 16 x G count matrix, digit-major:
//              offset(d, g) = keys with a smaller digit + keys with digit d in tiles before g
//   downsweep  block g walks its tile chunk by chunk: a stable rank of each key among the chunk's
//              keys by digit (per-thread counts, warp scans, a per-thread table in shared memory),
//              the chunk reordered by digit in shared memory (Satish, Harris & Garland's local
//              sort), then written out in sorted order: each digit's keys leave as one run
//                                                                         reads n, writes n
// 3 launches per pass, ceil(end_bit / 4) passes; 3n words per pass (+2n with values: only the
// downsweep moves them), plus 2 x 16 G words for the spine.
//
// The upsweep is digit4_count (radix_sort.cuh), stage digit4-count: the one part graded conflict-free.
// Bank conflicts: none in the counting, whatever the keys. The upsweep counts with per-lane
// counters, counts[warp][d * 32 + lane]: a lane only ever touches its own bank (seed 000's
// conflict-free colored prefix sums give each thread one bank for the same reason; the model's
// digit_count_requests draws it). The downsweep stages the chunk striped into a padded array (one
// word per 32, as the scan lab's conflict-free tree), so that both the striped copy and the
// blocked reads are conflict-free, and keeps its per-thread table as counters[d * 256 + t]: thread t
// only ever reads and writes column t (bank t mod 32). The one access that does conflict is the
// reorder: a store at a data-dependent rank, ~2.4 excess wavefronts per warp request for uniform
// digits (radix_sort_model.hpp, digit4_reorder_summary; none for equal keys, thanks to the padding:
// unpadded, thread t's ranks 16 t + i would put equal keys 16-way into one bank). What it buys is
// in global memory: written from registers, a store instruction's 32 keys land in ~16 runs and most
// cost a sector of their own (0.84 sectors per written key, digit4_scatter_sectors_per_key);
// written in sorted order they leave in runs of ~256 keys, 0.155 sectors per key (a warp's 32
// keys straddle 5 sectors). Written from registers, the whole stage was conflict-free and 0.21 x
// CUB at 2^28 on the H200, with 3 blocks per SM no faster: the scatter, not latency, was the limit.
//
// Latency: the upsweep keeps four 128-bit loads per thread in flight; the downsweep double-buffers
// its chunks -- while chunk c is ranked and written, chunk c + 1 is already on its way into the
// other half of a two-chunk stage (cp.async: the copy goes from global to shared memory without
// registers, and the thread waits for it only when the next chunk starts).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

#include "gpulab/cuda_check.hpp"
#include "radix_sort.cuh"

namespace radix_sort {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kThreads = kDigit4Threads;  // 256
constexpr int kWarps = kThreads / 32;
constexpr int kDigits = kDigit4Digits;     // 16
constexpr int kItems = kDigit4Items;       // 16 keys per thread per chunk
constexpr int kChunk = kDigit4Chunk;       // 4096
constexpr int kPaddedChunk = kChunk + kChunk / 32;
static_assert(kItems % 4 == 0 && kItems <= 16, "the packed per-thread counters hold at most 255 per digit");

__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
__device__ __forceinline__ int warp_id() { return threadIdx.x >> 5; }

__device__ __forceinline__ std::uint32_t warp_sum(std::uint32_t x) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(kFullMask, x, d);
  return x;
}

__device__ __forceinline__ std::uint32_t warp_inclusive_scan(std::uint32_t x) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const std::uint32_t y = __shfl_up_sync(kFullMask, x, d);
    if (lane_id() >= d) x += y;
  }
  return x;
}

// One pad word after every 32: word k of the chunk lives at k + k / 32.
__device__ __forceinline__ int padded(int k) { return k + (k >> 5); }

// ---- round 1: upsweep -----------------------------------------------------------------------------
//
// Warp w's lanes read 128 consecutive keys per step (a 128-bit load each; four steps in flight)
// and add 1 to their counter of each key's digit: a load and a store per key. With
// CounterLayout::per_lane the counter of (digit d, lane l) is word d * 32 + l of the warp's
// 16 x 32 array, in bank l whatever d is; with per_thread it is word l * 16 + d (the contrast: a
// thread's counters side by side). Then each warp adds its 32 counters per digit with shuffles, and
// threads 0..15 add the warps: tile_counts[d * G + g].
template <CounterLayout kLayout>
__device__ __forceinline__ int counter_word(int digit, int lane) {
  return kLayout == CounterLayout::per_lane ? digit * 32 + lane : lane * kDigits + digit;
}

template <CounterLayout kLayout>
__global__ void __launch_bounds__(kThreads)
    digit4_upsweep(const std::uint32_t* __restrict__ keys, std::size_t n, std::size_t tile_size, KeyType type,
                   int shift, int bits, std::uint32_t* __restrict__ tile_counts) {
  __shared__ std::uint32_t lane_counts[kWarps][kDigits * 32];
  __shared__ std::uint32_t warp_counts[kWarps][kDigits];
  const int lane = lane_id(), warp = warp_id();
  std::uint32_t* mine = lane_counts[warp];
#pragma unroll
  for (int d = 0; d < kDigits; ++d) mine[counter_word<kLayout>(d, lane)] = 0;
  const std::size_t begin = blockIdx.x * tile_size;
  const std::size_t end = std::min(begin + tile_size, n);
  auto count = [&](std::uint32_t key) {
    mine[counter_word<kLayout>(static_cast<int>(digit_of(to_ordered(key, type), shift, bits)), lane)] += 1;
  };
  constexpr std::size_t kStep = 4 * kThreads;  // keys per block step: one uint4 per thread
  std::size_t base = begin;
  for (; base + 4 * kStep <= end; base += 4 * kStep) {  // block-uniform: whole trips of 4 steps
    uint4 v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) v[q] = *reinterpret_cast<const uint4*>(keys + base + q * kStep + 4 * threadIdx.x);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      count(v[q].x);
      count(v[q].y);
      count(v[q].z);
      count(v[q].w);
    }
  }
  for (std::size_t i = base + 4 * static_cast<std::size_t>(threadIdx.x); i < end; i += kStep) {  // the tail
    std::uint32_t k[4];
    int valid = 4;
    if (i + 3 < end) {
      const uint4 v = *reinterpret_cast<const uint4*>(keys + i);
      k[0] = v.x, k[1] = v.y, k[2] = v.z, k[3] = v.w;
    } else {
      valid = static_cast<int>(end - i);
#pragma unroll
      for (int c = 0; c < 4; ++c) k[c] = c < valid ? keys[i + c] : 0u;
    }
#pragma unroll
    for (int c = 0; c < 4; ++c)
      if (c < valid) count(k[c]);
  }
  __syncwarp();
  std::uint32_t my_total = 0;  // lane d < 16 ends with its warp's count of digit d
#pragma unroll
  for (int d = 0; d < kDigits; ++d) {
    const std::uint32_t sum = warp_sum(mine[counter_word<kLayout>(d, lane)]);
    if (lane == d) my_total = sum;
  }
  if (lane < kDigits) warp_counts[warp][lane] = my_total;
  __syncthreads();
  if (threadIdx.x < kDigits) {
    std::uint32_t total = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += warp_counts[w][threadIdx.x];
    tile_counts[threadIdx.x * gridDim.x + blockIdx.x] = total;
  }
}

// ---- round 2: spine -------------------------------------------------------------------------------
// One block of 1024 threads scans counts[0, 16 G) exclusive, in place, 1024 at a time (seed 000
// §4 runs the spine on one multiprocessor: it is only d x p values).
__global__ void __launch_bounds__(1024) digit4_spine(std::uint32_t* counts, std::size_t count) {
  __shared__ std::uint32_t warp_sums[32];
  __shared__ std::uint32_t chunk_total;
  std::uint32_t carry = 0;
  for (std::size_t base = 0; base < count; base += 1024) {
    const std::size_t i = base + threadIdx.x;
    const std::uint32_t x = i < count ? counts[i] : 0u;
    const std::uint32_t inclusive = warp_inclusive_scan(x);
    if (lane_id() == 31) warp_sums[warp_id()] = inclusive;
    __syncthreads();
    if (warp_id() == 0) {
      const std::uint32_t w = warp_sums[lane_id()];
      const std::uint32_t w_inclusive = warp_inclusive_scan(w);
      warp_sums[lane_id()] = w_inclusive - w;
      if (lane_id() == 31) chunk_total = w_inclusive;
    }
    __syncthreads();
    if (i < count) counts[i] = carry + warp_sums[warp_id()] + inclusive - x;
    carry += chunk_total;
    __syncthreads();  // warp_sums and chunk_total are rewritten by the next chunk
  }
}

// ---- round 3: downsweep ---------------------------------------------------------------------------

template <bool kPairs>
struct DownsweepShared {
  std::uint32_t keys[2][kPaddedChunk];  // chunk c staged in keys[c % 2], padded; then sorted by digit there
  std::uint32_t values[kPairs ? 2 : 1][kPairs ? kPaddedChunk : 1];
  std::uint32_t counters[kDigits * kThreads];   // [d * 256 + t]: thread t's first rank of digit d, bank t mod 32
  std::uint32_t warp_counts[kWarps * kDigits];  // per warp per digit: counts, then offsets in the chunk
  std::uint32_t digit_base[kDigits];            // output index of digit d's first key minus its start in
                                                // the chunk sorted by digit (mod 2^32)
};

// Thread t's count of digit d among its items, from two 64-bit words of eight 8-bit counters.
__device__ __forceinline__ std::uint32_t packed_count(unsigned long long lo, unsigned long long hi, int d) {
  return static_cast<std::uint32_t>(((d < 8 ? lo : hi) >> (8 * (d & 7))) & 0xffu);
}

// 4-byte asynchronous copies global -> shared (sm_80+): word k of the chunk to padded(k), striped
// (each warp instruction reads 128 contiguous bytes), then one commit per chunk.
// Before sm_80 (the handout's reference runner is also built for sm_75) the copy is an ordinary
// load and store: correct, without the overlap.
__device__ __forceinline__ void copy_async4(std::uint32_t* shared, const std::uint32_t* global) {
#if __CUDA_ARCH__ >= 800
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(address), "l"(global) : "memory");
#else
  *shared = *global;
#endif
}
__device__ __forceinline__ void copy_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void copy_async_wait_all() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

template <bool kPairs>
__device__ __forceinline__ void stage_chunk_async(DownsweepShared<kPairs>& s, int slot, const std::uint32_t* keys,
                                                  const std::uint32_t* values, int valid) {
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int k = j * kThreads + static_cast<int>(threadIdx.x);
    if (k < valid) {
      copy_async4(&s.keys[slot][padded(k)], keys + k);
      if constexpr (kPairs) copy_async4(&s.values[slot][padded(k)], values + k);
    }
  }
  copy_async_commit();
}

template <bool kPairs>
__global__ void __launch_bounds__(kThreads, kDigit4BlocksPerSm)
    digit4_downsweep(const std::uint32_t* __restrict__ keys_in, const std::uint32_t* __restrict__ values_in,
                     std::uint32_t* __restrict__ keys_out, std::uint32_t* __restrict__ values_out, std::size_t n,
                     std::size_t tile_size, KeyType type, int shift, int bits,
                     const std::uint32_t* __restrict__ tile_offsets) {
  extern __shared__ uint4 shared_raw[];
  auto& s = *reinterpret_cast<DownsweepShared<kPairs>*>(shared_raw);
  const int t = threadIdx.x, lane = lane_id(), warp = warp_id();
  const std::size_t begin = blockIdx.x * tile_size;
  const std::size_t end = std::min(begin + tile_size, n);
  // Lanes 0..15 of warp 0 carry digit d's next output index through the tile's chunks.
  std::uint32_t next_out = 0;
  if (warp == 0 && lane < kDigits) next_out = tile_offsets[lane * gridDim.x + blockIdx.x];
  if (begin < end)
    stage_chunk_async<kPairs>(s, 0, keys_in + begin, kPairs ? values_in + begin : nullptr,
                              static_cast<int>(std::min<std::size_t>(kChunk, end - begin)));

  int slot = 0;
  for (std::size_t chunk = begin; chunk < end; chunk += kChunk, slot ^= 1) {
    const int valid = static_cast<int>(std::min<std::size_t>(kChunk, end - chunk));

    // 1. Wait for this chunk's copies; after the barrier every thread's copies are visible and every
    //    thread is done with the other half (the previous chunk): start copying the next chunk there.
    copy_async_wait_all();
    __syncthreads();
    if (chunk + kChunk < end)
      stage_chunk_async<kPairs>(s, slot ^ 1, keys_in + chunk + kChunk, kPairs ? values_in + chunk + kChunk : nullptr,
                                static_cast<int>(std::min<std::size_t>(kChunk, end - chunk - kChunk)));
    const std::uint32_t* keys = s.keys[slot];
    const std::uint32_t* values = kPairs ? s.values[slot] : nullptr;

    // 2. Thread t takes the chunk's keys t*16 .. t*16+15 (blocked: its items are consecutive in the
    //    input, so thread order + item order = input order) and counts their digits in registers.
    //    Keys past `valid` get digit 15: being last in the input, a stable rank puts them after every
    //    real key; they are never written.
    std::uint32_t key[kItems], value[kItems];
    std::uint32_t meta[kItems / 4];  // per item: digit | (earlier items of this thread with that digit) << 4
    unsigned long long lo = 0, hi = 0;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int pos = t * kItems + i;
      key[i] = keys[padded(pos)];
      if constexpr (kPairs) value[i] = values[padded(pos)];
      const int d = pos < valid ? static_cast<int>(digit_of(to_ordered(key[i], type), shift, bits)) : kDigits - 1;
      const std::uint32_t earlier = packed_count(lo, hi, d);
      if (d < 8) lo += 1ull << (8 * d);
      else hi += 1ull << (8 * (d - 8));
      const std::uint32_t m = static_cast<std::uint32_t>(d) | (earlier << 4);
      if (i % 4 == 0) meta[i / 4] = m;
      else meta[i / 4] |= m << (8 * (i % 4));
    }

    // 3. The warp's exclusive scan of the 16 counts over its lanes: two digits per 32-bit word
    //    (16-bit halves; a warp holds at most 512 keys of one digit), 8 shuffle scans.
    std::uint32_t lane_before[kDigits / 2];
#pragma unroll
    for (int p = 0; p < kDigits / 2; ++p) {
      const std::uint32_t mine = packed_count(lo, hi, 2 * p) | (packed_count(lo, hi, 2 * p + 1) << 16);
      const std::uint32_t inclusive = warp_inclusive_scan(mine);
      lane_before[p] = inclusive - mine;
      if (lane == 31) {
        s.warp_counts[warp * kDigits + 2 * p] = inclusive & 0xffffu;
        s.warp_counts[warp * kDigits + 2 * p + 1] = inclusive >> 16;
      }
    }
    __syncthreads();

    // 4. Lanes 0..15 of warp 0, one digit each: the warps' offsets within the digit, the digit's
    //    start in the chunk (a scan over the 16 digit totals) and where its keys go in the output.
    if (warp == 0) {
      std::uint32_t per_warp[kWarps], total = 0;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        per_warp[w] = lane < kDigits ? s.warp_counts[w * kDigits + lane] : 0u;
        total += per_warp[w];
      }
      const std::uint32_t start = warp_inclusive_scan(total) - total;  // lanes >= 16 hold 0
      if (lane < kDigits) {
        std::uint32_t offset = start;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
          s.warp_counts[w * kDigits + lane] = offset;
          offset += per_warp[w];
        }
        s.digit_base[lane] = next_out - start;
        next_out += total - (lane == kDigits - 1 ? static_cast<std::uint32_t>(kChunk - valid) : 0u);
      }
    }
    __syncthreads();

    // 5. Thread t's first rank for each digit, in its own column of the table (registers cannot be
    //    indexed by a digit known only at run time; column t is bank t mod 32 for every digit); each
    //    key's rank = that + the items of t before it with the same digit: its position in the chunk
    //    sorted by digit. The key goes to that position of the chunk's own half of the stage (every
    //    thread read its items out of it before the barriers of steps 3 and 4, and the next chunk
    //    arrives in the other half): Satish, Harris & Garland's local sort. These stores are the
    //    stage's only bank conflicts (a data-dependent address: ~2.4 excess wavefronts per request
    //    for uniform digits, none for equal ones); they buy step 6's runs.
    std::uint32_t* sorted_keys = s.keys[slot];
    std::uint32_t* sorted_values = kPairs ? s.values[slot] : nullptr;
#pragma unroll
    for (int d = 0; d < kDigits; ++d)
      s.counters[d * kThreads + t] = s.warp_counts[warp * kDigits + d] + ((lane_before[d / 2] >> (16 * (d % 2))) & 0xffffu);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (t * kItems + i >= valid) continue;  // keys past n: they would rank at [valid, kChunk), never read
      const std::uint32_t m = (meta[i / 4] >> (8 * (i % 4))) & 0xffu;
      const std::uint32_t rank = s.counters[(m & 15u) * kThreads + t] + (m >> 4);
      sorted_keys[padded(static_cast<int>(rank))] = key[i];
      if constexpr (kPairs) sorted_values[padded(static_cast<int>(rank))] = value[i];
    }
    __syncthreads();

    // 6. Write out: thread t takes sorted positions t, t + 256, ...: a warp's 32 consecutive positions
    //    hold one or two digits (runs of ~256 keys in a chunk of uniform digits), so each digit's keys
    //    leave as a run of consecutive output words instead of ~16 scattered pieces. The digit is
    //    read again from the key (cheaper than keeping it in shared memory); positions < valid are
    //    exactly the chunk's real keys, since the keys past n rank last. The next chunk's first
    //    barrier orders these reads before this half of the stage, warp_counts and digit_base are
    //    written again. The key order without to_ordered's switch (onesweep's KeyOrder): with the
    //    switch the compiler copied this loop once per key type.
    const std::uint32_t sign_flip = type == KeyType::u32 ? 0u : 0x80000000u;
    const std::uint32_t negative_flip = type == KeyType::f32 ? ~0u : 0u;
    auto ordered_key = [&](std::uint32_t x) {
      return x ^ (sign_flip | (negative_flip & static_cast<std::uint32_t>(static_cast<std::int32_t>(x) >> 31)));
    };
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int pos = j * kThreads + t;
      if (pos >= valid) continue;
      const std::uint32_t k = sorted_keys[padded(pos)];
      const std::uint32_t d = digit_of(ordered_key(k), shift, bits);
      const std::size_t dest = s.digit_base[d] + static_cast<std::uint32_t>(pos);  // uint32: the base is mod 2^32
      keys_out[dest] = k;
      if constexpr (kPairs) values_out[dest] = sorted_values[padded(pos)];
    }
  }
}

// ---- host -------------------------------------------------------------------------------------------

template <class Kernel>
void allow_shared(Kernel kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    GPULAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

// Opt in to more than 48 KB of dynamic shared memory, once per process.
void allow_downsweep_shared() {
  static std::once_flag once;
  std::call_once(once, [] {
    allow_shared(digit4_downsweep<false>, sizeof(DownsweepShared<false>));
    allow_shared(digit4_downsweep<true>, sizeof(DownsweepShared<true>));
  });
}

}  // namespace

void digit4_count(const std::uint32_t* d_keys, std::size_t n, std::size_t tile_size, std::size_t tiles, int shift,
                  int bits, std::uint32_t* d_tile_counts, const SortConfig& config) {
  if (n == 0 || tiles == 0) return;
  const auto upsweep = config.counters == CounterLayout::per_thread ? digit4_upsweep<CounterLayout::per_thread>
                                                                    : digit4_upsweep<CounterLayout::per_lane>;
  upsweep<<<static_cast<unsigned>(tiles), kThreads>>>(d_keys, n, tile_size, config.key, shift, bits, d_tile_counts);
  GPULAB_CHECK_LAUNCH();
}

void sort_digit4(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                 std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  if (n > kMaxKeys) throw std::length_error("digit4: n = " + std::to_string(n) + " is above kMaxKeys");
  if (n == 0) return;
  const int end_bit = ws.config.end_bit;
  const int passes = pass_count(end_bit, kDigit4RadixBits);
  if (passes == 0) {  // nothing to sort, but the poisoned output must still be written
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(d_keys_out, d_keys, n * 4, cudaMemcpyDeviceToDevice));
    if (d_values) GPULAB_CUDA_CHECK(cudaMemcpyAsync(d_values_out, d_values, n * 4, cudaMemcpyDeviceToDevice));
    return;
  }
  const bool pairs = d_values != nullptr;
  const KeyType type = ws.config.key;
  allow_downsweep_shared();
  // G tiles of whole chunks, one per resident downsweep block (seed 000: p processors).
  const std::size_t chunks = gpulab::ceil_div(n, kChunk);
  const std::size_t processors = static_cast<std::size_t>(ws.multiprocessors) * kDigit4BlocksPerSm;
  const std::size_t tile_size = gpulab::ceil_div(chunks, std::min(processors, chunks)) * kChunk;
  const std::size_t tiles = gpulab::ceil_div(n, tile_size);
  std::uint32_t* keys_tmp = ws.take<std::uint32_t>(n);
  std::uint32_t* values_tmp = pairs ? ws.take<std::uint32_t>(n) : nullptr;
  std::uint32_t* counts = ws.take<std::uint32_t>(kDigits * tiles);
  const auto downsweep = pairs ? digit4_downsweep<true> : digit4_downsweep<false>;
  const std::size_t shared = pairs ? sizeof(DownsweepShared<true>) : sizeof(DownsweepShared<false>);
  const unsigned grid = static_cast<unsigned>(tiles);

  for (int p = 0; p < passes; ++p) {
    // Ping-pong: pass p writes the output when P - 1 - p is even, so the last pass always does,
    // whatever the parity of P (no final copy); pass 0 reads the input, which is never written.
    const bool to_out = (passes - 1 - p) % 2 == 0;
    std::uint32_t* keys_dst = to_out ? d_keys_out : keys_tmp;
    std::uint32_t* values_dst = pairs ? (to_out ? d_values_out : values_tmp) : nullptr;
    const std::uint32_t* keys_src = p == 0 ? d_keys : (to_out ? keys_tmp : d_keys_out);
    const std::uint32_t* values_src = pairs ? (p == 0 ? d_values : (to_out ? values_tmp : d_values_out)) : nullptr;
    const int shift = p * kDigit4RadixBits, bits = pass_bits(end_bit, kDigit4RadixBits, p);

    digit4_count(keys_src, n, tile_size, tiles, shift, bits, counts, ws.config);  // round 1: the upsweep
    digit4_spine<<<1, 1024>>>(counts, kDigits * tiles);
    GPULAB_CHECK_LAUNCH();
    downsweep<<<grid, kThreads, shared>>>(keys_src, values_src, keys_dst, values_dst, n, tile_size, type, shift, bits,
                                          counts);
    GPULAB_CHECK_LAUNCH();
  }
}

}  // namespace radix_sort
