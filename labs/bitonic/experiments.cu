// The bitonic lab's experiments (`gpulab experiment bitonic ID`): seed 002 Fig. 2 (time per phase at
// 10^7 and 2^24 beside CUB and Thrust, with launches, the model's bytes and its time), the launch
// counts checked by CUPTI at every size, the block-size sweep (R changes with the tile), the two
// pads, seed 002 Fig. 3 (pageable vs pinned transfers of 10^7 ints, with the registration cost); on
// the CPU the launch-count table beside 002's counts, "which tile did 002 use?", the bytes, the bank
// model every ncu count is held to, and occupancy for 002's register counts. Each prints a table
// and writes CSV; the stages come from the stage table in lab.cu. Do not edit.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "bitonic.cuh"
#include "bitonic_lab.hpp"
#include "bitonic_model.hpp"
#include "gpulab/cuda_check.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/experiments.hpp"
#include "gpulab/machine_model.hpp"

namespace {

using namespace gpulab;
namespace bm = bitonic::model;
namespace bl = bitonic::lab;
using bitonic::Pad;

const std::vector<std::string> kGpuStages{"phase0", "phase1", "phase2", "phase3", "phase4", "phase4-conflict-free",
                                          "phase5-fused"};
const std::vector<bm::Stage> kModelStages{bm::Stage::phase0, bm::Stage::phase1, bm::Stage::phase2, bm::Stage::phase3,
                                          bm::Stage::phase4, bm::Stage::phase4_conflict_free, bm::Stage::phase5_fused};

Cell count(long long v) { return static_cast<std::int64_t>(v); }

std::vector<long long> powers_of_two(int lo, int hi) {
  std::vector<long long> v;
  for (int k = lo; k <= hi; ++k) v.push_back(1LL << k);
  return v;
}

// The model's columns of a stage's row at size n on the context's knobs (empty for the baselines).
std::vector<Column> model_columns() {
  return {{"model_bytes", "model bytes", 0}, {"model_gbps", "model GB/s", 0}, {"predicted_ms", "model ms"}};
}
std::vector<Cell> model_cells(const std::string& id, const Problem& p, const StageResult& r) {
  const auto s = bm::parse_stage(id);
  if (!s || !bm::runs_on_gpu(*s)) return {Cell{}, Cell{}, Cell{}};
  const auto shape = bl::shape_for(p);
  const double bytes = bm::traffic(*s, p.n, shape).bytes;
  const LaunchMachine& m = launch_machine();
  Cell gbps;
  if (r.timing && r.timing->median_ms > 0) gbps = bytes / (r.timing->median_ms * 1e6);
  return {bytes, gbps, bm::predicted_ms(*s, p.n, shape, m.sigma_us, m.gbps)};
}

// ---- seed 002 Fig. 2: time per phase at 10^7 and 2^24 -------------------------------------------------------------

Table phases(const ExperimentContext& ctx) {
  const std::vector<long long> sizes = ctx.quick ? std::vector<long long>{100000, 1LL << 16} : std::vector<long long>{10000000, 1LL << 24};
  Sweep s{"phases", "seed 002 Fig. 2: time per phase (pad = " + std::string(bl::kPadNames[ctx.base.param("pad", 0)]) +
                        ", block = " + std::to_string(ctx.base.param("block", 512)) + ")",
          {"phase1", "phase2", "phase3", "phase4", "phase4-conflict-free", "phase5-fused", "cub-radix-sort", "thrust-sort"},
          "n", sizes};
  s.peers = {{"phase0", "vs_phase0", "vs phase0"}, {"cub-merge-sort", "vs_cub_merge", "vs CUB merge"}};
  s.launches = s.elements_per_s = true;
  s.extra_columns = model_columns();
  const Problem base = ctx.base;
  s.extra = [base](const std::string& id, long long n, const StageResult& r) {
    Problem p = base;
    p.n = static_cast<std::size_t>(n);
    return model_cells(id, p, r);
  };
  Table t = sweep(ctx, s);
  t.add_note("vs phase0 = phase 0's time / the stage's time (seed 002: phase 4 'nearly 2x'; the goal >= 1.8x at 2^24); "
             "vs CUB merge = cub::DeviceMergeSort::SortKeysCopy's time / the stage's (phase5-fused's goal: >= 0.5x)");
  t.add_note("GB/s counts 8n bytes (each key read and written once); model bytes = what the launches move, 2 x 4 x 2^L x R "
             "for pad = sentinel (10^7 keys pad to 2^24); model ms = R sigma + model bytes / copy roof, " + launch_machine().note());
  t.add_note("launches: CUPTI's count beside the model's R (bitonic_model.hpp: R0..R5)");
  return t;
}

// ---- launches: CUPTI against the model at every size ----------------------------------------------------------------

Table launch_check(const ExperimentContext& ctx) {
  Sweep s{"launch-check", "launches per run, CUPTI against the model (block = " + std::to_string(ctx.base.param("block", 512)) + ")",
          kGpuStages, "n", powers_of_two(ctx.quick ? 9 : 1, ctx.quick ? 16 : 22)};
  s.launches = true;
  s.extra_columns = {{"L", "L"}, {"t", "t"}};
  const Problem base = ctx.base;
  s.extra = [base](const std::string& id, long long n, const StageResult&) -> std::vector<Cell> {
    const auto st = bm::parse_stage(id);
    if (!st) return {Cell{}, Cell{}};
    return {count(bm::network_log2(static_cast<std::size_t>(n))), count(bm::tile_log2(*st, bl::shape_for(base)))};
  };
  Table t = sweep(ctx, s);
  t.add_note("model: the launch contract of bitonic.cuh; for L > t: R0 = R1 = L(L+1)/2, R2 = 1 + L(L+1)/2 - t(t+1)/2, "
             "R3 = R2 - (t - 1), R4 = 1 + (L - t)(L - t + 3)/2; L <= t: one launch (the tile sort)");
  return t;
}

// ---- block size: 002 §V-A, with R changing with the tile ------------------------------------------------------------

Table block_sweep(const ExperimentContext& ctx) {
  const std::size_t n = ctx.quick ? std::size_t{1} << 16 : ctx.base.n;
  Sweep s{"block-sweep", "threads per block (seed 002 §V-A: 256 best on an L40S), n = " + size_name(n) +
                             ": the tile is 2 x block keys, so R changes with it",
          {"phase0", "phase1", "phase2", "phase3", "phase4", "phase4-conflict-free"}, "block", powers_of_two(6, 10), n};
  s.peers = {{"cub-merge-sort", "vs_cub_merge", "vs CUB merge"}};
  s.launches = true;
  s.extra_columns = {{"t", "t"}, {"model_bytes", "model bytes", 0}};
  const Problem base = ctx.base;
  s.extra = [base, n](const std::string& id, long long block, const StageResult&) -> std::vector<Cell> {
    const auto st = bm::parse_stage(id);
    if (!st) return {Cell{}, Cell{}};
    Problem p = base.with("block", block);
    return {count(bm::tile_log2(*st, bl::shape_for(p))), bm::traffic(*st, n, bl::shape_for(p)).bytes};
  };
  Table t = sweep(ctx, s);
  t.add_note("launches: CUPTI beside the model; a larger tile takes levels out of global memory: R2..R4 fall as t grows");
  return t;
}

// ---- the two pads at 10^7: the bytes of sentinel padding ------------------------------------------------------------

Table pad_sweep(const ExperimentContext& ctx) {
  const std::size_t n = ctx.quick ? 100003 : 10000000;
  Sweep s{"pad", "pad = sentinel (a padded copy of 2^L keys) vs pad = virtual (partners >= n skipped), n = " + size_name(n),
          kGpuStages, "pad", {bl::sentinel, bl::virtual_pad}, n};
  s.launches = true;
  s.extra_columns = model_columns();
  const Problem base = ctx.base;
  s.extra = [base, n](const std::string& id, long long pad, const StageResult& r) {
    Problem p = base.with("pad", pad);
    p.n = n;
    return model_cells(id, p, r);
  };
  Table t = sweep(ctx, s);
  t.add_note("10^7 keys pad to 2^24: sentinel moves about 1.7x the bytes of virtual in the model (the same launches); "
             "model ms at " + launch_machine().note());
  return t;
}

// ---- seed 002 Fig. 3: pageable vs pinned transfers, and what pinning costs ------------------------------------------------

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <class F>
double time_host_ms(F&& f, int reps) {
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median_of(ms);
}

Table transfer(const ExperimentContext& ctx) {
  const std::size_t n = ctx.quick ? std::size_t{1} << 20 : 10000000;
  const std::size_t bytes = n * sizeof(std::int32_t);
  const int reps = ctx.quick ? 3 : std::max(3, ctx.measure.repetitions);
  Table t({{"memory", "host memory"}, {"direction", "direction"}, {"n", "n"}, {"median_ms", "ms"}, {"gbps", "GB/s"},
           {"setup_ms", "setup ms"}},
          "seed 002 Fig. 3: host <-> device copies of " + size_name(n) + " int32 keys, pageable vs pinned");
  std::int32_t* device = nullptr;
  GPULAB_CUDA_CHECK(cudaMalloc(&device, bytes));
  std::vector<std::int32_t> pageable(n, 1);
  auto copy = [&](void* host, bool to_device) {
    if (to_device) GPULAB_CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
    else GPULAB_CUDA_CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
  };
  auto row = [&](const std::string& memory, void* host, double setup_ms) {
    for (bool to_device : {true, false}) {
      copy(host, to_device);  // warm-up
      const double ms = time_host_ms([&] { copy(host, to_device); }, reps);
      t.add_row({memory, std::string(to_device ? "H2D" : "D2H"), count(static_cast<long long>(n)), ms,
                 static_cast<double>(bytes) / (ms * 1e6), setup_ms});
    }
  };
  row("pageable (std::vector)", pageable.data(), 0.0);
  // cudaHostRegister pins the vector's pages in place: what seed 002 left out of its comparison.
  const double register_ms = time_host_ms(
      [&] {
        GPULAB_CUDA_CHECK(cudaHostRegister(pageable.data(), bytes, cudaHostRegisterDefault));
        GPULAB_CUDA_CHECK(cudaHostUnregister(pageable.data()));
      },
      reps);
  GPULAB_CUDA_CHECK(cudaHostRegister(pageable.data(), bytes, cudaHostRegisterDefault));
  row("pinned (cudaHostRegister)", pageable.data(), register_ms);
  GPULAB_CUDA_CHECK(cudaHostUnregister(pageable.data()));
  std::int32_t* pinned = nullptr;
  const double alloc_ms = time_host_ms(
      [&] {
        GPULAB_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
        GPULAB_CUDA_CHECK(cudaFreeHost(pinned));
      },
      reps);
  GPULAB_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
  std::fill(pinned, pinned + n, 1);
  row("pinned (cudaMallocHost)", pinned, alloc_ms);
  GPULAB_CUDA_CHECK(cudaFreeHost(pinned));
  GPULAB_CUDA_CHECK(cudaFree(device));
  t.add_note("ms: the median of " + std::to_string(reps) + " synchronous cudaMemcpy calls (host clock); setup ms: pinning "
             "the same bytes once (cudaHostRegister + unregister, or cudaMallocHost + cudaFreeHost): a one-time cost "
             "seed 002 does not count");
  t.add_note("a pinned copy pays off when the pages are reused: compare the setup with the time it saves per copy");
  return t;
}

// ---- CPU: the launch-count table, beside seed 002's counts ------------------------------------------------------------

Table launches_table(const ExperimentContext&) {
  Table t({{"L", "L"}, {"t", "t"}, {"block", "block"}, {"R0", "R0 = R1"}, {"R2", "R2"}, {"R3", "R3"}, {"R4", "R4"},
           {"R5", "R5 (t=14, q=9)"}, {"seed002", "002 (L=24)"}},
          "launches per run for n = 2^L (bitonic.cuh's contract; tile T = 2^t = 2 x block keys)");
  for (int L = 10; L <= 28; ++L)
    for (int tt = 9; tt <= 11; ++tt) {
      Cell seed;
      if (L == 24 && tt == 10) seed = std::string("299 / 234 / 224 / 119");
      t.add_row({count(L), count(tt), count(1LL << (tt - 1)), count(bm::formula_launches(bm::Stage::phase0, L, tt)),
                 count(bm::formula_launches(bm::Stage::phase2, L, tt)), count(bm::formula_launches(bm::Stage::phase3, L, tt)),
                 count(bm::formula_launches(bm::Stage::phase4, L, tt)),
                 count(bm::formula_launches(bm::Stage::phase5_fused, L, bitonic::kFusedTileLog2, bitonic::kFusedStrides)), seed});
    }
  t.add_note("R0 = R1 = L(L+1)/2; R2 = 1 + L(L+1)/2 - t(t+1)/2; R3 = R2 - (t - 1); R4 = 1 + (L - t)(L - t + 3)/2; "
             "R5 = 1 + sum_{d=1..L-t} (ceil(d/q) + 1) (launch-check holds CUPTI to them)");
  t.add_note("seed 002 reports 299, 234, 224 ('-10') and 119 for phases 0, 2, 3, 4 at 2^24: which-tile asks which t fits them");
  return t;
}

Table which_tile(const ExperimentContext&) {
  Table t({{"stage", "stage"}, {"seed002", "002's count"}, {"exact_t", "t: formula = count"},
           {"minus_one_t", "t: formula = count + 1"}, {"R_t10", "R at t = 10"}, {"R_t11", "R at t = 11"}},
          "which tile did seed 002 use? Its launch counts at 2^24 against the formulas, t = 1 .. 23");
  auto list = [](const std::vector<int>& ts) -> Cell {
    if (ts.empty()) return std::string("none");
    if (ts.size() >= 23) return std::string("every t");
    std::string s;
    for (int x : ts) s += (s.empty() ? "" : " ") + std::to_string(x);
    return s;
  };
  for (bm::Stage s : {bm::Stage::phase0, bm::Stage::phase2, bm::Stage::phase3, bm::Stage::phase4}) {
    const long c = *bm::seed002_launches(s);
    t.add_row({std::string(bm::to_string(s)), count(c), list(bm::tiles_matching_seed002(s, 0)),
               list(bm::tiles_matching_seed002(s, 1)), count(bm::formula_launches(s, 24, 10)),
               count(bm::formula_launches(s, 24, 11))});
  }
  t.add_note("no tile size gives any of 002's counts exactly; each is the formula minus one, phases 2 and 3 with "
             "t = 11 (1024 threads) and phase 4 with t = 10 (512 threads, cuda-samples' 1024-key tile)");
  return t;
}

// ---- CPU: bytes and I/O per stage -------------------------------------------------------------------------------------

Table bytes_table(const ExperimentContext& ctx) {
  Table t({{"stage", "stage"}, {"pad", "pad"}, {"n", "n"}, {"launches", "R"}, {"model_bytes", "bytes", 0},
           {"agpu_ios", "AGPU I/Os", 0}, {"vs_phase0", "bytes vs phase0", 2}, {"predicted_ms", "model ms", 3}},
          "the model's global traffic per run (block = " + std::to_string(ctx.base.param("block", 512)) + ")");
  const std::vector<std::size_t> sizes = ctx.quick ? std::vector<std::size_t>{100000, std::size_t{1} << 16}
                                                   : std::vector<std::size_t>{10000000, std::size_t{1} << 24};
  // The machine of the estimate: an H200 (sigma 3.0 us per launch, a 4.23 TB/s device-to-device copy).
  constexpr double kSigmaUs = 3.0, kGbps = 4230.0;
  for (std::size_t n : sizes)
    for (int pad : {bl::sentinel, bl::virtual_pad}) {
      const auto shape = bl::shape_for(ctx.base.with("pad", pad));
      const double phase0 = bm::traffic(bm::Stage::phase0, n, shape).bytes;
      for (bm::Stage s : kModelStages) {
        const auto tr = bm::traffic(s, n, shape);
        t.add_row({std::string(bm::to_string(s)), std::string(bl::kPadNames[pad]), count(static_cast<long long>(n)),
                   count(bm::launches(s, n, shape)), tr.bytes, tr.agpu_ios, tr.bytes / phase0,
                   bm::predicted_ms(s, n, shape, kSigmaUs, kGbps)});
      }
    }
  t.add_note("bytes: reads + writes of every launch (sentinel: 2^L keys per launch, the first reading n and the last "
             "writing n; virtual: keys below n, a skipped comparator moves nothing); for n = 2^L both are 2 x 4 x n x R");
  t.add_note("AGPU I/Os: blocks of 32 keys (seed 004); model ms = R sigma + bytes / BW on an H200 "
             "(sigma = 3.0 us, 4230 GB/s): a memory-only bound (the tile kernels' own work is not in it)");
  return t;
}

// ---- CPU: the bank model ----------------------------------------------------------------------------------------------

// Per stage and block size, the excess of one block of each kernel kind and of a whole run at n
// (measure.toml's ncu sweep holds Nsight Compute to model_excess).
Table bank_model(const ExperimentContext& ctx) {
  const std::size_t n = ctx.base.n;
  std::vector<Column> columns{{"stage", "stage"}, {"block", "block"}, {"n", "n"}, {"kernel", "kernel (one block)"}};
  for (auto& c : bank_columns()) columns.push_back(c);
  columns.push_back({"closed_form", "closed form"});
  columns.push_back({"model_excess", "excess (run)"});
  Table t(columns, "the bank model of every shared-memory kernel, one block each; excess over a run at n = " + size_name(n));
  for (bm::Stage s : {bm::Stage::phase1, bm::Stage::phase2, bm::Stage::phase3, bm::Stage::phase4, bm::Stage::phase4_conflict_free})
    for (int block = 64; block <= 1024; block *= 2) {
      const auto shape = bl::shape_for(ctx.base.with("block", block));
      const int tl = bm::tile_log2(s, shape);
      const long run = bm::predicted_excess(s, n, shape).value_or(0);
      // one representative block per kernel kind: the tile sort of a full tile, a tile merge, a staged stride 1
      std::vector<std::pair<std::string, bm::Launch>> kinds;
      if (s == bm::Stage::phase1) kinds.push_back({"staged-step, stride 1", bm::Launch{bm::Kernel::staged_step, 1, 0, 0}});
      else {
        kinds.push_back({"tile-sort, levels 1.." + std::to_string(tl), bm::Launch{bm::Kernel::tile_sort, tl, 0, 0}});
        if (s != bm::Stage::phase2) kinds.push_back({"tile-merge", bm::Launch{bm::Kernel::tile_merge, tl + 1, tl - 1, 0}});
      }
      for (const auto& [name, launch] : kinds) {
        std::vector<Cell> row{std::string(bm::to_string(s)), count(block), count(static_cast<long long>(n)), name};
        for (auto& c : bank_cells(gpulab::summarize(bm::block_requests(s, launch, shape)))) row.push_back(std::move(c));
        Cell closed;
        if (s != bm::Stage::phase1 && s != bm::Stage::phase4_conflict_free)
          closed = count(launch.kernel == bm::Kernel::tile_sort ? bm::textbook_tile_sort_excess(tl) : bm::textbook_tile_merge_excess(tl));
        if (s == bm::Stage::phase4_conflict_free) closed = count(0);
        row.push_back(closed);
        row.push_back(count(run));
        t.add_row(std::move(row));
      }
    }
  t.add_note("the textbook step (a thread per pair lo = tau with a 0 bit inserted at e, hi = lo + 2^e): for strides "
             "j < 32 a warp's 32 lower keys span 64 words, two per bank: 2-way on each of 2 loads and 2 stores, 4 excess "
             "wavefronts per warp per step; j >= 32: none");
  t.add_note("closed form: 4 (T/64)(15 + 5(t - 5)) per tile-sort block and 4 (T/64) 5 per tile-merge block; "
             "excess (run): every launch's blocks x its block's excess (what Nsight Compute should count); phase5-fused: "
             "not modelled (your design)");
  if (ctx.base.param("draw", 0) != 0) {
    add_drawing(t, "textbook step, stride 1 (e = 0), warp 0: 2-way", bm::shared_step_requests(64, 0)[0].access);
    add_drawing(t, "textbook step, stride 16 (e = 4), warp 0: 2-way", bm::shared_step_requests(64, 4)[0].access);
    add_drawing(t, "textbook step, stride 32 (e = 5), warp 0: conflict-free", bm::shared_step_requests(64, 5)[0].access);
  }
  return t;
}

// ---- CPU: occupancy for seed 002's register counts -------------------------------------------------------------------

Table occupancy_table(const ExperimentContext&) {
  Table t({{"kernel", "kernel"}, {"threads", "threads"}, {"shared_bytes", "shared B"}, {"registers", "registers"},
           {"blocks_per_sm", "blocks/SM"}, {"warps_per_sm", "warps/SM"}, {"occupancy", "occupancy", 2},
           {"limited_by", "limited by"}},
          "occupancy on an sm_90 SM (64 warps, 32 blocks, 64 K registers, 228 KiB shared) for seed 002's register counts");
  struct Kind {
    std::string name;
    bm::Stage stage;
    bm::Kernel kernel;
  };
  const Kind kinds[] = {{"global step (phase0)", bm::Stage::phase0, bm::Kernel::global_step},
                        {"staged step (phase1)", bm::Stage::phase1, bm::Kernel::staged_step},
                        {"tile sort / merge (phase2-4)", bm::Stage::phase4, bm::Kernel::tile_merge},
                        {"tile sort / merge (phase5-fused: the reference)", bm::Stage::phase5_fused, bm::Kernel::tile_merge}};
  for (const Kind& k : kinds)
    for (int block : {64, 128, 256, 512, 1024}) {
      bm::Shape shape;
      shape.block = block;
      const int threads = bm::threads_per_block(k.stage, k.kernel, shape);
      if (k.stage == bm::Stage::phase5_fused && block != bitonic::kFusedThreads) continue;
      const int shared = bm::shared_bytes(k.stage, k.kernel, shape);
      for (int regs : {20, 32, 40, 62, 64}) {
        const auto o = bm::occupancy(threads, regs, shared);
        t.add_row({k.name, count(threads), count(shared), count(regs), count(o.blocks_per_sm), count(o.warps_per_sm),
                   o.occupancy, o.limited_by});
      }
    }
  t.add_note("registers: seed 002 §IV-C (62 -> 20) and §V-C (40 -> 20) for its shared-memory kernel, 32 and 64 for "
             "comparison; find your kernels' counts with nvcc -Xptxas -v (or ncu's launch__registers_per_thread)");
  t.add_note("registers are allocated per warp in units of 256; 1 KiB of shared memory is reserved per block");
  return t;
}

}  // namespace

namespace bitonic {

std::vector<gpulab::Experiment> make_experiments() {
  return {
      {"phases", "seed 002 Fig. 2: every phase at 10^7 and 2^24 beside CUB and Thrust, launches and model bytes", true, phases},
      {"launch-check", "launches per run, CUPTI against the model, n = 2^1 .. 2^22", true, launch_check},
      {"block-sweep", "block = 64 .. 1024 for phases 0-4 (seed 002 §V-A), R with the tile", true, block_sweep},
      {"pad", "pad = sentinel vs virtual at 10^7 keys: time, launches, model bytes", true, pad_sweep},
      {"transfer", "seed 002 Fig. 3: pageable vs pinned copies of 10^7 ints, with the cost of pinning", true, transfer},
      {"launches", "the launch-count table L = 10 .. 28, t = 9, 10, 11 (CPU)", false, launches_table},
      {"which-tile", "seed 002's counts against the formulas: which tile did it use? (CPU)", false, which_tile},
      {"bytes", "the model's bytes and AGPU I/Os per stage at 10^7 and 2^24, both pads (CPU)", false, bytes_table},
      {"bank-model", "the bank model's excess wavefronts per kernel and run (CPU; --param draw=1 draws requests)", false,
       bank_model, {"draw"}},
      {"occupancy", "occupancy of each kernel for seed 002's register counts (CPU)", false, occupancy_table},
  };
}

}  // namespace bitonic
