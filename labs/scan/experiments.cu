// The scan lab's experiments (`gpulab run scan --experiment ID`): the size, block, alpha and colors
// sweeps and the bank-model table. Each prints a table and writes CSV; the stages they time come
// from the stage table in lab.cu. Do not edit.
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/cuda_check.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/experiments.hpp"
#include "scan.cuh"
#include "scan_model.hpp"

namespace {

using namespace gpulab;

Table size_sweep(const ExperimentContext& ctx) {
  std::vector<std::string> ids;
  for (const auto& s : ctx.lab->stages)
    if (s.where == Where::gpu) ids.push_back(s.id);
  std::vector<long long> sizes;
  for (int k = ctx.quick ? 10 : 6; k <= (ctx.quick ? 16 : 28); ++k) sizes.push_back(1LL << k);
  auto compaction = [](const std::string& id) { return id == "compact" || id == "cub-compact"; };
  Sweep s{"size-sweep", "scan: time against n (every GPU stage and baseline)", ids, "n", sizes};
  // One "vs CUB" column: compaction against cub::DeviceSelect, everything else against DeviceScan.
  s.peers = {{"cub", "vs_cub", "vs CUB", [=](const std::string& id) { return !compaction(id); }},
             {"cub-compact", "vs_cub", "vs CUB", compaction}};
  s.elements_per_s = true;
  Table t = sweep(ctx, s);
  t.add_note("GB/s counts the model's bytes (8n for a scan, 9n colored, 4(n + kept) compaction)");
  t.add_note("vs CUB = CUB time / stage time (compaction: cub::DeviceSelect::If, the rest: cub::DeviceScan::ExclusiveSum)");
  return t;
}

Table block_sweep(const ExperimentContext& ctx) {
  const std::vector<long long> blocks =
      ctx.quick ? std::vector<long long>{64, 256, 1024} : std::vector<long long>{32, 64, 128, 256, 512, 1024};
  return sweep(ctx, {"block-sweep", "scan: threads per block (--param block), n = " + size_name(ctx.base.n),
                     {"naive", "work-efficient", "work-efficient-compact-threads", "shared", "shared-conflict-free",
                      "three-round", "single-pass", "compact"},
                     "block", blocks, ctx.quick ? std::optional<std::size_t>(std::size_t{1} << 16) : std::nullopt});
}

// The AGPU multiplicity of alpha-matrix as CUDA counts it: blocks of kAlphaWarpsPerBlock warps
// with alpha * 33 ints of shared memory per warp (the layout scan.cuh prescribes).
__global__ void alpha_occupancy_probe(int* sink) {
  extern __shared__ int matrices[];
  matrices[threadIdx.x] = threadIdx.x;
  if (sink) sink[threadIdx.x] = matrices[threadIdx.x ^ 1];
}

Table alpha_sweep(const ExperimentContext& ctx) {
  int max_threads_per_sm = 2048;
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, 0));
  std::vector<long long> alphas;
  if (ctx.quick) alphas = {1, 4, 16, 32};
  else
    for (int a = 1; a <= 32; ++a) alphas.push_back(a);
  Table t = sweep(
      ctx, {"alpha-sweep", "alpha-matrix: rows alpha of the alpha x (b+1) matrix (seed 004 §6, Fig. 12), n = " + size_name(ctx.base.n),
            {"alpha-matrix"}, "alpha", alphas, ctx.quick ? std::optional<std::size_t>(std::size_t{1} << 16) : std::nullopt,
            {{"shared_bytes_per_block", "smem/block"}, {"blocks_per_sm", "blocks/SM"}, {"occupancy", "occupancy", 3},
             {"conflict_way", "conflict way"}, {"seed_bound", "seed bound"}},
            [&](const std::string&, long long a, const StageResult&) -> std::vector<Cell> {
              const std::size_t shared = scan::alpha_matrix_shared_bytes(static_cast<int>(a));
              int blocks = 0;
              GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, alpha_occupancy_probe,
                                                                              scan::kAlphaWarpsPerBlock * 32, shared));
              const double occupancy = static_cast<double>(blocks * scan::kAlphaWarpsPerBlock * 32) / max_threads_per_sm;
              const auto model = scan::model::summarize(scan::model::alpha_load_requests(static_cast<int>(a)));
              return {static_cast<std::int64_t>(shared), static_cast<std::int64_t>(blocks), occupancy,
                      static_cast<std::int64_t>(model.max_way),
                      static_cast<std::int64_t>(scan::model::alpha_conflict_bound(static_cast<int>(a)))};
            }});
  if (const auto device = query_device()) t.add_note("device: " + device->name);
  t.add_note("occupancy: resident threads / max per SM for the prescribed layout (4 warps, alpha * 33 ints each)");
  t.add_note("conflict way: bank model of the load into the matrix; seed bound: min(ceil(b/alpha), alpha)");
  return t;
}

Table colors_sweep(const ExperimentContext& ctx) {
  std::vector<long long> ds;
  if (ctx.quick) ds = {1, 2, 8, 9, 16};  // 9: the kink of the 128-bit model (measure.toml's quick ncu sweep joins d = 1, 9, 16)
  else
    for (int d = 1; d <= scan::kMaxColors; ++d) ds.push_back(d);
  Table t = sweep(
      ctx, {"colors-sweep", "colored prefix sums against d (seed 000 §4, Fig. 2), n = " + size_name(ctx.base.n),
            {"colored-direct", "colored-conflict-free"}, "colors", ds,
            ctx.quick ? std::optional<std::size_t>(std::size_t{1} << 16) : std::nullopt,
            {{"model_excess_per_request", "excess/request"}, {"model_offset_excess", "excess/page"},
             {"model_max_way", "max way"}, {"model_128bit_excess", "excess/page 128-bit"}},
            [](const std::string& id, long long d, const StageResult&) -> std::vector<Cell> {
              const bool conflict_free = id == "colored-conflict-free";
              const auto model = scan::model::summarize(scan::model::colored_offset_requests(static_cast<int>(d), conflict_free));
              // The conflict-free walk (stride 17) stays 32-bit; the direct one compiles to 128-bit accesses.
              const long compiled = conflict_free ? model.excess()
                                                  : scan::model::summarize(scan::model::colored_direct_walk_128bit_requests(
                                                                               static_cast<int>(d)))
                                                        .excess();
              return {static_cast<std::int64_t>(model.worst_excess), static_cast<std::int64_t>(model.excess()),
                      static_cast<std::int64_t>(model.max_way), static_cast<std::int64_t>(compiled)};
            }});
  t.add_note("model columns: gpulab::analyze_bank_conflicts on the offset step's addresses (scan_model.cpp), per page of 1024");
  t.add_note("excess/page 128-bit: the walk as nvcc compiles it (LDS.128/STS.128); x n/1024 pages = ncu's count");
  t.add_note("measured excess wavefronts: ncu --section SourceCounters (README, 'Bank conflicts, measured')");
  return t;
}

// The request of `requests` named `step` (a logic_error if the model has none: the drawing's name
// went stale).
gpulab::WarpAccess request_named(const std::vector<scan::model::Request>& requests, const std::string& step) {
  for (const auto& r : requests)
    if (r.step == step) return r.access;
  throw std::logic_error("bank model: no request named '" + step + "'");
}

Table bank_model_table(const ExperimentContext& ctx) {
  using namespace scan::model;
  std::vector<Column> columns{{"pattern", "pattern"}, {"parameter", "parameter"}};
  for (auto& c : bank_columns()) columns.push_back(c);
  Table t(columns, "the bank model of every shared-memory access pattern in the lab (one block / one page)");
  auto row = [&](const std::string& pattern, const std::string& parameter, const std::vector<Request>& requests) {
    std::vector<Cell> cells{pattern, parameter};
    for (auto& c : bank_cells(summarize(requests))) cells.push_back(std::move(c));
    t.add_row(std::move(cells));
  };
  for (auto layout : {TreeLayout::plain, TreeLayout::seed003_macro, TreeLayout::padded})
    for (int b = 32; b <= 1024; b *= 2)
      row("tree scan " + to_string(layout), "block=" + std::to_string(b), tree_scan_requests(b, layout));
  for (int d : {1, 2, 4, 8, 16}) row("colored offsets direct", "d=" + std::to_string(d), colored_offset_requests(d, false));
  for (int d : {1, 2, 4, 8, 16})
    row("colored offsets conflict-free", "d=" + std::to_string(d), colored_offset_requests(d, true));
  for (int d : {1, 2, 8, 9, 16})
    row("colored direct walk 128-bit", "d=" + std::to_string(d), colored_direct_walk_128bit_requests(d));
  row("colored page staging", "-", colored_page_requests());
  for (int a : {1, 2, 4, 6, 7, 8, 16, 18, 32}) row("alpha-matrix load", "alpha=" + std::to_string(a), alpha_load_requests(a));
  if (ctx.base.param("draw", 0) != 0) {
    // The handout's drawings (RESULTS.md, "The bank model"), from the same requests as the rows.
    for (auto layout : {TreeLayout::plain, TreeLayout::padded})
      for (const char* step : {"up-sweep stride 2 left warp 0", "up-sweep stride 16 left warp 0"})
        add_drawing(t, "tree scan, " + to_string(layout) + ", block 256, " + step, request_named(tree_scan_requests(256, layout), step));
    add_drawing(t, "colored offsets direct, d = 8, j = 0", colored_offset_requests(8, false).front().access);
    add_drawing(t, "colored offsets conflict-free, d = 8, walk trans j = 0",
                request_named(colored_offset_requests(8, true), "walk trans j=0"));
  }
  return t;
}

}  // namespace

namespace scan {

std::vector<gpulab::Experiment> make_experiments() {
  return {
      {"size-sweep", "every GPU stage and baseline over n = 2^6 .. 2^28 (quick: 2^10 .. 2^16)", true, size_sweep},
      {"block-sweep", "threads per block 32 .. 1024 for the stages that take --param block", true, block_sweep},
      {"alpha-sweep", "alpha-matrix: alpha = 1 .. 32, GB/s and occupancy (seed 004 Fig. 12)", true, alpha_sweep},
      {"colors-sweep", "colored prefix sums: d = 1 .. 16, time and the bank model (seed 000 Fig. 2)", true, colors_sweep},
      {"bank-model", "the bank model's wavefronts for every shared-memory pattern (CPU only; --param draw=1 draws the handout's)",
       false, bank_model_table, {"draw"}},
  };
}

}  // namespace scan
