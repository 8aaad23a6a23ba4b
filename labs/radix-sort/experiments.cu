// The radix-sort lab's experiments (`gpulab experiment radix-sort ID`): seed 003's block-size sweep at
// 2^15 beside the model's sigma x R line, its size sweep extended to 2^28 beside CUB, Thrust and a
// merge sort, the digit-width sweep (fewer passes against dearer ones), the key-width sweep (CUB given the same end_bit),
// the distribution sweep, the model's table, and the bank model every ncu count of digit4 is held
// to. Each prints a table and writes CSV; the stages come from the stage table in lab.cu. Do not edit.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/cuda_check.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/experiments.hpp"
#include "gpulab/machine_model.hpp"
#include "radix_sort.cuh"
#include "radix_sort_lab.hpp"
#include "radix_sort_model.hpp"

namespace {

using namespace gpulab;
namespace rm = radix_sort::model;
namespace rl = radix_sort::lab;
using radix_sort::CounterLayout;
using radix_sort::KeyType;

const std::vector<std::string> kSorts{"split-global", "split-scan-fused", "split-onepass", "digit4", "onesweep"};

std::optional<rm::Stage> model_stage(const std::string& id) { return rm::parse_stage(id); }

// ---- the model's machine: sigma, a host round trip, the copy bandwidth ---------------------------------

__global__ void empty_kernel() {}

// launch_machine()'s sigma and copy roof, and the host round trip split-global pays per bit.
struct Machine : LaunchMachine {
  double sync_us = 15.0;    // a 4-byte device-to-host cudaMemcpy after a launch: the host round trip
  std::string note() const {
    return LaunchMachine::note() + ", host round trip = " + std::to_string(sync_us).substr(0, 5) + " us";
  }
};

const Machine& machine() {
  static Machine m;
  static std::once_flag once;
  std::call_once(once, [] {
    static_cast<LaunchMachine&>(m) = launch_machine();
    if (!m.measured) return;
    std::uint32_t* word = nullptr;
    GPULAB_CUDA_CHECK(cudaMalloc(&word, sizeof(std::uint32_t)));
    std::uint32_t host = 0;
    constexpr int kTrips = 200;
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kTrips; ++i) {
      empty_kernel<<<1, 1>>>();
      GPULAB_CUDA_CHECK(cudaMemcpy(&host, word, sizeof host, cudaMemcpyDeviceToHost));
    }
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kTrips;
    GPULAB_CUDA_CHECK(cudaFree(word));
    m.sync_us = std::max(0.0, us - m.sigma_us);
  });
  return m;
}

// The model's time for a stage on p (the launch count, host round trips and bytes of
// radix_sort_model.hpp at this machine's sigma, round trip and copy roof).
Cell model_ms(const std::string& id, const Problem& p) {
  const auto s = model_stage(id);
  if (!s || !rm::on_gpu(*s)) return {};
  const Machine& m = machine();
  return rm::predicted_ms(*s, rl::model_problem(p, *s == rm::Stage::split_global), m.sigma_us, m.gbps, m.sync_us);
}

Cell sigma_r_ms(const std::string& id, const Problem& p) {
  const auto s = model_stage(id);
  if (!s || !rm::on_gpu(*s)) return {};
  return rm::launches(*s, rl::model_problem(p, *s == rm::Stage::split_global)) * machine().sigma_us / 1000.0;
}

ExperimentContext with_base(const ExperimentContext& ctx, const Problem& base) {
  ExperimentContext c = ctx;
  c.base = base;
  return c;
}

const std::vector<Peer> kLibraries{{"cub-sort", "vs_cub", "vs CUB"},
                                   {"thrust-sort", "vs_thrust", "vs Thrust"},
                                   {"cub-merge-sort", "vs_merge", "vs merge sort"}};

// ---- 1. seed 003's block-size sweep ------------------------------------------------------------------

// n = 2^15 keys in [0, 50) (seed 003's data: K = 6 bits), threads per block 32 .. 1024. At this n
// every launch is a few microseconds of work: the time is R sigma + the host round trips, flat in the
// block size -- the model's sigma R column says so beside the measurement. CUB sorts the same 6 bits.
Table block_sweep(const ExperimentContext& ctx) {
  constexpr std::size_t n = std::size_t{1} << 15;
  Problem base = ctx.base;
  base.n = n;
  base.distribution = Distribution::small_range;
  base.params.erase("input");
  base = base.with("end_bit", rl::data_bits_of(base));
  const std::vector<long long> blocks =
      ctx.quick ? std::vector<long long>{32, 128, 1024} : std::vector<long long>{32, 64, 128, 256, 512, 1024};
  Sweep s{"block-sweep", "radix-sort: seed 003's block sweep, n = 2^15 keys in [0, 50) (K = " +
                             std::to_string(base.knob("end_bit")) + " bits), threads per block",
          {"find-max", "split-global"}, "block", blocks, n};
  s.peers = {{"cub-sort", "vs_cub", "vs CUB"}};
  s.launches = true;
  s.extra_columns = {{"sigma_r_ms", "sigma R ms", 4}, {"model_ms", "model ms", 4}};
  s.extra = [base](const std::string& id, long long block, const StageResult&) {
    const Problem p = base.with("block", block);
    return std::vector<Cell>{sigma_r_ms(id, p), model_ms(id, p)};
  };
  Table t = sweep(with_base(ctx, base), s);
  t.add_note("seed 003 (GTX 960M, WDDM): 2.61 ms at 2^15 with block 128; 213 launches and 13 host round trips "
             "(radix_sort_model.hpp): the sort is launch-bound, not bandwidth-bound");
  t.add_note("sigma R = the model's launches x sigma; model = R sigma + round trips + bytes / copy roof; " + machine().note());
  t.add_note("CUB sorts the same bits: end_bit = K = " + std::to_string(base.knob("end_bit")));
  return t;
}

// ---- 2. seed 003's size sweep, to 2^28 ---------------------------------------------------------------

Table size_sweep(const ExperimentContext& ctx) {
  std::vector<long long> sizes;
  for (int k = 6; k <= (ctx.quick ? 16 : 28); k += ctx.quick ? 2 : 1) sizes.push_back(1LL << k);
  Sweep s{"size-sweep", "radix-sort: u32 keys, every sort against n = 2^6 .. 2^28 (seed 003's 2^6 .. 2^22, extended)",
          kSorts, "n", sizes};
  s.peers = kLibraries;
  s.launches = s.elements_per_s = true;
  s.extra_columns = {{"model_ms", "model ms", 4}};
  const Problem base = ctx.base;
  s.extra = [base](const std::string& id, long long n, const StageResult&) {
    Problem p = base;
    p.n = static_cast<std::size_t>(n);
    return std::vector<Cell>{model_ms(id, p)};
  };
  Table t = sweep(ctx, s);
  const Machine& m = machine();
  std::string crossover = "the model's launch-bound crossover (R sigma = bytes / copy roof):";
  for (const auto& id : kSorts) {
    const double x = rm::launch_bound_crossover(*rm::parse_stage(id), rl::model_problem(ctx.base, false), m.sigma_us, m.gbps);
    crossover += " " + id + " " + (std::isfinite(x) ? std::to_string(static_cast<long long>(x)) : std::string("never"));
  }
  t.add_note(crossover);
  t.add_note("vs CUB / Thrust / merge sort = the library's time / the stage's time (> 1: the stage is faster)");
  t.add_note("model = R sigma + host round trips + bytes / copy roof; " + m.note());
  t.add_note("GB/s counts the keys read once and written once (8n bytes); launches: counted by CUPTI; model: R(n)");
  return t;
}

// ---- 3. the digit width -------------------------------------------------------------------------------

Table bits_sweep(const ExperimentContext& ctx) {
  const std::vector<long long> widths = ctx.quick ? std::vector<long long>{4, 8} : std::vector<long long>{1, 2, 4, 6, 8};
  const std::size_t n = ctx.quick ? std::size_t{1} << 16 : ctx.base.n;
  Sweep s{"bits-sweep", "radix-sort: onesweep's digit width r (--param bits), u32 keys, n = " + size_name(n), {"onesweep"},
          "bits", widths, n};
  s.peers = {{"cub-sort", "vs_cub", "vs CUB"}};
  s.launches = true;
  s.extra_columns = {{"passes", "passes"},
                     {"bytes_per_key", "B/key (model)", 1},
                     {"shared_bytes", "shared B/block"},
                     {"sectors_per_key", "sectors/key", 3}};
  const Problem base = ctx.base;
  s.extra = [base, n](const std::string& id, long long r, const StageResult&) -> std::vector<Cell> {
    if (id != "onesweep") return {Cell{}, Cell{}, Cell{}, Cell{}};
    Problem p = base.with("bits", r);
    p.n = n;
    const rm::Problem m = rl::model_problem(p, false);
    return {static_cast<std::int64_t>(rm::passes(rm::Stage::onesweep, m)), rm::bytes_per_key(rm::Stage::onesweep, m),
            static_cast<std::int64_t>(rm::onesweep_pass_shared_bytes(static_cast<int>(r), false)),
            rm::expected_sectors_per_written_key(static_cast<int>(r), radix_sort::kOnesweepTile)};
  };
  Table t = sweep(ctx, s);
  t.add_note("CUB's onesweep uses r = 8 (ONESWEEP_RADIX_BITS); digit4 is r = 4 in three rounds per pass");
  t.add_note("fewer bits: more passes (32 / r), each reading and writing every key; more bits: 2^r counters, longer "
             "look-backs, shorter runs per digit in the output (sectors per written key; ideal 0.125)");
  return t;
}

// ---- 4. the key width ----------------------------------------------------------------------------------

Table width_sweep(const ExperimentContext& ctx) {
  const std::vector<long long> widths =
      ctx.quick ? std::vector<long long>{6, 32} : std::vector<long long>{1, 6, 8, 12, 16, 20, 24, 28, 32};
  const std::size_t n = ctx.quick ? std::size_t{1} << 16 : ctx.base.n;
  auto one = [&](const Problem& base, const std::string& data) {
    Sweep s{"width-sweep", "", kSorts, "end_bit", widths, n};
    s.peers = {{"cub-sort", "vs_cub", "vs CUB"}};
    s.launches = true;
    s.extra_columns = {{"data", "data"}};
    s.extra = [data](const std::string&, long long, const StageResult&) { return std::vector<Cell>{data}; };
    return sweep(with_base(ctx, base), s);
  };
  Problem uniform = ctx.base;
  uniform.distribution = Distribution::uniform;
  uniform.params.erase("input");
  Problem seed003 = uniform;
  seed003.distribution = Distribution::small_range;
  Table t = one(uniform, "uniform");
  const Table small = one(seed003, "003 [0, 50)");
  Table out(t.columns(), "radix-sort: the key width (--param end_bit), every sort and CUB given the same bits, n = " + size_name(n));
  for (const auto& r : t.rows()) out.add_row(r);
  for (const auto& r : small.rows()) out.add_row(r);
  out.add_note("every stage sorts bits [0, end_bit) and CUB gets the same end_bit (a fair comparison); split-global sorts "
               "min(K, end_bit) bits, K from its find-max (6 for seed 003's [0, 50))");
  out.add_note("seed 003's data needs 6 bits: a sort given end_bit = 32 makes 32 / r passes where 6 / r would do");
  return out;
}

// ---- 5. the distributions -------------------------------------------------------------------------------

struct DistCase {
  const char* name;
  KeyType key;
  Distribution dist;
  const char* input;  // a value of --param input, or "dist"
};

Table dist_sweep(const ExperimentContext& ctx) {
  const std::vector<DistCase> cases{
      {"uniform", KeyType::u32, Distribution::uniform, "dist"},
      {"003 [0, 50)", KeyType::u32, Distribution::small_range, "dist"},
      {"all-equal", KeyType::u32, Distribution::all_equal, "dist"},
      {"few-unique", KeyType::u32, Distribution::few_unique, "dist"},
      {"sorted", KeyType::u32, Distribution::sorted, "dist"},
      {"reverse", KeyType::u32, Distribution::reverse, "dist"},
      {"entropy-reduced", KeyType::u32, Distribution::uniform, "entropy-reduced"},
      {"negative i32", KeyType::i32, Distribution::uniform, "mixed-sign"},
      {"f32 +-0, +-inf, NaN", KeyType::f32, Distribution::uniform, "float-specials"},
  };
  const std::size_t n = ctx.quick ? std::size_t{1} << 16 : ctx.base.n;
  std::vector<Column> columns{{"stage", "stage"}, {"data", "data"}, {"key", "key"}, {"n", "n"}};
  for (auto& c : result_columns()) columns.push_back(c);
  columns.push_back({"vs_cub", "vs CUB", 3});
  Table t(columns, "radix-sort: distributions (u32 unless named), n = " + size_name(n));
  const Knob* input = ctx.lab->find_knob("input");
  const std::vector<std::string> stages{"split-scan-fused", "split-onepass", "digit4", "onesweep"};
  for (const auto& c : cases) {
    Problem p = ctx.base;
    p.n = n;
    p.distribution = c.dist;
    p = p.with("key", static_cast<long long>(c.key)).with("input", input ? input->parse(c.input) : 0);
    progress("dist-sweep", c.name);
    const StageResult cub = time_stage(ctx, "cub-sort", p);  // refuses f32 (CUB's -0 == +0): no ratio
    auto row = [&](const std::string& id, const StageResult& r) {
      std::vector<Cell> cells{id, std::string(c.name), std::string(rm::to_string(c.key)), static_cast<std::int64_t>(n)};
      for (auto& x : result_cells(r)) cells.push_back(std::move(x));
      std::optional<double> ratio;
      if (cub.timing && r.timing && r.timing->median_ms > 0) ratio = cub.timing->median_ms / r.timing->median_ms;
      cells.push_back(cell(ratio));
      t.add_row(std::move(cells));
    };
    row("cub-sort", cub);
    for (const auto& id : stages) row(id, time_stage(ctx, id, p));
  }
  t.add_note("all-equal: every key of a warp has one digit (shared-atomic contention, not bank conflicts); "
             "few-unique and entropy-reduced: skewed digits; sorted: every tile holds few digits");
  t.add_note("cub-sort refuses f32 (it orders -0.0 and +0.0 as equal; the lab does not: README.md, \"The problem\")");
  return t;
}

// ---- 6. the model (CPU) ---------------------------------------------------------------------------------

Table model_table(const ExperimentContext& ctx) {
  const Machine& m = machine();
  const rm::Problem p = rl::model_problem(ctx.base, false);  // --param end_bit (question 6 sets 20)
  Table t({{"stage", "stage"},
           {"n", "n"},
           {"passes", "passes"},
           {"launches", "launches R"},
           {"host_syncs", "host syncs"},
           {"bytes_per_key", "B/key", 1},
           {"model_ms", "model ms", 4},
           {"crossover_n", "crossover n"},
           {"sectors_per_key", "sectors/written key", 3}},
          "radix-sort: the model of every sort at n = " + size_name(ctx.base.n) + " (u32 keys, end_bit " +
              std::to_string(p.end_bit) + ")");
  for (const auto& id : kSorts) {
    const rm::Stage s = *rm::parse_stage(id);
    // Sectors per written key: split-onepass writes each warp's keys of one item in two runs;
    // digit4 after its reorder, per store instruction; onesweep after its reorder, per run (the
    // others: not modelled).
    Cell sectors{};
    if (s == rm::Stage::digit4) sectors = rm::digit4_sorted_sectors_per_key();
    if (s == rm::Stage::onesweep) sectors = rm::expected_sectors_per_written_key(p.radix_bits, radix_sort::kOnesweepTile);
    if (s == rm::Stage::split_onepass) sectors = rm::expected_sectors_per_written_key(1, 32);
    const double x = rm::launch_bound_crossover(s, p, m.sigma_us, m.gbps);
    t.add_row({id, static_cast<std::int64_t>(p.n), static_cast<std::int64_t>(rm::passes(s, p)),
               static_cast<std::int64_t>(rm::launches(s, p)), static_cast<std::int64_t>(rm::host_syncs(s, p)),
               rm::bytes_per_key(s, p), rm::predicted_ms(s, p, m.sigma_us, m.gbps, m.sync_us),
               std::isfinite(x) ? Cell{static_cast<std::int64_t>(x)} : Cell{std::string("never")}, sectors});
  }
  rm::Problem p003;
  p003.n = std::size_t{1} << 15;
  p003.data_bits = 6;
  t.add_note("seed 003's case (n = 2^15, K = 6): split-global " + std::to_string(rm::launches(rm::Stage::split_global, p003)) +
             " launches and " + std::to_string(rm::host_syncs(rm::Stage::split_global, p003)) + " host round trips");
  t.add_note("split-global here sorts min(K, end_bit) = " + std::to_string(rm::passes(rm::Stage::split_global, p)) +
             " bits (uniform keys: K = 32); " + m.note());
  t.add_note("sectors/written key: digit4 reorders each 4096-key chunk by digit and writes 32 sorted positions per store "
             "instruction (written from registers instead, ~16 runs per instruction: " +
             std::to_string(std::lround(1000 * rm::digit4_scatter_sectors_per_key()) / 1000.0).substr(0, 5) +
             "); onesweep reorders its tile by digit (runs of tile/2^r keys); ideal 0.125");
  return t;
}

// ---- 7. the bank model (CPU) ---------------------------------------------------------------------------

// digit4's shared-memory requests over a whole run at n (the problem's keys, u32, 32 bits: what
// Nsight Compute sees of the stage digit4), for both counter layouts. The row "digit4" with
// counters = 0 / 1 is what measure.toml's ncu sweep holds ncu to (model_excess, a whole run of
// digit4: the downsweep's reorder included). The upsweep column is the counting that the stage
// digit4-count grades conflict-free; the reorder column is the part of the downsweep column that
// the reorder stores make (all of it: the downsweep's other requests are conflict-free).
Table bank_model(const ExperimentContext& ctx) {
  std::vector<Column> columns{{"stage", "stage"},          {"counters", "counters"},         {"n", "n"},
                              {"passes", "passes"},        {"upsweep_excess", "upsweep"},    {"downsweep_excess", "downsweep"},
                              {"model_excess", "excess (run)"}, {"max_way", "max way"},      {"reorder_excess", "of it: reorder"},
                              {"count_excess", "digit4-count"}, {"label", "label"}};
  Table t(columns, "radix-sort: the bank model of digit4 (excess shared wavefronts), n = " + size_name(ctx.base.n));
  struct Data {
    std::string suffix;
    Distribution dist;
  };
  const std::vector<Data> data = ctx.quick ? std::vector<Data>{{"", Distribution::uniform}}
                                           : std::vector<Data>{{"", Distribution::uniform},
                                                               {" (all-equal)", Distribution::all_equal},
                                                               {" (few-unique)", Distribution::few_unique}};
  const int end_bit = static_cast<int>(ctx.base.param("end_bit", 32));
  for (const auto& d : data)
    for (int layout : {0, 1}) {
      Problem p = ctx.base.with("counters", layout);
      p.distribution = d.dist;
      p.params.erase("input");
      // end_bit as given (default 32): the rubric's conflicts run sorts 8 bits (2 passes), and
      // `--param end_bit=8` gives the model of exactly that run.
      p = p.with("key", 0).with("end_bit", end_bit).with("pairs", 0);
      const auto keys = rl::keys_of(p);
      const rm::Problem m = rl::model_problem(p, false);
      const int passes = rm::passes(rm::Stage::digit4, m);
      long up = 0, down = 0, reorder = 0, count = 0;
      int max_way = 0;
      for (int pass = 0; pass < passes; ++pass) {
        const auto u = rm::digit4_upsweep_summary(*keys, KeyType::u32, end_bit, pass, m, static_cast<CounterLayout>(layout));
        const auto w = rm::digit4_downsweep_summary(*keys, KeyType::u32, end_bit, pass, m);
        up += u.excess();
        down += w.excess();
        max_way = std::max({max_way, u.max_way, w.max_way});
        reorder += rm::digit4_reorder_summary(*keys, KeyType::u32, end_bit, pass, m).excess();
        count += rm::digit4_upsweep_summary(*keys, KeyType::u32, end_bit, pass, m, static_cast<CounterLayout>(layout),
                                            rm::CountedKeys::unsorted)
                     .excess();
      }
      t.add_row({"digit4" + d.suffix, static_cast<std::int64_t>(layout), static_cast<std::int64_t>(p.n),
                 static_cast<std::int64_t>(passes), static_cast<std::int64_t>(up), static_cast<std::int64_t>(down),
                 static_cast<std::int64_t>(up + down), static_cast<std::int64_t>(max_way),
                 static_cast<std::int64_t>(reorder), static_cast<std::int64_t>(count),
                 "digit4, " + std::string(layout == 0 ? "lane" : "thread") + " counters" + d.suffix});
    }
  t.add_note("counters 0 = lane (counts[d * 32 + lane]: the layout digit4-count is graded conflict-free with), 1 = "
             "thread (counts[lane * 16 + d]: up to 16-way when a warp's keys share a digit)");
  t.add_note("excess (run) = upsweep + downsweep over every pass (the spine is conflict-free); uniform keys, seed " +
             std::to_string(ctx.base.seed) + ": the keys `gpulab run --stage digit4 --n " + std::to_string(ctx.base.n) +
             "` sorts");
  t.add_note("of it: reorder = the downsweep's stores of each key at its padded rank in the chunk sorted by digit "
             "(Satish et al.'s local sort; onesweep's reorder has the same kind): its only conflicts; the counting "
             "(upsweep) is digit4's pass input's; digit4-count = the stage digit4-count, which counts the unsorted "
             "input at every shift (what ncu profiles for it: the same 0 with lane counters, other counts with thread "
             "ones)");
  t.add_note(gpu_available() ? "tiles from this GPU's SM count" : "no GPU: tiles from 132 SMs (an H100)");
  if (ctx.base.param("draw", 0) != 0) {
    // The handout's drawings: one counting step with every lane on one digit, both layouts.
    const std::vector<int> equal(32, 5);
    for (auto layout : {CounterLayout::per_lane, CounterLayout::per_thread}) {
      const auto requests = rm::digit_count_requests(4, layout, equal);
      add_drawing(t, std::string(layout == CounterLayout::per_lane ? "per-lane" : "per-thread") +
                         " counters, every lane on digit 5: " + requests.front().step,
                  requests.front().access);
    }
  }
  return t;
}

}  // namespace

namespace radix_sort {

std::vector<gpulab::Experiment> make_experiments() {
  return {
      {"block-sweep", "seed 003's block sweep: n = 2^15 keys in [0, 50), block 32 .. 1024, beside the model's sigma R", true,
       block_sweep},
      {"size-sweep", "every sort, CUB, Thrust and a merge sort against n = 2^6 .. 2^28 (u32 keys)", true, size_sweep},
      {"bits-sweep", "onesweep's digit width r = 1, 2, 4, 6, 8 beside CUB (r = 8)", true, bits_sweep},
      {"width-sweep", "the key width end_bit, CUB given the same bits; uniform and seed 003's [0, 50)", true, width_sweep},
      {"dist-sweep", "distributions: uniform, [0, 50), equal, few, sorted, reverse, skewed, negative i32, f32 specials",
       true, dist_sweep},
      {"model", "the model of every sort at n: passes, launches, host syncs, bytes per key, time, crossover (CPU)", false,
       model_table},
      {"bank-model", "digit4's excess shared wavefronts per counter layout, whole run at n (CPU; --param draw=1 draws)",
       false, bank_model, {"draw"}},
  };
}

}  // namespace radix_sort
