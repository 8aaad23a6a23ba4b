// The bitonic sort lab's interface: the knobs, the scratch memory, the launch contract the model
// counts, and the functions your files (labs/bitonic/bitonic_global.cu, bitonic_shared.cu,
// bitonic_warp.cu, bitonic_fused.cu, with helpers of your own in bitonic_device.cuh) implement and
// lab.cu calls. Do not edit.
//
//   Problem: sort n int32 keys ascending (signed compare: -5 < 3), any n >= 0.
//
// Words used here and in the task sheet. Seed 002 numbers its *implementations* "phase 0..4": the
// stage ids phase0..phase4 follow it. Seed 004 §7.1.1 calls the network's *levels* "phases": here
// they are "merge levels" s = 1..L (merge size k = 2^s, n = 2^L after padding), and the steps of a
// level are its "strides" j = k/2, ..., 1 (exponent e = s-1, ..., 0). Key i meets key i ^ j.
//
// GPU functions receive device pointers, enqueue their kernels on the default stream and return:
// the harness synchronises, times and checks. They must not allocate, copy between host and
// device, or synchronise; scratch memory comes from the SortWorkspace. d_in is read-only, d_out is
// poisoned before every run, and neither is read or written at an index >= n.
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>

#include "gpulab/math.hpp"
#include "gpulab/scratch.hpp"

namespace bitonic {

// ---- names: what this header takes in namespace bitonic ---------------------------------------------------
//
// The lab's own names only: kWarp, kSentinel, Pad, SortConfig, SortWorkspace, scratch_bytes, the
// kFused* constants, the stage functions and the baselines. Generic helpers stay in gpulab/math.hpp
// (gpulab::ceil_div, ceil_log2, round_up, is_pow2): a helper of your own by such a name, in
// namespace bitonic or anywhere, does not clash with this header.

inline constexpr int kWarp = 32;                  // lanes of a warp = banks of shared memory
inline constexpr std::int32_t kSentinel = INT_MAX;  // the largest key: what a padded position holds

// ---- the knobs (--param key=value; validated before a stage sees them) -------------------------------------

// How an n that is not a power of two becomes the network's 2^L = 2^ceil(log2 n) inputs.
enum class Pad {
  sentinel,     // --param pad=sentinel: a padded copy of 2^L keys (from the workspace), the
                // positions >= n holding kSentinel. Seed 002 sorts 10^7 keys and counts the
                // launches of 2^24: it pads.
  virtual_inf,  // --param pad=virtual: no copy. A position >= n is +infinity that is never stored:
                // a comparator whose partner is >= n is skipped. Which orientation of the merges
                // makes that exact? (README.md, "Stages, in order": stage 2)
};

struct SortConfig {
  int block = 512;          // --param block: threads per block of phase0 .. phase4-conflict-free, a
                            // power of two in [64, 1024]; a tile is T = 2 x block keys (t = log2 T)
  Pad pad = Pad::sentinel;  // --param pad
};

// Device scratch memory, allocated by the harness outside the timed region: scratch_bytes(n)
// bytes (gpulab/scratch.hpp). Take pieces with ws.take<T>(count); the harness calls reset() before
// every run, so a run may take the same pieces again. Each take is its own region: a write past
// one is caught (compute-sanitizer names the region; the check fails on the guard bytes the
// harness leaves after it).
struct SortWorkspace : gpulab::Scratch {
  SortConfig config;
  int multiprocessors = 1;  // SMs of the device
};

// The padded copy of pad = sentinel (2^ceil(log2 n) keys) and 256 bytes of alignment slack.
constexpr std::size_t scratch_bytes(std::size_t n) {
  return (n > 1 ? (std::size_t{1} << gpulab::ceil_log2(n)) : 0) * sizeof(std::int32_t) + 256;
}

// ---- phase5-fused: the design the model counts (the reference's) -------------------------------------------
//
// Tiles of 2^kFusedTileLog2 keys (kFusedKeys keys in registers x kFusedThreads threads), and up to
// kFusedStrides global strides of one merge level per launch (a block then holds
// 2^(kFusedTileLog2 - kFusedStrides) = 32 consecutive keys at each of the 2^kFusedStrides places).
// Your design may differ: the runner's model column then differs from CUPTI's count, and only the
// time is graded.
inline constexpr int kFusedKeys = 32;
inline constexpr int kFusedThreads = 512;
inline constexpr int kFusedTileLog2 = 14;
inline constexpr int kFusedStrides = 9;

// ---- the launch contract the model (bitonic_model.hpp) counts -----------------------------------------------
//
// L = ceil(log2 n), t = log2(2 x block) (phase5-fused: kFusedTileLog2). n == 0: no launch; n == 1:
// one launch (the output must still be written). For n >= 2 the launches, in order:
//   phase0, phase1          every (level s = 1..L, stride e = s-1..0): one launch
//   phase2                  a tile sort (levels 1..t), then every (s > t, e = s-1..0): one launch
//   phase3                  phase2, but the last level's strides e < t are one tile-merge launch
//   phase4, -conflict-free  a tile sort, then per level s > t: (s, e) for e = s-1..t, one launch
//                           each, then one tile merge for e = t-1..0
//   phase5-fused            phase4 with t = kFusedTileLog2, the global strides of a level taken
//                           kFusedStrides at a time from the top (one launch per group)
// When L <= t the tile sort alone sorts everything: one launch.
// No extra launch pads, copies or clips: the first launch reads d_in (padding as it loads), the
// last one writes d_out (only the keys below n), the others work in place (in d_out, or in the
// padded copy). So the launches are exactly the network's, and the bytes 2 x 4 x 2^L x R.

// ---- the stages (README.md); d_* are device pointers ---------------------------------------------------------

// 1. cpu: std::sort (the oracle); cpu-network: seed 002 Algorithm 1 on the host, with the
//    orientation config.pad needs (host pointers). (bitonic_global.cu)
void sort_cpu(const std::int32_t* in, std::int32_t* out, std::size_t n);
void sort_cpu_network(const std::int32_t* in, std::int32_t* out, std::size_t n, const SortConfig& config);
// 2.-3. one launch per (merge level, stride) (bitonic_global.cu)
void sort_phase0(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws);
void sort_phase1(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws);
// 4.-6. tiles of T keys in shared memory (bitonic_shared.cu)
void sort_phase2(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws);
void sort_phase3(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws);
void sort_phase4(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws);
// 7. phase 4 with the strides below 64 in registers and warp shuffles (bitonic_warp.cu)
void sort_phase4_conflict_free(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws);
// 8. several strides per launch, several keys per thread (bitonic_fused.cu; the challenge)
void sort_phase5_fused(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws);

// Baselines (provided, bitonic_cub.cu): cub::DeviceMergeSort::SortKeysCopy with a comparator (a
// comparison sort, as bitonic sort is), cub::DeviceRadixSort::SortKeys and thrust::sort (the
// roof). CUB's temporary storage is sized by cub_sort_temp_bytes and allocated by the harness
// before timing; thrust::sort takes its own from the workspace (thrust_workspace_bytes).
enum class CubSort { merge, radix };
std::size_t cub_sort_temp_bytes(CubSort which, std::size_t n);
void sort_cub(CubSort which, const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, void* d_temp,
              std::size_t temp_bytes);
constexpr std::size_t thrust_workspace_bytes(std::size_t n) { return 8 * n + (std::size_t{1} << 24); }
void sort_thrust(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws);

}  // namespace bitonic
