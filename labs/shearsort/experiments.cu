// The ShearSort lab's experiments (`gpulab experiment shearsort ID`): seed 000 Fig. 6 (the base case
// against CUB's block sorts), the whole sort against CUB and Thrust (004 Figs. 19-20), the d sweep
// (004 Figs. 17-18) and the base-case sweep on the GPU; on the CPU the bank model every ncu count is
// held to, the d-way heap's shared memory and multiplicity (004 §7.3.6), 004 Fig. 14 from the model,
// and the round count (seed 000 §5 and seed 001 leave out the final column phase). Each prints a table and writes CSV; the stages come from
// the stage table in lab.cu. Do not edit.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/device_info.hpp"
#include "gpulab/experiments.hpp"
#include "shearsort.cuh"
#include "shearsort_lab.hpp"
#include "shearsort_model.hpp"

namespace {

using namespace gpulab;
namespace sm = shearsort::model;
using shearsort::TileVariant;

constexpr TileVariant kVariants[] = {TileVariant::bitonic, TileVariant::shear_naive, TileVariant::shear_transpose,
                                     TileVariant::shear_registers, TileVariant::shear_padded};

std::vector<long long> powers_of_two(int lo, int hi) {
  std::vector<long long> v;
  for (int k = lo; k <= hi; ++k) v.push_back(1LL << k);
  return v;
}

std::optional<TileVariant> variant_of(const std::string& stage) {
  if (auto s = sm::parse_stage(stage)) return sm::tile_variant(*s);
  return std::nullopt;
}

Cell count(long long v) { return static_cast<std::int64_t>(v); }

// ---- seed 000 Fig. 6: the base case against CUB's block sorts --------------------------------------------------

Table base_case(const ExperimentContext& ctx) {
  Sweep s{"base-case", "base case (seed 000 Fig. 6): every tile of 1024 keys sorted, beside CUB's block sorts",
          {"tile-bitonic", "tile-shear-naive", "tile-shear-transpose", "tile-shear-registers", "tile-shear-padded"},
          "n", powers_of_two(10, ctx.quick ? 16 : 28)};
  s.peers = {{"tile-cub-merge", "vs_cub_merge", "vs BlockMergeSort"}, {"tile-cub-radix", "vs_cub_radix", "vs BlockRadixSort"}};
  s.launches = s.elements_per_s = true;
  s.extra_columns = {{"comparisons_per_key", "cmp/key", 1}, {"model_excess_per_tile", "excess/tile"},
                     {"model_excess", "excess (run)"}};
  s.extra = [](const std::string& id, long long n, const StageResult&) -> std::vector<Cell> {
    const auto v = variant_of(id);
    if (!v) return {Cell{}, Cell{}, Cell{}};
    return {sm::tile_cost(*v).comparisons_per_key(), count(sm::tile_summary(*v).excess()),
            count(sm::predicted_excess_wavefronts(*v, static_cast<std::size_t>(n)))};
  };
  Table t = sweep(ctx, s);
  t.add_note("vs BlockMergeSort / vs BlockRadixSort = the CUB tile kernel's time / the stage's time (> 1: the stage is faster)");
  t.add_note("cmp/key: compare-exchanges per key (the warp's over the tile's 1024 keys); excess: the bank model's excess "
             "shared wavefronts (per tile, and over the run: what Nsight Compute should count)");
  t.add_note("GB/s counts 8n bytes (every key read and written once)");
  return t;
}

// ---- the whole sort against CUB and Thrust (004 Figs. 19-20) ---------------------------------------------------

Table sort_size(const ExperimentContext& ctx) {
  Sweep s{"sort-size", "the whole sort (004 Figs. 19-20): merge stages beside CUB's merge and radix sorts and Thrust",
          {"merge-pairwise", "merge-dway", "sort-cub-merge-stable", "sort-cub-radix"}, "n",
          powers_of_two(10, ctx.quick ? 16 : 28)};
  s.peers = {{"sort-cub-merge", "vs_cub_merge", "vs CUB merge"}, {"sort-thrust", "vs_thrust", "vs Thrust"}};
  s.launches = s.elements_per_s = true;
  s.extra_columns = {{"passes", "passes"}, {"model_bytes_per_key", "model B/key", 0}};
  const int d = static_cast<int>(ctx.base.param("d", 8));
  s.extra = [d](const std::string& id, long long n, const StageResult&) -> std::vector<Cell> {
    const auto un = static_cast<std::size_t>(n);
    int passes = -1;
    if (id == "merge-pairwise") passes = sm::pairwise_passes(un);
    if (id == "merge-dway") passes = sm::dway_passes(un, d);
    if (passes < 0) return {Cell{}, Cell{}};
    return {count(passes), sm::sort_bytes(un, passes, 4) / static_cast<double>(un)};
  };
  Table t = sweep(ctx, s);
  t.add_note("vs CUB merge = cub::DeviceMergeSort::SortKeysCopy (custom comparator) time / the stage's time; the goal: "
             "merge-pairwise >= 0.7 at 2^28, merge-dway at its best d >= merge-pairwise (d-sweep)");
  t.add_note("model B/key: 2 x 4 x (1 + passes), the tile pass and every merge pass read and write each key once "
             "(004 Fig. 20 counted global accesses; ncu's dram__bytes_read.sum + dram__bytes_write.sum measure it)");
  t.add_note("merge-dway at d = " + std::to_string(d) + " (--param d)");
  return t;
}

// ---- the d sweep (004 Figs. 17-18) -------------------------------------------------------------------------------

Table d_sweep(const ExperimentContext& ctx) {
  const std::size_t n = ctx.quick ? std::size_t{1} << 16 : ctx.base.n;
  Sweep s{"d-sweep", "merge-dway against d (004 Figs. 17-18), n = " + size_name(n) + ": passes, bytes and resident warps",
          {"merge-dway"}, "d", {2, 4, 8, 16, 32, 64, 128, 256}, n};
  s.peers = {{"sort-cub-merge", "vs_cub_merge", "vs CUB merge"}, {"merge-pairwise", "vs_pairwise", "vs pairwise"}};
  s.elements_per_s = s.launches = true;
  s.extra_columns = {{"passes", "passes"},
                     {"model_bytes", "model bytes", 0},
                     {"heap_bytes_per_warp", "heap B/warp"},
                     {"resident_warps", "warps/SM"},
                     {"seed_resident_warps", "seed warps/SM"}};
  s.extra = [n](const std::string& id, long long d, const StageResult&) -> std::vector<Cell> {
    if (id != "merge-dway") return {Cell{}, Cell{}, Cell{}, Cell{}, Cell{}};
    const int di = static_cast<int>(d);
    const int passes = sm::dway_passes(n, di);
    const auto shared = sm::dway_shared(di);
    return {count(passes), sm::sort_bytes(n, passes, 4), count(static_cast<long long>(shared.bytes_per_warp)),
            count(shared.resident_warps), count(sm::seed_resident_warps(228 * 1024, di))};
  };
  Table t = sweep(ctx, s);
  t.add_note("model bytes: 2 x 4n x (1 + passes) (004 Fig. 17 measured global traffic with nvprof; ncu's dram__bytes "
             "metrics measure it on sm_90)");
  t.add_note("warps/SM: heap warps resident per SM by shared memory (the reference's 64-key buffers, head words and "
             "cursors, shearsort.cuh; 1 KiB per block, <= 32 blocks); seed warps/SM: 004 §7.3.6's count at b = 32, "
             "min(64, 228 KiB / 128 (d - 1) B)");
  t.add_note("vs pairwise = merge-pairwise's time / merge-dway's time (> 1: d-way is faster); 004's optimum on a K20c "
             "was d = 4 (Fig. 18)");
  return t;
}

// What the base case is worth in the whole sort: each tile stage under both merge stages.
Table base_sweep(const ExperimentContext& ctx) {
  const std::size_t n = ctx.quick ? std::size_t{1} << 16 : ctx.base.n;
  Sweep s{"base-sweep", "the merge stages on each base case (--param base), n = " + size_name(n),
          {"merge-pairwise", "merge-dway"}, "base", {0, 1, 2, 3, 4}, n};
  s.peers = {{"sort-cub-merge", "vs_cub_merge", "vs CUB merge"}};
  Table t = sweep(ctx, s);
  t.add_note("the tile pass is 1 of the 1 + passes sweeps over the keys: the base case moves the whole sort less than "
             "it moves the tile stage alone (base-case)");
  return t;
}

// ---- the bank model (CPU) --------------------------------------------------------------------------------------------

// Per tile stage and input, the model's excess over a run at n (measure.toml's ncu sweep holds ncu
// to model_excess: the networks are data-oblivious, so the input changes nothing); the tile stages
// with the merge stages' 64-bit composites; merge-pairwise's output staging, padded and not.
Table bank_model(const ExperimentContext& ctx) {
  const std::size_t n = ctx.base.n;
  std::vector<Column> columns{{"stage", "stage"},
                              {"input", "input"},
                              {"key_bytes", "key B"},
                              {"n", "n"},
                              {"cas_per_thread", "CAS/thread"},
                              {"comparisons_per_key", "cmp/key", 1},
                              {"shared_per_thread", "shared/thread"}};
  for (auto& c : bank_columns()) columns.push_back(c);
  columns.push_back({"brief_excess", "brief"});
  columns.push_back({"model_excess", "excess (run)"});
  Table t(columns, "shearsort: the bank model of every shared-memory pattern, one warp per tile; n = " + size_name(n));
  auto add = [&](const std::string& stage, Cell input, int key_bytes, const sm::RequestSummary& one, Cell cas, Cell cmp,
                 Cell shared, Cell brief, Cell run) {
    std::vector<Cell> row{stage, input, count(key_bytes), count(static_cast<long long>(n)), cas, cmp, shared};
    for (auto& c : bank_cells(one)) row.push_back(std::move(c));
    row.push_back(brief);
    row.push_back(run);
    t.add_row(std::move(row));
  };
  for (TileVariant v : kVariants) {
    const auto cost = sm::tile_cost(v);
    const auto one = sm::tile_summary(v);
    for (long long input : {0, 1, 2})  // dist, zero-one, final-phase: the same counts
      add(std::string(sm::to_string(v)), count(input), 4, one, count(cost.compare_exchanges_per_thread),
          cost.comparisons_per_key(), count(cost.shared_accesses_per_thread()), count(sm::brief_excess_per_tile(v)),
          count(sm::predicted_excess_wavefronts(v, n)));
  }
  for (TileVariant v : kVariants) {
    const auto one = sm::tile_summary(v, 8);
    add(std::string(sm::to_string(v)) + " (pairs)", count(0), 8, one, Cell{}, Cell{}, Cell{}, Cell{},
        count(one.excess() * static_cast<long long>(sm::tiles(n))));
  }
  for (bool padded : {true, false}) {
    const auto one = gpulab::summarize(sm::merge_staging_requests(padded));
    add(padded ? "merge staging (padded)" : "merge staging (unpadded)", count(0), 4, one, Cell{}, Cell{}, Cell{}, Cell{},
        Cell{});
  }
  t.add_note("requests .. max way: one warp's shared-memory requests on one full tile (tile stages: staging, network, "
             "transposes, staging back; merge staging: one warp's " + std::to_string(shearsort::kMergeItems) + " stores and " + std::to_string(shearsort::kMergeItems) +
             " loads of a block's " + std::to_string(shearsort::kMergeTile) + " outputs)");
  t.add_note("brief: the excess per tile the lab was designed with (2560, 142104, 0, 0, 0); excess (run): ceil(n / 1024) tiles x the excess per tile");
  t.add_note("(pairs): the 64-bit (key, position) composites the merge stages sort in pairs mode (half-warp phases); "
             "the networks are data-oblivious, so no count depends on --param input (input 0 on the rows it does not name)");
  if (ctx.base.param("draw", 0) != 0) {
    auto first = [](const std::vector<sm::Request>& requests, const std::string& prefix) -> const sm::Request* {
      for (const auto& r : requests)
        if (r.step.rfind(prefix, 0) == 0) return &r;
      return nullptr;
    };
    const std::pair<TileVariant, const char*> drawings[] = {
        {TileVariant::bitonic, "load lo size=2 j=1"},       {TileVariant::bitonic, "load lo size=1024 j=512"},
        {TileVariant::shear_naive, "load column"},         {TileVariant::shear_naive, "load row"},
        {TileVariant::shear_transpose, "load lower transpose i=1"}, {TileVariant::shear_padded, "load column"},
        {TileVariant::shear_padded, "load row"}};
    for (const auto& [v, prefix] : drawings) {
      const auto requests = sm::tile_requests(v);
      if (const auto* r = first(requests, prefix)) add_drawing(t, std::string(sm::to_string(v)) + ": " + r->step, r->access);
    }
  }
  return t;
}

// ---- the d-way heap's shared memory and multiplicity (CPU; 004 §7.3.6) ------------------------

Table heap_model(const ExperimentContext& ctx) {
  const std::size_t n = ctx.base.n;
  Table t({{"d", "d"},
           {"n", "n"},
           {"passes", "passes"},
           {"agpu_passes", "004 passes"},
           {"model_bytes", "model bytes", 0},
           {"merge_steps", "merge steps", 0},
           {"seed_bytes_per_warp", "seed B/warp"},
           {"seed_warps_k20c", "seed K20c"},
           {"seed_warps_h100", "seed H100"},
           {"bytes_per_warp", "ref B/warp"},
           {"warps_per_block", "warps/block"},
           {"resident_warps", "ref warps/SM"},
           {"resident_warps_pairs", "pairs warps/SM"},
           {"multiplicity", "M/m", 1}},
          "merge-dway's heap (004 §7.3.6): shared memory, resident warps, passes at n = " + size_name(n));
  for (int d = 2; d <= shearsort::kMaxFanIn; d *= 2) {
    const auto ref = sm::dway_shared(d), pairs = sm::dway_shared(d, 228 * 1024, 8);
    const int passes = sm::dway_passes(n, d);
    t.add_row({count(d), count(static_cast<long long>(n)), count(passes), count(sm::agpu_dway_passes(n, shearsort::kWarp, d)),
               sm::sort_bytes(n, passes, 4), sm::dway_merge_steps(n, d),
               count(static_cast<long long>(sm::seed_heap_bytes_per_warp(d))), count(sm::seed_resident_warps(48 * 1024, d)),
               count(sm::seed_resident_warps(228 * 1024, d)), count(static_cast<long long>(ref.bytes_per_warp)),
               count(ref.warps_per_block), count(ref.resident_warps), count(pairs.resident_warps), ref.multiplicity});
  }
  t.add_note("passes: ceil(log_d(n / 1024)) from the lab's tiles; 004 passes: ceil(log_d(n / 32)) from 004's b-key blocks; "
             "model bytes 2 x 4n x (1 + passes)");
  t.add_note("merge steps: 004 §7.4.1's (n / b) log2 d 6 passes -- about (n / b) 6 log2(n / b) whatever d is");
  t.add_note("seed: 4 b (d - 1) bytes a warp at b = 32, min(64, shared per SM / that) warps (K20c 48 KiB, H100 228 KiB); "
             "ref: the reference's b = 64 buffers + head words + cursors (shearsort.cuh's dway_shared_bytes_per_warp), "
             "1 KiB reserved per block, <= 32 blocks per SM");
  return t;
}

// ---- 004 Fig. 14 from the model (CPU) ---------------------------------------------------------------------------------

Table fig14(const ExperimentContext& ctx) {
  Table t({{"runs", "runs"}, {"d", "d"}, {"passes", "passes"}, {"accesses_per_key", "accesses/key"}},
          "004 Fig. 14: merging sorted runs d at a time -- each pass reads and writes every key once");
  auto add = [&](long long runs, int d) {
    int passes = 0;
    for (long long r = runs; r > 1; r = (r + d - 1) / d) ++passes;
    t.add_row({count(runs), count(d), count(passes), count(2LL * passes)});
  };
  for (int d : {2, 4, 8}) add(8, d);
  const long long tiles = static_cast<long long>(sm::tiles(ctx.quick ? std::size_t{1} << 20 : std::size_t{1} << 28));
  for (int d = 2; d <= shearsort::kMaxFanIn; d *= 2) add(tiles, d);
  t.add_note("8 runs: 2-way merging reads and writes each key 6 times (3 passes), 8-way twice (1 pass) -- 004 Fig. 14");
  t.add_note("then the runs of a sort of " + size_name(static_cast<std::size_t>(tiles) * shearsort::kTileKeys) +
             " keys in 1024-key tiles");
  return t;
}

// ---- the round count (CPU; the seeds' defect: seed 000 §5, seed 001) ----------------------------------------------------

Table round_count(const ExperimentContext& ctx) {
  Table t({{"w", "w"}, {"plan", "plan"}, {"rounds", "rounds"}, {"final_column_phase", "final phase"}, {"tiles", "tiles"},
           {"unsorted", "unsorted"}},
          "ShearSort's round count on 0-1 tiles (the 0-1 principle): log2 w rounds need the final column phase");
  for (int w : {4, 8, 16, 32}) {
    const int r = sm::shear_rounds(w);
    const struct {
      const char* name;
      int rounds;
      bool final_phase;
    } plans[] = {{"the lab: log2 w rounds + final column phase", r, true},
                 {"the seeds: log2 w rounds", r, false},
                 {"log2 w + 1 rounds, no final phase", r + 1, false},
                 {"log2 w - 1 rounds + final column phase", r - 1, true}};
    const int trials = w == 4 ? 0 : ctx.quick ? 200 : (w == 32 ? 3000 : 6000);
    for (const auto& plan : plans) {
      const sm::ShearPlan p{w, plan.rounds, plan.final_phase, true};
      const long unsorted = w == 4 ? sm::unsorted_zero_one_tiles(p) : sm::unsorted_random_zero_one_tiles(p, trials, 11 + w);
      t.add_row({count(w), std::string(plan.name), count(plan.rounds), std::string(plan.final_phase ? "yes" : "no"),
                 count(w == 4 ? 65536 : trials), count(unsorted)});
    }
  }
  t.add_note("w = 4: all 2^16 0-1 tiles; w = 8, 16, 32: seeded random 0-1 tiles at random densities");
  t.add_note("seed 000 §5 and seed 001 stop after log2 w rounds; --param input=final-phase is a 32 x 32 tile they leave "
             "unsorted");
  return t;
}

}  // namespace

namespace shearsort {

std::vector<gpulab::Experiment> make_experiments() {
  return {
      {"base-case", "tile stages vs CUB's block sorts, n = 2^10 .. 2^28 (seed 000 Fig. 6)", true, base_case},
      {"sort-size", "merge stages vs CUB merge/radix sort and Thrust, n = 2^10 .. 2^28 (004 Figs. 19-20)", true, sort_size},
      {"d-sweep", "merge-dway at d = 2 .. 256 with passes, bytes and resident warps (004 Figs. 17-18)", true, d_sweep},
      {"base-sweep", "the merge stages on each tile stage as their base case", true, base_sweep},
      {"bank-model", "the bank model's excess wavefronts per tile stage (CPU; --param draw=1 draws requests)", false,
       bank_model, {"draw"}},
      {"heap-model", "merge-dway's heap: shared bytes, resident warps, passes per d (CPU; 004 §7.3.6)", false, heap_model},
      {"fig14", "004 Fig. 14 from the model: passes and accesses per key against d (CPU)", false, fig14},
      {"round-count", "ShearSort on 0-1 tiles with and without the final column phase (CPU)", false, round_count},
  };
}

}  // namespace shearsort
