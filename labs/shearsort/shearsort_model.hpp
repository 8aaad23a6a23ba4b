// The ShearSort lab's CPU side: the inputs, the oracles every stage is checked against and their
// verdicts (shearsort_problem.cpp); ShearSort on the CPU with any round count, and the model of
// every stage -- compare-exchanges, shared accesses and bank conflicts per tile (request by request,
// gpulab's bank model), merge passes, bytes and launches R(n), the d-way heap's shared memory and
// multiplicity, and the paths (kernels and branches) a problem reaches. Part of the harness: do not
// edit. Host code only (C++20).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulab/bank_model.hpp"
#include "gpulab/check.hpp"
#include "gpulab/data.hpp"
#include "shearsort.cuh"

namespace shearsort::model {

// ---- the stages ------------------------------------------------------------------------------------------------

enum class Stage {
  cpu, cpu_shear,
  tile_bitonic, tile_shear_naive, tile_shear_transpose, tile_shear_registers, tile_shear_padded,
  merge_pairwise, merge_dway,
};
std::vector<Stage> all_stages();
std::string_view to_string(Stage s);  // the stage id: "tile-shear-padded"
std::optional<Stage> parse_stage(std::string_view id);
std::optional<TileVariant> tile_variant(Stage s);  // the tile stages' algorithm, nullopt for the others
std::string_view to_string(TileVariant v);         // its stage id: "tile-shear-padded"
bool sorts_tiles(Stage s);                          // cpu-shear and the tile stages: every tile sorted
bool sorts_all(Stage s);                            // cpu and the merge stages: the whole array, stable

// ---- inputs ------------------------------------------------------------------------------------------------------

enum class Input {
  uniform,               // every int32 equally likely (--dist uniform and full-range)
  small_range,           // 0..49
  all_equal,             // 42 everywhere
  sorted,                // non-decreasing (with repeats)
  reverse,               // non-increasing
  few_unique,            // 4 values
  zero_one,              // 0 or 1                                           (--param input=zero-one)
  zero_one_final_phase,  // every tile the 0-1 tile below                    (--param input=final-phase)
  column_sorted,         // every 32-key column sorted, the rows not         (--param input=column-sorted)
  extremes,              // INT_MIN, INT_MIN + 1, -1, 0, 1, INT_MAX - 1, INT_MAX (--param input=extremes)
};
std::vector<Input> all_inputs();
std::string_view to_string(Input d);                 // "final-phase" etc.
std::optional<Input> parse_input(std::string_view name);
// --param input (lab.toml's names, in this order: 0 = "dist", the --dist distribution; then
// zero-one, final-phase, column-sorted, extremes) with the problem's distribution.
inline constexpr int kInputChoices = 5;
Input input_for(gpulab::Distribution d, long long input_knob);
// Deterministic in (d, n, seed): the grader regenerates a case's keys from them.
std::vector<std::int32_t> make_keys(Input d, std::size_t n, std::uint64_t seed);
// The values of --param pairs=1: value i = i (the key's input position).
std::vector<std::uint32_t> index_values(std::size_t n);

// ---- the oracles and their verdicts -------------------------------------------------------------------------------

// The merge stages' contract: stable by key. Keys only when values is empty.
std::vector<std::int32_t> sorted_keys(std::span<const std::int32_t> keys);
std::vector<std::pair<std::int32_t, std::uint32_t>> sorted_pairs(std::span<const std::int32_t> keys,
                                                                 std::span<const std::uint32_t> values);
// The tile stages' contract: every tile of kTileKeys keys sorted on its own.
std::vector<std::int32_t> tiles_sorted(std::span<const std::int32_t> keys);

// Verdict of a tile stage's output: the first tile that is not its sorted self, whether it holds
// the tile's keys at all (a key lost or doubled), whether it is in snake order (odd columns
// descending: the final column phase alternated) or where it first descends, and how many tiles
// are wrong.
gpulab::CheckResult check_tiles(std::span<const std::int32_t> keys, std::span<const std::int32_t> expected,
                                std::span<const std::int32_t> got);
// Verdict of a sort: `got` is n keys, then (pairs) n values; `expected` the same from the oracle.
// Says whether the keys are sorted and a permutation of the input, and for pairs whether each
// value follows its key and where equal keys came out of input order (an unstable merge).
gpulab::CheckResult check_sort(std::span<const std::int32_t> keys, std::span<const std::int32_t> expected,
                               std::span<const std::int32_t> got, bool pairs);

// ---- ShearSort on a w x w tile (the CPU model of cpu-shear) ----------------------------------------------------
//
// The tile in bank-matrix order: key a = w c + i is column c, row i (column c = w consecutive keys).
// A plan runs `rounds` rounds of (columns: even ascending, odd descending -- or all ascending when
// alternate == false; rows ascending), then, if final_column_phase, one ascending column phase.
struct ShearPlan {
  int w = kTileSide;
  int rounds = kShearRounds;
  bool final_column_phase = true;
  bool alternate = true;
};
int shear_rounds(int w);         // log2 w
int shear_column_phases(int w);  // log2 w + 1
int shear_row_phases(int w);     // log2 w
template <class T>
void shear_sort_tile(std::span<T> tile, const ShearPlan& plan = {});
// Every tile of keys by a plan (the last tile padded with INT_MAX, then cut).
std::vector<std::int32_t> shear_tiles(std::span<const std::int32_t> keys, const ShearPlan& plan = {});
// A 0-1 tile that log2 w rounds sort only with the final column phase (a seeded search over random
// 0-1 tiles; deterministic). Empty if none is found in `tries` tiles.
std::vector<std::int32_t> zero_one_tile_needing_final_phase(int w, std::uint64_t seed, int tries = 1 << 20);
// How many of all 2^(w*w) 0-1 tiles (w <= 4) a plan leaves unsorted.
long unsorted_zero_one_tiles(const ShearPlan& plan);
// How many of `trials` seeded random 0-1 tiles (random densities) a plan leaves unsorted.
long unsorted_random_zero_one_tiles(const ShearPlan& plan, int trials, std::uint64_t seed);

// ---- the networks -------------------------------------------------------------------------------------------------

int odd_even_merge_formula(int w);  // c(w) = (p^2 - p + 4) 2^(p-2) - 1, w = 2^p
int odd_even_merge_depth(int w);    // p (p + 1) / 2
long bitonic_comparators(long n);   // n/2 * log2 n (log2 n + 1) / 2
int bitonic_steps(long n);          // log2 n (log2 n + 1) / 2
// The generated network (shearsort.cuh's loops) for w in {2, 4, ..., 32}.
std::vector<Comparator> odd_even_merge_network(int w);
// Depth of a comparator list (longest chain of dependent comparators).
int network_depth(const std::vector<Comparator>& net, int w);

// ---- per tile stage: work and shared memory of one warp on one tile ----------------------------------------------

struct TileCost {
  long compare_exchanges_per_thread = 0;  // in shared memory or registers
  long network_accesses_per_thread = 0;   // shared accesses of the sort (README.md, "The model")
  long staging_accesses_per_thread = 0;   // the tile into shared memory and back: 32 + 32
  long transposes = 0;                    // Algorithm 2 sweeps (31 steps x 4 accesses each)
  long column_phases = 0, row_phases = 0;
  long shared_accesses_per_thread() const { return network_accesses_per_thread + staging_accesses_per_thread; }
  // Comparisons per key: the warp's compare-exchanges over the tile's 1024 keys.
  double comparisons_per_key() const { return static_cast<double>(compare_exchanges_per_thread) * kWarp / kTileKeys; }
};
TileCost tile_cost(TileVariant v);

using Request = gpulab::NamedRequest;
using gpulab::RequestSummary;
// One warp's shared-memory requests for one full tile, in the reference kernel's order
// (solutions' shear_device.cuh): staging stores, the algorithm, staging loads. key_bytes 4 (the
// tile stages) or 8 (the 64-bit composites the merge stages sort in pairs mode).
std::vector<Request> tile_requests(TileVariant v, int key_bytes = 4);
RequestSummary tile_summary(TileVariant v, int key_bytes = 4);
// Excess wavefronts Nsight Compute should count for one run on n keys: ceil(n / 1024) tiles, each
// the per-tile excess (staging has none, so a partial tile costs the same). The networks are
// data-oblivious: the count does not depend on the keys.
long predicted_excess_wavefronts(TileVariant v, std::size_t n);
// The figures the lab was designed with (2560, 142104, 0, 0, 0), to print beside the model's.
long brief_excess_per_tile(TileVariant v);
// merge-pairwise's staging of a block's kMergeTile outputs: thread t writes outputs kMergeItems t ..
// kMergeItems t + kMergeItems - 1 (one request per k), then the block reads them coalesced.
// padded: word e + e/32 (the reference); unpadded: word e, kMergeItems-way conflicts on the writes.
std::vector<Request> merge_staging_requests(bool padded);

// ---- the merge stages: passes, bytes, launches -------------------------------------------------------------------

std::size_t tiles(std::size_t n);                   // ceil(n / 1024)
int pairwise_passes(std::size_t n);                 // P2 = ceil(log2 tiles)
int dway_passes(std::size_t n, int d);              // Pd = ceil(log_d tiles)
int agpu_dway_passes(std::size_t n, int b, int d);  // 004's: ceil(log_d(n / b)) from b-key blocks
// DRAM bytes of the whole sort: the tile pass and every merge pass read and write every key (and
// value): 2 n e (1 + P). The partitions' reads are small and not counted.
double sort_bytes(std::size_t n, int passes, int bytes_per_element);
// Kernel launches R(n) of a run (shearsort.cuh's contract); 0 for cpu stages and for n == 0.
long launches(Stage s, std::size_t n, int d = 8);
// 004 §7.3 time per output block: log2 d heap levels of one 2b bitonic merge (6 steps), summed
// over passes: (n / b) log2 d 6 Pd shuffle steps.
double dway_merge_steps(std::size_t n, int d);

// ---- merge-dway's heap: shared memory and multiplicity (004 §7.3.6) -----------------------------------------------

// The seed's buffers only: 4 b (d - 1) bytes (2b-key buffers: twice that).
std::size_t seed_heap_bytes_per_warp(int d, int b = kWarp, bool two_b_buffers = false);
// 004 §7.3.6's count: min(64, floor(smem_per_sm / bytes_per_warp)) -- no per-block reserve.
int seed_resident_warps(int smem_per_sm_bytes, int d, bool two_b_buffers = false);
// The reference: dway_shared_bytes_per_warp (buffers + bookkeeping), dway_warps_per_block warps per
// block, 1 KiB reserved per block, at most 64 warps, 32 blocks and max_block_bytes per block.
struct DwayShared {
  std::size_t bytes_per_warp = 0;
  int warps_per_block = 0;
  std::size_t bytes_per_block = 0;
  int resident_warps = 0;   // per SM, limited by shared memory (registers may limit more: measured)
  double multiplicity = 0;  // 004's M / m: shared bytes per SM over bytes per warp
};
DwayShared dway_shared(int d, int smem_per_sm_bytes = 228 * 1024, int key_bytes = 4,
                       int max_block_bytes = 227 * 1024);

// ---- paths: the kernels and branches a problem reaches (Stage::reaches) ------------------------------------------

// The shape of a run beyond n: the merge stages' knobs and the device's SM count.
struct Shape {
  int d = 8;
  std::size_t chunk = 0;  // --param chunk (0: automatic)
  bool pairs = false;
  TileVariant base = TileVariant::shear_padded;
  int multiprocessors = 132;
};
// "n = 0: nothing to do", and per stage:
//   tile stages      "one tile" / "several tiles", "a partial tile", "a multi-block grid",
//                    "a block with warps past n"
//   merge stages     "keys only" / "(key, value) pairs", "tiles by <base stage>", then the tile
//                    paths of the base case, and
//     pairwise       "no merge pass (one tile)" / "an odd number of passes" / "an even number of
//                    passes", "a run without a partner", "a pair merged by several blocks",
//                    "a partial merge block"
//     d-way          "no merge pass (one tile)" / "an odd ... / an even number of passes",
//                    "partition: R runs per lane" (its kernel for d), "heap blocks of W warps",
//                    "heap shared memory above 48 KiB (opt-in)", "a group with fewer than d runs",
//                    "a group cut into several tasks", "a run ending in a partial 64-key block"
// The grader's sanitizer shapes and the visible cases must reach every path a hidden case reaches.
std::vector<std::string> paths(Stage s, std::size_t n, const Shape& shape);

}  // namespace shearsort::model
