// The bitonic lab's CPU side (bitonic_model.cpp): the inputs, the std::sort oracle and its verdict,
// the network run on the host launch by launch, and the model of every stage -- the launch
// sequence and its closed forms R0..R5 (README.md, "The model") beside seed 002's counts, the bytes each
// launch moves, the excess shared wavefronts of every shared-memory kernel instruction by
// instruction (common/'s bank model), shared memory and occupancy, and the paths (kernels and
// branches) a problem reaches. Part of the harness: do not edit. Host code only (C++20).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bitonic.cuh"
#include "gpulab/bank_model.hpp"
#include "gpulab/check.hpp"
#include "gpulab/data.hpp"

namespace bitonic::model {

// ---- the stages --------------------------------------------------------------------------------------------------

enum class Stage { cpu, cpu_network, phase0, phase1, phase2, phase3, phase4, phase4_conflict_free, phase5_fused };
std::vector<Stage> all_stages();
std::string_view to_string(Stage s);  // the stage id: "phase4-conflict-free"
std::optional<Stage> parse_stage(std::string_view id);
bool runs_on_gpu(Stage s);
bool has_tiles(Stage s);  // phase2 .. phase5-fused

std::string_view to_string(Pad p);  // "sentinel" | "virtual"

// The model's shape of a run beyond n: the knobs, and phase5-fused's design (bitonic.cuh's kFused*;
// the tests set smaller tiles so that every n with L >= t + 2 can be run on the host).
struct Shape {
  int block = 512;          // --param block (the model also takes 2 .. 32 for host tests)
  Pad pad = Pad::sentinel;  // --param pad
  int fused_tile_log2 = kFusedTileLog2;
  int fused_strides = kFusedStrides;
};

// t: log2 of the tile a stage's tile kernels sort (0 for cpu, cpu-network, phase0, phase1).
int tile_log2(Stage s, const Shape& shape);
// L = ceil(log2 n): the levels of the network on 2^L inputs.
int network_log2(std::size_t n);

// ---- inputs and the oracle ---------------------------------------------------------------------------------------

// The keys of a problem: --dist's distribution (uniform: every int32, negatives included), or one of
// the lab's own (--param input):
//   organ-pipe   ascending, then descending: a bitonic input (the network's own shape)
//   int-max      a third of the keys equal to the sentinel (INT_MAX), the rest uniform
//   negative     every key below 0: an unsigned compare puts them all last
enum class Input { uniform, small_range, all_equal, sorted, reverse, few_unique, organ_pipe, int_max, negative };
std::vector<Input> all_inputs();
std::string_view to_string(Input d);
std::optional<Input> parse_input(std::string_view name);
// --param input (lab.toml's names in this order: 0 = "dist", the --dist distribution; then
// organ-pipe, int-max, negative) with the problem's distribution.
inline constexpr int kInputChoices = 4;
Input input_for(gpulab::Distribution d, long long input_knob);

// Deterministic in (input, n, seed): the grader regenerates a case's keys from them.
std::vector<std::int32_t> make_keys(Input d, std::size_t n, std::uint64_t seed);
// std::sort: what every stage is checked against.
std::vector<std::int32_t> sorted_copy(std::span<const std::int32_t> in);
// The verdict on a stage's output: exact, or what is wrong -- never written (the poison), keys
// lost or doubled (with a hint when INT_MAX keys appear that the input lacks: padding written
// back), negatives after positives (an unsigned compare), or where the keys first descend.
gpulab::CheckResult check_sorted(std::span<const std::int32_t> keys, std::span<const std::int32_t> expected,
                                 std::span<const std::int32_t> got);

// ---- the launch sequence ------------------------------------------------------------------------------------------

enum class Kernel {
  copy,         // n == 1 in phases 0 and 1
  global_step,  // one stride in global memory (phase0; phases 2-4 and -conflict-free above the tile)
  staged_step,  // phase1: one stride through shared memory
  fused_steps,  // phase5-fused: strides stride_hi .. stride_lo of one level in one launch
  tile_sort,    // levels 1 .. level of every tile (level = min(L, t))
  tile_merge,   // strides t-1 .. 0 of merge level `level` in every tile
};
std::string_view to_string(Kernel k);

struct Launch {
  Kernel kernel;
  int level = 0;      // merge level s (tile_sort: the levels it sorts)
  int stride_hi = 0;  // exponents: strides 2^stride_hi .. 2^stride_lo
  int stride_lo = 0;
  bool operator==(const Launch&) const = default;
};

// Every launch of one run, in order (bitonic.cuh, "the launch contract"). cpu and cpu-network: none.
std::vector<Launch> launch_sequence(Stage s, std::size_t n, const Shape& shape);
long launches(Stage s, std::size_t n, const Shape& shape);

// The closed forms for n = 2^L (L >= 1): R0 = R1 = L(L+1)/2; for L <= t every tile stage is 1;
// otherwise R2 = 1 + L(L+1)/2 - t(t+1)/2, R3 = R2 - (t - 1), R4 = 1 + (L - t)(L - t + 3)/2 and
// R5 = 1 + sum over d = 1..L-t of (ceil(d / q) + 1). `t` is the tile log2, `q` phase 5's strides
// per launch.
long formula_launches(Stage s, int L, int t, int q = 1);
// Seed 002 §III's counts for n = 2^24: phase0 299, phase2 234, phase3 224 ("-10"), phase4 119.
std::optional<long> seed002_launches(Stage s);
// The tile logs t in [lo, hi] for which formula_launches(s, 24, t) == 002's count + `offset`.
std::vector<int> tiles_matching_seed002(Stage s, int offset, int lo = 1, int hi = 23);

// ---- bytes and I/O ---------------------------------------------------------------------------------------------------

// What the kernels move, reads + writes of 4-byte keys, launch by launch: pad = sentinel moves the
// padded 2^L keys (the first launch reads n from d_in, the last writes n to d_out); pad = virtual
// moves only keys < n (a skipped comparator moves nothing). For n = 2^L both are 2 n 4 R
// (README.md, "The model"). DRAM bytes are fewer when the L2 holds part of the array.
struct Traffic {
  double bytes = 0;
  double agpu_ios = 0;  // seed 004's I/O: blocks of b = 32 keys read or written
};
Traffic traffic(Stage s, std::size_t n, const Shape& shape);
std::vector<double> bytes_per_launch(Stage s, std::size_t n, const Shape& shape);
// A wall-clock estimate: R sigma + bytes / bandwidth (slides/model.md: sigma per launch, bytes at the
// copy roof; sigma in us, bandwidth GB/s).
double predicted_ms(Stage s, std::size_t n, const Shape& shape, double sigma_us, double gbps);

// ---- bank conflicts: one block's shared-memory requests, warp instruction by warp instruction -----------------------

using Request = gpulab::NamedRequest;

// Thread tau's pair at stride 2^e in a tile: lo = tau with a 0 bit inserted at position e, hi = lo + 2^e.
int pair_lower(int tau, int e);
// One textbook step (a thread per pair (lo, lo + 2^e), loads of both, stores of both) of a block
// of `block` threads: every warp's load lo, load hi, store lo, store hi. 2-way conflicted for
// e < 5 (4 excess per warp), else 0.
std::vector<Request> shared_step_requests(int block, int e);
// Every shared request one block of `launch` makes in `stage`, in the reference's design (global
// kernels: none). phase1 stages a block's 2 x block keys in shared memory (coalesced slots), runs
// one textbook step on them, writes them back; the tile kernels load keys tau and block + tau,
// run the textbook steps, store them back; phase4-conflict-free keeps each warp's 64 keys in
// registers (strides < 64 in the thread and by shuffles) and runs only the strides >= 64 through
// shared memory. phase5-fused: none modelled (the design is yours).
std::vector<Request> block_requests(Stage s, const Launch& launch, const Shape& shape);
// Blocks a launch runs (phase5-fused: the reference's grid).
std::size_t blocks_of(Stage s, const Launch& launch, std::size_t n, const Shape& shape);
// The excess wavefronts Nsight Compute should count for each launch (blocks x per-block excess),
// and their sum over the run; nullopt for phase5-fused (not modelled).
std::vector<long> excess_per_launch(Stage s, std::size_t n, const Shape& shape);
std::optional<long> predicted_excess(Stage s, std::size_t n, const Shape& shape);
// The textbook step's closed form: 4 (T/64) (15 + 5 (t - 5)) per tile-sort block, 4 (T/64) 5 per
// tile-merge block (t >= 5): 4 excess per warp for each step with a stride below 32.
long textbook_tile_sort_excess(int t);
long textbook_tile_merge_excess(int t);

// ---- shared memory, registers, occupancy -------------------------------------------------------------------------------

// Dynamic shared bytes per block of a launch's kernel in the reference's design, and its threads.
int shared_bytes(Stage s, Kernel k, const Shape& shape);
int threads_per_block(Stage s, Kernel k, const Shape& shape);

struct Occupancy {
  int blocks_per_sm = 0;
  int warps_per_sm = 0;
  double occupancy = 0;    // warps_per_sm / 64
  std::string limited_by;  // "threads", "blocks", "registers", "shared memory"
};
// H100/H200 (sm_90) limits by default: 64 warps, 32 blocks, 65536 registers (allocated per warp
// in units of 256), 228 KiB of shared memory with 1 KiB reserved per block.
Occupancy occupancy(int threads_per_block, int registers_per_thread, int shared_bytes_per_block,
                    int smem_per_sm = 228 * 1024, int max_warps = 64, int max_blocks = 32, int registers_per_sm = 65536);

// ---- paths: the kernels and branches a problem reaches (Stage::reaches) ------------------------------------------------

// GPU stages, n == 0: "n = 0: no launch". Otherwise the pad ("pad = sentinel: alternating merges" /
// "pad = virtual: ascending merges, mirrored first strides"), then
//   n == 1                 "n = 1: one launch writes the key"
//   n not a power of two   "pad = sentinel: a padded copy in scratch" (more than one launch) or
//                          "n not a power of two: guarded loads and stores"
//   phase0, phase1         "one block per launch" / "several blocks per launch"
//   the tile stages        "L <= t: the tile sort alone" / "L > t: merge levels above the tile"
//   phase5-fused           "a mirrored first group" (pad = virtual, L > t), "a group launch that
//                          transposes" (more strides than a thread's keys: the reference's
//                          group of more than 5 strides)
// The grader's sanitizer shapes and the visible cases must reach every path a hidden case reaches.
std::vector<std::string> paths(Stage s, std::size_t n, const Shape& shape);

// ---- the network on the host, launch by launch ---------------------------------------------------------------------------

// Which rule picks a comparator's direction. Only `correct` sorts; the others are known-bad
// classes (autograder/testdata/bitonic.toml):
//   merge_ascending  every tile merge ascending (phase 3's rule used for every level of phase 4):
//                    right until L >= t + 2, when level t + 1 must alternate
//   merge_by_parity  the tile merge faces by its block's parity (phase 2's rule): wrong from L = t + 1
enum class DirectionRule { correct, merge_ascending, merge_by_parity };

struct NetworkReport {
  bool sorted = false;               // the first n keys equal the oracle
  bool virtual_stayed_above = true;  // pad = virtual: +infinity never moved below n (skipping is exact)
  bool virtual_moved_below = false;  // pad = sentinel, run with a distinct +infinity: it did move (why
                                     // alternating needs storage for the padding)
  std::size_t comparators = 0;       // executed (virtual: those with both keys real)
};

// Runs `launches` on the n keys as the GPU does, with tiles of 2^tile_log2 keys: sentinel pads to
// 2^L keys holding kSentinel and uses the alternating rule; virtual keeps +infinity (a value
// above every key, distinct from the sentinel) at positions >= n, mirrors the first stride of
// every level, and inside a tile kernel holds the sentinel at positions >= n as the GPU's shared
// memory does. `distinct_infinity` (sentinel only) pads with +infinity instead, to show that the
// alternating network moves padding below n.
std::vector<std::int32_t> run_network(std::span<const std::int32_t> in, const std::vector<Launch>& launches, Pad pad,
                                      int tile_log2, NetworkReport* report = nullptr,
                                      DirectionRule rule = DirectionRule::correct, bool distinct_infinity = false);

}  // namespace bitonic::model
