// The radix-sort lab's CPU side: the problem -- inputs, the oracle every stage is checked against
// and its verdict (radix_sort_problem.cpp) -- and the model of each stage (radix_sort_model.cpp):
// launches R, host synchronisations, global bytes per key, scatter sectors, shared memory, the
// paths a problem reaches, with the bank model of digit4's counting, ranking and reorder. Part of the
// harness: do not edit. Host code only (C++20).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/bank_model.hpp"
#include "gpulab/check.hpp"
#include "radix_sort.cuh"

namespace radix_sort::model {

// ---- the stages -------------------------------------------------------------------------------------

// digit4_count: digit4's round 1 on its own (the stage digit4-count): counts, not a sort.
enum class Stage { cpu, cpu_lsd, find_max, split_global, split_scan_fused, split_onepass, digit4, digit4_count, onesweep };
std::vector<Stage> all_stages();
std::string_view to_string(Stage s);  // the stage id: "split-scan-fused"
std::optional<Stage> parse_stage(std::string_view id);
bool on_gpu(Stage s);  // not cpu, cpu-lsd
bool sorts(Stage s);   // every stage but find-max and digit4-count

// ---- inputs -----------------------------------------------------------------------------------------

enum class KeyDistribution {
  uniform,          // every 32-bit pattern equally likely (f32: NaNs and infinities included)
  small_range,      // seed 003's data: values 0..49 of the key type
  all_equal,        // one random pattern everywhere
  sorted,           // uniform, ascending in the key order
  reverse,          // uniform, descending in the key order
  few_unique,       // 4 random patterns
  entropy_reduced,  // AND of 3 uniform words: skewed digits (mostly 0 bits)
  pow2_max,         // values 0..64 of the key type with 64 = 2^6 present: seed 003's ceil(log2 max) misses bit 6
  all_zero,         // the type's zero
  all_one,          // the type's one (seed 003: log2(1) = 0 bits)
  high_bits,        // (0..255) << 24: keys differ only in the top byte
  low_bits,         // 0..255: keys differ only in the low byte
  mixed_sign,       // values -1000..1000 of the key type (u32: their two's-complement patterns)
  int_extremes,     // INT_MIN, INT_MAX, -1, 0, 1 and random patterns, as patterns
  float_specials,   // +-0, +-inf, NaNs of both signs and payloads, denormals, +-FLT_MAX/MIN, random floats
};
std::vector<KeyDistribution> all_key_distributions();
std::string_view to_string(KeyDistribution d);
std::optional<KeyDistribution> parse_key_distribution(std::string_view name);
std::string_view to_string(KeyType t);
std::optional<KeyType> parse_key_type(std::string_view name);

// n keys as 32-bit patterns of `type` (deterministic in (d, n, seed, type)).
std::vector<std::uint32_t> make_keys(KeyDistribution d, std::size_t n, std::uint64_t seed, KeyType type);
// 0, 1, ..., n-1: the values of a pairs run (original indices).
std::vector<std::uint32_t> index_values(std::size_t n);
// The bits [0, end_bit) of a key; the keys as to_ordered patterns (their order is unsigned order).
std::uint32_t key_mask(int end_bit);
std::vector<std::uint32_t> ordered_keys(std::span<const std::uint32_t> keys, KeyType type);

// ---- the oracle -------------------------------------------------------------------------------------

// The stable sort on the ordered key's bits [0, end_bit): a CPU LSD radix sort of the indices
// (8-bit digits), the same order as std::stable_sort on the masked ordered key (tested), in a
// fraction of its time at 2^28; never a float comparison (operator< on NaN is not a strict weak
// order). values may be empty (keys only).
void reference_sort(std::span<const std::uint32_t> keys, std::span<const std::uint32_t> values, KeyType type,
                    int end_bit, std::vector<std::uint32_t>& keys_out, std::vector<std::uint32_t>& values_out);
// find-max's result on the CPU.
BitSpan reference_span(std::span<const std::uint32_t> keys, KeyType type);
// The bits K that need sorting: 32 - clz(OR ^ AND) of the ordered keys (0 for n <= 1 or equal keys).
int key_bits(std::span<const std::uint32_t> keys, KeyType type);
// Seed 003's bit count, ceil(log2(max)) of the signed max, as its code computes it: the defect
// (max = 64 -> 6, max = 1 -> 0, max = 0 -> log2(0) = -inf -> 0 here; negatives ignored).
int seed003_bits(std::int32_t max);
// Stable-sort check without an oracle (for sizes the CPU sort is too slow for): keys ascending in
// the ordered bits [0, end_bit) and, with values = original indices, equal keys in index order.
// Returns the first bad position or nullopt.
std::optional<std::size_t> first_unsorted(std::span<const std::uint32_t> keys, std::span<const std::uint32_t> values,
                                          KeyType type, int end_bit);

// ---- a stage's output and its verdict ---------------------------------------------------------------
//
// A sort's output is one array of 32-bit words: the n sorted keys, and with pairs the sorted values
// at values_offset(n) (256-byte aligned, as the interface promises every pointer; the words in
// between are never written and must keep the harness's poison, so a write past the n keys shows).

// Where the values start in the output: the keys rounded up to 64 words, plus a gap of 64 words.
std::size_t values_offset(std::size_t n);
// Words of a sort's output: n (keys only), values_offset(n) + n (pairs).
std::size_t output_words(std::size_t n, bool pairs);
// The expected output: the oracle's keys (and values) in that layout, the gap filled with `gap`.
std::vector<std::uint32_t> expected_output(std::span<const std::uint32_t> keys, std::span<const std::uint32_t> values,
                                           KeyType type, int end_bit, std::uint32_t gap);

// The verdict on a sort's output (`values` empty: keys only): pass when it equals `expected`, else
// the first thing wrong, in the lab's words:
//   "not sorted at i: ..."                             key i comes after key i + 1 in the key order
//   "unstable: equal keys out of input order at i: ..."  keys equal in bits [0, end_bit) that
//                                                      swapped their input order (a different key
//                                                      pattern, or with pairs a value = original index)
//   "keys lost or duplicated at i: ..."                sorted, but not the input's keys
//   "values do not travel with their keys at i: ..."   value i is not the index of a key equal to key i
//   "wrote past the n keys, at word i: ..."            a word of the gap changed
gpulab::CheckResult judge_sort(std::span<const std::uint32_t> keys, std::span<const std::uint32_t> values, KeyType type,
                               int end_bit, std::span<const std::uint32_t> expected, std::span<const std::uint32_t> got);
// find-max's verdict: the four words of BitSpan, with the bit count named.
gpulab::CheckResult judge_span(const BitSpan& expected, std::span<const std::uint32_t> got);

// ---- the model of a run -----------------------------------------------------------------------------

struct Problem {
  std::size_t n = 0;
  KeyType key = KeyType::u32;
  int end_bit = 32;        // SortConfig::end_bit
  int data_bits = 32;      // key_bits(data): split-global sorts min(data_bits, end_bit) bits
  bool pairs = false;
  int radix_bits = 8;      // onesweep's r
  int block = 128;         // find-max's and split-global's threads per block
  CounterLayout counters = CounterLayout::per_lane;
  int multiprocessors = 132;
  int digit4_blocks_per_sm = kDigit4BlocksPerSm;  // digit4's P = SMs x this resident blocks
};

// Passes P of a sort: split-global min(data_bits, end_bit); split-* end_bit; digit4 and digit4-count
// ceil(end_bit / 4);
// onesweep ceil(end_bit / r); cpu-lsd ceil(end_bit / 8).
int passes(Stage s, const Problem& p);
// digit4's tiles G (the spine's 16 x G matrix): tiles of ceil(C / min(P, C)) whole chunks (C chunks,
// P = SMs x resident blocks), G = ceil(n / tile size).
std::size_t digit4_tiles(const Problem& p);
std::size_t digit4_tile_size(const Problem& p);
// digit4-count's oracle: for each pass q < pass_count(end_bit, 4), the 16 x tiles counts of
// digit4_count on `keys` at shift 4 q, bits pass_bits(end_bit, 4, q): word (q * 16 + d) * tiles + g =
// the keys of tile g (tile_size keys each, the last one partial) whose digit is d.
std::vector<std::uint32_t> digit4_tile_counts(std::span<const std::uint32_t> keys, KeyType type, int end_bit,
                                              std::size_t tile_size, std::size_t tiles);
// Its verdict: pass when got == expected, else "tile g, digit d, pass q: got x, want y" (the first
// word wrong), or the sizes.
gpulab::CheckResult judge_tile_counts(std::span<const std::uint32_t> expected, std::span<const std::uint32_t> got,
                                      std::size_t tiles);

// Kernel launches R (a memset or a device-to-device copy is not one; n == 0: 0, find-max 1):
//   find-max          max(1, ceil(log2 n))
//   split-global      find-max + P (2 ceil(log2 n) + 3)       003's case n = 2^15, K = 6: 15 + 6 x 33 = 213
//   split-scan-fused  2 P
//   split-onepass     1 + P
//   digit4            3 P
//   digit4-count      P                                        (one digit4_count per pass)
//   onesweep          1 + P                                    (CUB: 2 + P, a separate scan of the bins)
// P == 0: 0 (the copy), except split-global's find-max launches.
long launches(Stage s, const Problem& p);
// Host synchronisations inside the stage: split-global 1 + 2 P (K, then per bit f[n-1] before and
// after the scan); every other stage 0. Bytes copied to the host: 16 + 8 P (CUPTI's host copies).
long host_syncs(Stage s, const Problem& p);
long host_copy_bytes(Stage s, const Problem& p);
// Work-efficient scan launches of split-global per bit: 2 ceil(log2 n).
long work_efficient_scan_launches(std::size_t n);

// The kernels and branches a problem reaches (Stage::reaches; the grader holds the visible cases and
// the sanitizer shapes to them, autograder/gpulab/case_paths.py). Every GPU sort: the key type
// ("u32 keys"), "keys only" / "pairs", then "n = 0: nothing to do", or "zero passes: a copy", or
// "an odd pass count" / "an even pass count" (the ping-pong's parity), "a short last pass"
// (end_bit not a multiple of the digit width), and per stage:
//   find-max          "one launch" / "a launch per level", "a level with an odd node", "several blocks
//                     per launch"; n = 0: "n = 0: the identities written"
//   split-global      find-max's, "the scan's padding past n", "several blocks per launch"
//   split-*           "one tile" / "several tiles: the look-back", "a partial tile";
//                     split-scan-fused also "a partial vector in the scatter"
//   digit4            "one tile" / "several tiles", "several chunks per tile", "a partial chunk",
//                     "the spine loops over the count matrix", "per-thread counters"
//   digit4-count      the key type, then "n = 0: nothing to do" or "zero passes: nothing to count", or
//                     "a short last pass", "one tile" / "several tiles", "several chunks per tile",
//                     "a partial chunk", "per-thread counters" (no values, no ping-pong, no spine)
//   onesweep          "r = 8", "one tile" / "several tiles: the look-back", "full tiles", "a partial tile"
std::vector<std::string> paths(Stage s, const Problem& p);

struct Traffic {
  double key_bytes = 0;    // keys read and written by the passes (and the counting reads)
  double value_bytes = 0;  // values read and written (pairs)
  double state_bytes = 0;  // everything else: flags, scans, counts, look-back words, memsets (sector-granular)
  double total() const { return key_bytes + value_bytes + state_bytes; }
};
// Global-memory bytes, 32-byte-sector granular where accesses are scattered (the trees, the scans).
Traffic traffic(Stage s, const Problem& p);
// total() / n.
double bytes_per_key(Stage s, const Problem& p);
// R sigma + syncs x sync_us + bytes / bandwidth, in ms (sigma, sync_us in microseconds, gbps in GB/s).
double predicted_ms(Stage s, const Problem& p, double sigma_us, double gbps, double sync_us);
// The n above which bytes / bandwidth outweighs R sigma (the "launch-bound crossover"); for stages
// whose R grows with n (split-global) it solves R(n) sigma = bytes(n) / bandwidth numerically.
double launch_bound_crossover(Stage s, Problem p, double sigma_us, double gbps);

// ---- scatter and shared memory ---------------------------------------------------------------------

// Expected 32-byte sectors per written 4-byte key when a block writes a tile of `tile_keys` keys,
// reordered by digit first (onesweep), with uniform random digits of `radix_bits` bits: each
// digit's keys are one run of L ~ Binomial(tile_keys, 2^-r) keys at a random 4-byte offset in its
// first sector. Ideal: 1/8.
double expected_sectors_per_written_key(int radix_bits, int tile_keys);
// The same for digit4's downsweep, per warp store instruction, simulated over `chunks` chunks of
// uniform random digits (seeded); each digit's run of a chunk starts at a random word of a sector.
//   scatter: each key written straight from its register (the design without a reorder): a store
//            instruction holds item i of each lane (lane l: chunk position 16 l + i), so its 32 keys
//            fall into ~16 runs (~0.84);
//   sorted:  the reference's: the chunk reordered by digit in shared memory first, a store
//            instruction writes 32 consecutive positions of the sorted chunk: one or two runs (~0.155).
// Per instruction, not per run as expected_sectors_per_written_key: a run split over instructions
// pays its partial sectors in each (L1 -> L2 store sectors; L2 may merge them before DRAM).
double digit4_scatter_sectors_per_key(int chunks = 8, std::uint64_t seed = 1);
double digit4_sorted_sectors_per_key(int chunks = 8, std::uint64_t seed = 1);
// Per-lane digit counters for a warp: 2^r x 32 x 4 bytes (r = 4: 2 KB; r = 8: 32 KB, too many).
int counter_bytes_per_warp(int radix_bits);
// Dynamic shared bytes per block of the reference kernels.
int digit4_downsweep_shared_bytes(bool pairs);
int onesweep_pass_shared_bytes(int radix_bits, bool pairs);

// ---- bank conflicts -----------------------------------------------------------------------------------

using Request = gpulab::NamedRequest;
using gpulab::RequestSummary;
using gpulab::summarize;

// Where a warp keeps lane l's counter of digit d: per_lane counts[d * 32 + l] (bank l: conflict-free
// for any digits); per_thread counts[l * 2^r + d] (a thread's counters side by side: bank
// (2^r l + d) mod 32 -- 16-way for r = 4 when all lanes hold one digit).
int counter_word(CounterLayout layout, int radix_bits, int lane, int digit);
// One counting step: each lane adds 1 to its counter of lane_digits[lane] (a load and a store;
// lane_digits[l] < 0: lane l inactive).
std::vector<Request> digit_count_requests(int radix_bits, CounterLayout layout, std::span<const int> lane_digits);

// digit4's upsweep (digit4_count) over the whole input for one pass of digit4: every shared request
// of every warp (counter clears, counting steps, the warps' reads of their counters, the warp
// totals, the block sum), with the access widths of the reference's SASS. Its excess is what ncu's
// memory_l1_wavefronts_shared_excessive should count for that launch. The stage digit4-count counts
// the unsorted input at every shift instead (CountedKeys::unsorted): the same 0 with per-lane
// counters, other counts with per-thread ones.
enum class CountedKeys { pass_input, unsorted };
RequestSummary digit4_upsweep_summary(std::span<const std::uint32_t> keys, KeyType type, int end_bit, int pass,
                                      const Problem& p, CounterLayout layout,
                                      CountedKeys counted = CountedKeys::pass_input);
// digit4's downsweep for one pass: every shared request of the reference, steps 1-6 of
// digit4_downsweep (the striped staging of each chunk, the blocked reads, the warp totals, warp 0's
// offsets and digit bases, the per-thread table's stores and its data-dependent reads, the reorder
// stores of keys and values, the write-out's reads of the sorted chunk and of the digit bases),
// `keys` being the original keys (the pass's input, sorted stably by the lower passes' bits, is
// computed here). All of it is conflict-free for any keys but the reorder stores: its excess is
// digit4_reorder_summary's, twice that with pairs (the values' stores hit the same banks).
RequestSummary digit4_downsweep_summary(std::span<const std::uint32_t> keys, KeyType type, int end_bit, int pass,
                                        const Problem& p);
// The downsweep's reorder stores of the keys alone (step 5: key i stored at its padded rank in the
// chunk sorted by digit, one pad word per 32; keys past n are not stored), summed over the pass:
// Satish et al.'s local sort, the kind onesweep's reorder has too. ~2.4 excess per request for
// uniform keys, 0 for equal keys (the padding: unpadded, equal keys would go 16-way).
RequestSummary digit4_reorder_summary(std::span<const std::uint32_t> keys, KeyType type, int end_bit, int pass,
                                      const Problem& p);

}  // namespace radix_sort::model
