// The radix-sort lab's interface: the key order, the workspace, and the functions your files
// (labs/radix-sort/radix_split.cu, radix_digit4.cu, radix_onesweep.cu) implement.
// Do not edit.
//
// Sort n 32-bit keys ascending, LSD, *stable*. A key is handed over as its 32-bit pattern; the
// order is that of the key type's order-preserving transform (to_ordered below):
//   u32  the number itself
//   i32  two's complement with the sign bit flipped: INT_MIN first, INT_MAX last
//   f32  IEEE-754 with the sign bit flipped for + and every bit flipped for -: -NaN (by bit
//        pattern), -inf, ..., -0, +0, ..., +inf, +NaN (README.md, "The problem": -0 sorts before +0;
//        CUB treats -0 and +0 as equal, which is why the timings against CUB use integer keys).
// Only bits [0, end_bit) of the ordered key are sorted, as with CUB's begin_bit = 0, end_bit:
// keys equal in those bits keep their input order. end_bit = 32 sorts completely.
//
// Pairs: when d_values is not null, d_values[i] travels with key i (the harness fills it with i,
// the original index: that is how stability is checked). d_values == nullptr sorts keys only
// (d_values_out is then ignored).
//
// GPU functions receive device pointers (256-byte aligned), enqueue their kernels on the default
// stream and return: the harness synchronises, times and checks. They must not allocate, copy
// between host and device, or synchronise -- with one exception, split-global, which is seed 003
// as written: it reads the bit count and each bit's totalFalses back to the host (that
// synchronisation is the point of the stage). Scratch memory comes from the SortWorkspace;
// cudaMemsetAsync and device-to-device cudaMemcpyAsync are allowed. The output always lands in
// d_keys_out / d_values_out, whatever the parity of the pass count (also for zero passes), and
// d_keys / d_values are never written. The outputs are poisoned before every run. Every n >= 0
// works up to kMaxKeys.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gpulab/math.hpp"
#include "gpulab/scratch.hpp"

#if defined(__CUDACC__)
#define RADIX_SORT_HD __host__ __device__ __forceinline__
#else
#define RADIX_SORT_HD inline
#endif

namespace radix_sort {

// ---- names: what this header takes in namespace radix_sort ----------------------------------------
//
// The lab's own names only: KeyType, to_ordered, from_ordered, digit_of, pass_bits, pass_count,
// span_bits, BitSpan, CounterLayout, SortConfig, kOnesweepRadixBits, SortWorkspace, kMaxKeys,
// sort_workspace_bytes, the contract's k... constants, the stage functions and RADIX_SORT_HD.
// Generic helpers stay in gpulab/math.hpp (gpulab::ceil_div, round_up, ceil_log2, is_pow2), used
// here qualified: a helper of your own by such a name does not clash with this header.

// ---- the key order (host and device) ---------------------------------------------------------

enum class KeyType : int { u32 = 0, i32 = 1, f32 = 2 };  // --param key=u32|i32|f32

// The order-preserving transform: a < b in the key type's order  <=>  to_ordered(a) < to_ordered(b)
// as unsigned integers. Applied on every load; the keys are stored back unchanged.
RADIX_SORT_HD constexpr std::uint32_t to_ordered(std::uint32_t bits, KeyType type) {
  switch (type) {
    case KeyType::i32: return bits ^ 0x80000000u;
    case KeyType::f32: return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
    default: return bits;
  }
}
// Its inverse (the CPU model uses it to build keys with a given order).
RADIX_SORT_HD constexpr std::uint32_t from_ordered(std::uint32_t ordered, KeyType type) {
  switch (type) {
    case KeyType::i32: return ordered ^ 0x80000000u;
    case KeyType::f32: return (ordered & 0x80000000u) ? (ordered & 0x7fffffffu) : ~ordered;
    default: return ordered;
  }
}
// Digit of a pass: `bits` (1..8) bits of the ordered key from bit `shift`.
RADIX_SORT_HD constexpr std::uint32_t digit_of(std::uint32_t ordered, int shift, int bits) {
  return (ordered >> shift) & ((1u << bits) - 1u);
}
// Bits of pass `pass` when end_bit is not a multiple of the digit width: a pass never sorts a bit
// at or above end_bit (that would reorder keys the contract calls equal).
RADIX_SORT_HD constexpr int pass_bits(int end_bit, int radix_bits, int pass) {
  const int left = end_bit - pass * radix_bits;
  return left < radix_bits ? left : radix_bits;
}
RADIX_SORT_HD constexpr int pass_count(int end_bit, int radix_bits) { return (end_bit + radix_bits - 1) / radix_bits; }

// The bits that need sorting: bits above the highest bit in which two keys differ are the same in
// every key. K = 32 - clz(OR ^ AND) over the ordered keys (0 when all keys are equal or n <= 1).
// Seed 003 uses ceil(log2(max)) instead: wrong for max = 2^k, 0 and 1, and blind to negatives.
RADIX_SORT_HD constexpr int span_bits(std::uint32_t or_all, std::uint32_t and_all) {
  std::uint32_t diff = or_all ^ and_all;
  int bits = 0;
  while (diff != 0) {
    ++bits;
    diff >>= 1;
  }
  return bits;
}

// find-max's result (16 bytes): the OR and AND of all ordered keys and the bits K they need.
// n == 0 gives the identities {0, 0xffffffff} and K = 0.
struct alignas(16) BitSpan {
  std::uint32_t or_all;
  std::uint32_t and_all;
  std::uint32_t bits;
  std::uint32_t reserved;  // 0
};

// ---- the knobs the harness passes (from --param key=value; validated before you see them) ----

// digit4's upsweep ("counters" knob): where lane l of a warp keeps its count of digit d.
//   per_lane    counts[d * 32 + l]     graded conflict-free for any digits (why: question 4)
//   per_thread  counts[l * 16 + d]     a thread's 16 counters side by side: the contrast for the
//               experiment (its conflicts: question 4)
enum class CounterLayout : int { per_lane = 0, per_thread = 1 };

struct SortConfig {
  KeyType key = KeyType::u32;  // "key": u32 | i32 | f32
  int end_bit = 32;            // "end_bit": sort bits [0, end_bit) of the ordered key, 0..32
  int block = 128;             // "block": find-max's and split-global's threads per block (seed 003: 128)
  int radix_bits = 8;          // "bits": onesweep's digit width r, one of kOnesweepRadixBits
  CounterLayout counters = CounterLayout::per_lane;  // "counters": lane | thread (digit4's upsweep)
};

inline constexpr int kOnesweepRadixBits[] = {1, 2, 4, 6, 8};

// Device scratch memory for one stage, allocated by the harness outside the timed region:
// sort_workspace_bytes(n) bytes. take<T>() pieces of it; the harness calls reset() before every run.
struct SortWorkspace : gpulab::Scratch {
  SortConfig config;
  int multiprocessors = 1;  // SMs of the device (persistent grids)
};

// The largest n a GPU stage accepts: onesweep's look-back words keep a count in 31 bits.
inline constexpr std::size_t kMaxKeys = (std::size_t{1} << 31) - 2;

// Enough for every stage, pairs included: split-global's ping-pong keys and values, its padded
// scan array (< 2n words) and its b / t arrays (2n words, which find-max's tree borrows first)
// is 6n words; every other stage needs less. The constant covers the per-tile state of small n
// and the guard gap the harness leaves after each take.
constexpr std::size_t sort_workspace_bytes(std::size_t n) { return 24 * n + (std::size_t{1} << 22); }

// ---- contracts the model (radix_sort_model.hpp) relies on -------------------------------------
// The reference's shapes: the model's bytes and bank model use them. Yours may differ (the launch
// counts do not depend on them), but then the model's bytes are the reference's, not yours.

// split-scan-fused and split-onepass: a tile is kSplitThreads threads x kSplitItems keys.
inline constexpr int kSplitThreads = 256;
inline constexpr int kSplitItems = 16;
inline constexpr int kSplitTile = kSplitThreads * kSplitItems;  // 4096
// digit4: r = 4; a block of kDigit4Threads threads; the downsweep ranks chunks of
// kDigit4Threads x kDigit4Items keys; a tile is a whole number of chunks, one tile per resident
// downsweep block: a tile is ceil(C / min(P, C)) chunks (C chunks, P = SMs x kDigit4BlocksPerSm),
// G = ceil(n / tile size) tiles (the 16 x G count matrix of the spine).
inline constexpr int kDigit4RadixBits = 4;
inline constexpr int kDigit4Digits = 1 << kDigit4RadixBits;
inline constexpr int kDigit4Threads = 256;
inline constexpr int kDigit4Items = 16;
inline constexpr int kDigit4Chunk = kDigit4Threads * kDigit4Items;  // 4096
inline constexpr int kDigit4BlocksPerSm = 2;
// onesweep: a tile is kOnesweepThreads x kOnesweepItems keys, one tile per block; the look-back
// reads kOnesweepLookBackWindow predecessors' words per memory round trip.
inline constexpr int kOnesweepThreads = 384;
inline constexpr int kOnesweepItems = 20;
inline constexpr int kOnesweepTile = kOnesweepThreads * kOnesweepItems;  // 7680
inline constexpr int kOnesweepLookBackWindow = 4;

// ---- the stages (device pointers unless said otherwise) ----------------------------------------

// 1. cpu: std::stable_sort on the ordered key's bits [0, end_bit) (host pointers; values may be
//    null). cpu-lsd: LSD radix sort on the host, r = 8, stable (host pointers; values may be null).
void sort_cpu(const std::uint32_t* keys, std::uint32_t* keys_out, const std::uint32_t* values,
              std::uint32_t* values_out, std::size_t n, const SortConfig& config);
void sort_cpu_lsd(const std::uint32_t* keys, std::uint32_t* keys_out, const std::uint32_t* values,
                  std::uint32_t* values_out, std::size_t n, const SortConfig& config);

// 2. find-max: seed 003's global tree, one launch per level, on (OR, AND) of the ordered keys
//    -> *d_span. max(1, ceil(log2 n)) launches (n == 0: one launch writes the identities).
void find_key_bits(const std::uint32_t* d_keys, std::size_t n, BitSpan* d_span, SortWorkspace& ws);

// 3.-7. the sorts: d_keys[0, n) -> d_keys_out[0, n) (and the values with them).
void sort_split_global(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                       std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws);
void sort_split_scan_fused(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                           std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws);
void sort_split_onepass(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                        std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws);
void sort_digit4(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                 std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws);
// digit4's round 1 (stage digit4-count; sort_digit4 calls it for every pass): tile g is keys
// [g * tile_size, min((g + 1) * tile_size, n)), g < tiles = ceil(n / tile_size), tile_size a multiple of
// kDigit4Chunk; d_tile_counts[d * tiles + g] = the keys of tile g whose digit
// digit_of(to_ordered(key, config.key), shift, bits) is d, for d < kDigit4Digits (digits >= 2^bits: 0).
// Enqueue only (no allocation, no synchronisation); config.counters picks the counters' layout.
// Graded conflict-free: every kernel it launches, Nsight Compute, stage digit4-count.
void digit4_count(const std::uint32_t* d_keys, std::size_t n, std::size_t tile_size, std::size_t tiles, int shift,
                  int bits, std::uint32_t* d_tile_counts, const SortConfig& config);
void sort_onesweep(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                   std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws);

}  // namespace radix_sort
