// Reference: stage 8 of the scan lab, colored prefix sums (seed 000 §4, Fig. 2).
//
// Three rounds, like three-round: each warp reduces its tile per color, one block per color scans
// the d x p matrix of tile sums, and each warp scans its tile again page by page. The two
// versions differ only in the "offset step" of round 3, which turns the per-thread color sums of a
// page into per-thread offsets:
//   direct         thread c (< d) walks row c of counts[c * 32 + t]: all d threads hit one bank,
//                  a d-way conflict on every one of the 32 steps;
//   conflict-free  the 32 x d matrix is transposed (stride 17, odd) so that thread c walks a column
//                  that lies in bank c, then transposed back.
// Everything else is identical, including the shared memory per warp, so the time difference is
// the conflicts' (seed 000's Fig. 2).
#include <cuda_runtime.h>

#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "scan.cuh"

namespace scan {

// The kit's integer helpers by their short names, in this file only: the interface leaves them in
// gpulab:: (gpulab/math.hpp) so that a submission may define helpers of its own by these names.
using gpulab::ceil_div;

namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpsPerBlock = 4;
constexpr int kPage = kColoredPage;                        // w^2 = 1024 elements
constexpr int kPaddedPage = kPage + kPage / 32;            // one pad word per 32
constexpr int kColorWords = kPage / 4;                     // four 8-bit colors per word
constexpr int kPaddedColorWords = kColorWords + kColorWords / 32;
constexpr int kTransposeStride = kColoredTransposeStride;  // 17

// The page lives in shared memory with one pad word after every 32: thread t's 32 consecutive
// elements (slots 33 t .. 33 t + 31) then start in bank t, and the staging stores of whole
// warps stay conflict-free too (bank model: colored_page_requests).
__device__ __forceinline__ int padded(int k) { return k + (k >> 5); }

struct WarpShared {
  int values[kPaddedPage];
  unsigned colors[kPaddedColorWords];
  int counts[kMaxColors * 32];  // counts[c * 32 + t]: thread t owns bank t
  int trans[32 * kTransposeStride];
};

__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
__device__ __forceinline__ int warp_id() { return threadIdx.x >> 5; }

__device__ __forceinline__ int warp_sum(int x) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(kFullMask, x, d);
  return x;
}

__device__ __forceinline__ int warp_inclusive_scan(int x) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int y = __shfl_up_sync(kFullMask, x, d);
    if (lane_id() >= d) x += y;
  }
  return x;
}

__device__ __forceinline__ int4 load_values(const int* __restrict__ values, std::size_t i, std::size_t end) {
  if (i + 3 < end) return *reinterpret_cast<const int4*>(values + i);
  int4 v{0, 0, 0, 0};
  if (i < end) v.x = values[i];
  if (i + 1 < end) v.y = values[i + 1];
  if (i + 2 < end) v.z = values[i + 2];
  return v;
}

// Four 8-bit colors in one word, color 0 past `end` (harmless: its value is 0 and it is not stored).
__device__ __forceinline__ unsigned load_colors(const std::uint8_t* __restrict__ colors, std::size_t i, std::size_t end) {
  if (i + 3 < end) return *reinterpret_cast<const unsigned*>(colors + i);
  unsigned c = 0;
  for (int k = 0; k < 3; ++k)
    if (i + k < end) c |= static_cast<unsigned>(colors[i + k]) << (8 * k);
  return c;
}

__device__ __forceinline__ int color_of(const unsigned (&words)[8], int j) { return (words[j >> 2] >> (8 * (j & 3))) & 0xff; }

struct Tiles {
  std::size_t count = 0, size = 0;
  __device__ std::size_t begin(std::size_t tile) const { return tile * size; }
};

// ---- round 1: per warp, the sums of its tile per color -> tile_sums[c * tiles + tile] -----------
// Sums are order-free, so each lane adds whatever elements it loads into its own column of
// counts (bank = lane); no staging needed.
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    colored_reduce(const int* __restrict__ values, const std::uint8_t* __restrict__ colors, std::size_t n, Tiles tiles,
                   int d, int* __restrict__ tile_sums) {
  __shared__ int counts[kWarpsPerBlock][kMaxColors * 32];
  const int lane = lane_id();
  int* my = counts[warp_id()];
  const std::size_t tile = static_cast<std::size_t>(blockIdx.x) * kWarpsPerBlock + warp_id();
  if (tile >= tiles.count) return;
  for (int c = 0; c < d; ++c) my[c * 32 + lane] = 0;
  const std::size_t begin = tiles.begin(tile);
  const std::size_t end = begin + tiles.size < n ? begin + tiles.size : n;
#pragma unroll 4
  for (std::size_t i = begin + 4 * lane; i < end; i += 128) {
    const int4 v = load_values(values, i, end);
    const unsigned c = load_colors(colors, i, end);
    my[(c & 0xff) * 32 + lane] += v.x;
    my[((c >> 8) & 0xff) * 32 + lane] += v.y;
    my[((c >> 16) & 0xff) * 32 + lane] += v.z;
    my[(c >> 24) * 32 + lane] += v.w;
  }
  __syncwarp();
  for (int c = 0; c < d; ++c) {
    const int s = warp_sum(my[c * 32 + lane]);
    if (lane == 0) tile_sums[c * tiles.count + tile] = s;
  }
}

// ---- round 2: block c scans row c of the d x p matrix in place ---------------------------------
// The chunked block scan of scan_tiled.cu's spine, one block per color row. It is repeated on
// purpose: each student file is graded on its own, so colored.cu must not lean on scan_tiled.cu.
__global__ void __launch_bounds__(1024) colored_spine(int* tile_sums, std::size_t count) {
  __shared__ int warp_sums[32];
  __shared__ int chunk_total;
  int* row = tile_sums + static_cast<std::size_t>(blockIdx.x) * count;
  int carry = 0;
  for (std::size_t base = 0; base < count; base += 1024) {
    const std::size_t i = base + threadIdx.x;
    const int x = i < count ? row[i] : 0;
    const int inclusive = warp_inclusive_scan(x);
    if (lane_id() == 31) warp_sums[warp_id()] = inclusive;
    __syncthreads();
    if (warp_id() == 0) {
      const int w = warp_sums[lane_id()];
      const int w_inclusive = warp_inclusive_scan(w);
      warp_sums[lane_id()] = w_inclusive - w;
      if (lane_id() == 31) chunk_total = w_inclusive;
    }
    __syncthreads();
    if (i < count) row[i] = carry + warp_sums[warp_id()] + inclusive - x;
    carry += chunk_total;
    __syncthreads();
  }
}

// ---- round 3: the offset step, two ways -----------------------------------------------------------
// In: counts[c * 32 + t] = thread t's sum of color c in this page; lane c < d holds `carry`, the
// sum of color c before this page. Out: counts[c * 32 + t] = carry + sum over threads < t.
// Both versions walk a row of 32 words the same way: 32 loads, a running sum in registers, 32
// stores, all independent, so that the loads of a lane can be in flight together and the time
// of the walk is the shared-memory pipe's: 64 requests of d wavefronts each (direct) or of one
// (conflict-free, plus 2 d requests for the transposes).
__device__ __forceinline__ int walk_row(int* row, int stride, int carry) {
  int x[32];
#pragma unroll
  for (int j = 0; j < 32; ++j) x[j] = row[j * stride];
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int v = x[j];
    x[j] = carry;
    carry += v;
  }
#pragma unroll
  for (int j = 0; j < 32; ++j) row[j * stride] = x[j];
  return carry;
}

__device__ __forceinline__ int offsets_direct(WarpShared& s, int d, int carry) {
  const int lane = lane_id();
  // Lane c walks counts[c * 32 + j]: at every j, lanes 0..d-1 are all in bank j (d-way conflict).
  if (lane < d) carry = walk_row(&s.counts[lane * 32], 1, carry);
  return carry;
}

__device__ __forceinline__ int offsets_conflict_free(WarpShared& s, int d, int carry) {
  const int lane = lane_id();
  // counts (d rows of 32) -> trans (32 rows of stride 17): row t holds thread t's d sums, and
  // column c lies in the banks (17 j + c) mod 32, distinct for the d lanes of one step.
#pragma unroll
  for (int c = 0; c < kMaxColors; ++c)
    if (c < d) s.trans[lane * kTransposeStride + c] = s.counts[c * 32 + lane];
  __syncwarp();
  if (lane < d) carry = walk_row(&s.trans[lane], kTransposeStride, carry);
  __syncwarp();
#pragma unroll
  for (int c = 0; c < kMaxColors; ++c)
    if (c < d) s.counts[c * 32 + lane] = s.trans[lane * kTransposeStride + c];
  return carry;
}

// At most 5 blocks of 38 KB fit in an SM's shared memory; the register cap lets both versions
// reach them (without it the conflict-free one needs more registers and runs fewer warps).
template <bool kConflictFree>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, 5)
    colored_scan(const int* __restrict__ values, const std::uint8_t* __restrict__ colors, int* __restrict__ out,
                 std::size_t n, Tiles tiles, int d, const int* __restrict__ tile_offsets) {
  __shared__ WarpShared shared[kWarpsPerBlock];
  WarpShared& s = shared[warp_id()];
  const int lane = lane_id();
  const std::size_t tile = static_cast<std::size_t>(blockIdx.x) * kWarpsPerBlock + warp_id();
  if (tile >= tiles.count) return;  // only __syncwarp below
  const std::size_t begin = tiles.begin(tile);
  const std::size_t end = begin + tiles.size < n ? begin + tiles.size : n;
  int carry = lane < d ? tile_offsets[lane * tiles.count + tile] : 0;

  for (std::size_t page = begin; page < end; page += kPage) {
    // 1. Stage the page: coalesced 128-bit value loads and 32-bit color loads.
#pragma unroll
    for (int q = 0; q < kPage / 128; ++q) {
      const int vec = q * 32 + lane;
      const int4 v = load_values(values, page + 4 * vec, end);
      s.values[padded(4 * vec)] = v.x;
      s.values[padded(4 * vec + 1)] = v.y;
      s.values[padded(4 * vec + 2)] = v.z;
      s.values[padded(4 * vec + 3)] = v.w;
      s.colors[padded(vec)] = load_colors(colors, page + 4 * vec, end);
    }
    for (int c = 0; c < d; ++c) s.counts[c * 32 + lane] = 0;
    __syncwarp();
    // 2. Thread t sums its 32 elements per color, in its own bank.
    unsigned my_colors[8];
#pragma unroll
    for (int q = 0; q < 8; ++q) my_colors[q] = s.colors[padded(8 * lane + q)];
#pragma unroll
    for (int j = 0; j < 32; ++j) s.counts[color_of(my_colors, j) * 32 + lane] += s.values[padded(32 * lane + j)];
    __syncwarp();
    // 3. The offset step.
    carry = kConflictFree ? offsets_conflict_free(s, d, carry) : offsets_direct(s, d, carry);
    __syncwarp();
    // 4. Thread t replaces its elements by the running offset of their color (the values are read
    //    again rather than kept in 32 registers: the offset step needs those registers).
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      int& slot = s.counts[color_of(my_colors, j) * 32 + lane];
      int& value = s.values[padded(32 * lane + j)];
      const int o = slot;
      slot = o + value;
      value = o;
    }
    __syncwarp();
    // 5. Write the page back, coalesced.
#pragma unroll
    for (int q = 0; q < kPage / 128; ++q) {
      const int vec = q * 32 + lane;
      const std::size_t g = page + 4 * vec;
      const int4 o{s.values[padded(4 * vec)], s.values[padded(4 * vec + 1)], s.values[padded(4 * vec + 2)],
                   s.values[padded(4 * vec + 3)]};
      if (g + 3 < end) {
        *reinterpret_cast<int4*>(out + g) = o;
      } else {
        if (g < end) out[g] = o.x;
        if (g + 1 < end) out[g + 1] = o.y;
        if (g + 2 < end) out[g + 2] = o.z;
      }
    }
    __syncwarp();  // the next page overwrites values and colors
  }
}

template <bool kConflictFree>
void colored_three_round(const int* d_values, const std::uint8_t* d_colors, int* d_out, std::size_t n, ScanWorkspace& ws) {
  if (n == 0) return;
  const int d = ws.config.colors;
  if (d < 1 || d > kMaxColors) throw std::invalid_argument("colored scan: colors must be 1..16");
  constexpr int kThreads = kWarpsPerBlock * 32;
  static const int blocks_per_sm = [] {
    int blocks = 0;
    GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, colored_scan<kConflictFree>, kThreads, 0));
    return blocks > 0 ? blocks : 1;
  }();
  // One tile of whole pages per resident warp (seed 000 §4: p processors, a tile each).
  const std::size_t processors = static_cast<std::size_t>(ws.multiprocessors) * blocks_per_sm * kWarpsPerBlock;
  const std::size_t pages = ceil_div(n, kPage);
  Tiles tiles;
  tiles.count = std::min(processors, pages);
  tiles.size = ceil_div(pages, tiles.count) * kPage;
  tiles.count = ceil_div(n, tiles.size);
  int* tile_sums = ws.take(static_cast<std::size_t>(d) * tiles.count);
  const unsigned grid = static_cast<unsigned>(ceil_div(tiles.count, kWarpsPerBlock));
  colored_reduce<<<grid, kThreads>>>(d_values, d_colors, n, tiles, d, tile_sums);
  GPULAB_CHECK_LAUNCH();
  colored_spine<<<d, 1024>>>(tile_sums, tiles.count);
  GPULAB_CHECK_LAUNCH();
  colored_scan<kConflictFree><<<grid, kThreads>>>(d_values, d_colors, d_out, n, tiles, d, tile_sums);
  GPULAB_CHECK_LAUNCH();
}

}  // namespace

void colored_exclusive_scan_direct(const int* d_values, const std::uint8_t* d_colors, int* d_out, std::size_t n,
                                   ScanWorkspace& ws) {
  colored_three_round<false>(d_values, d_colors, d_out, n, ws);
}

void colored_exclusive_scan_conflict_free(const int* d_values, const std::uint8_t* d_colors, int* d_out,
                                          std::size_t n, ScanWorkspace& ws) {
  colored_three_round<true>(d_values, d_colors, d_out, n, ws);
}

}  // namespace scan
