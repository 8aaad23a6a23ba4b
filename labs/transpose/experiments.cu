// The transpose lab's experiments (`gpulab run transpose --experiment ID`): the machine-model
// measurements of seed 000 (bandwidth setups, vector width, latency lambda, access size B, barrier
// cost sigma) and the bank-model table. Each prints a table and writes CSV. Do not edit.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/bank_model.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/experiments.hpp"
#include "gpulab/machine_model.hpp"
#include "transpose_model.hpp"

namespace {

using namespace gpulab;

std::size_t buffer_bytes(const ExperimentContext& ctx, std::size_t full_mib, std::size_t quick_mib) {
  return static_cast<std::size_t>(ctx.base.param_in("mib", static_cast<long long>(ctx.quick ? quick_mib : full_mib), 1, 16384))
         << 20;
}

Table bandwidth_setups(const ExperimentContext& ctx) {
  const std::size_t bytes = buffer_bytes(ctx, 1024, 64);
  const std::vector<int> ctas = ctx.quick ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 4, 8, 16, 32};
  const std::vector<int> warps = ctx.quick ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 4, 8, 16, 32};
  Table t({{"setup", "setup"},
           {"ctas_per_sm", "CTAs/SM"},
           {"warps_per_cta", "warps/CTA"},
           {"warps_per_sm", "warps/SM"},
           {"vector_bits", "vector bits"},
           {"gbps", "GB/s", 1},
           {"fraction_of_best", "of best", 2}},
          "Global -> shared throughput, seed 000 §6.1 Fig. 4: setup 1 (tile per CTA) and 2 (warp = virtual CTA), " +
              std::to_string(bytes >> 20) + " MiB read, 128-bit loads");
  struct Row {
    int setup, c, w;
    double gbps;
  };
  std::vector<Row> rows;
  for (auto setup : {BandwidthSetup::tile_per_cta, BandwidthSetup::virtual_cta})
    for (int c : ctas)
      for (int w : warps) {
        BandwidthConfig config{setup, c, w, 16};
        rows.push_back({static_cast<int>(setup), c, w, measure_setup_bandwidth(config, bytes, ctx.quick ? 2 : 5)});
      }
  double best = 0;
  for (const auto& r : rows) best = std::max(best, r.gbps);
  for (const auto& r : rows)
    t.add_row({std::int64_t{r.setup}, std::int64_t{r.c}, std::int64_t{r.w}, std::int64_t{r.c * r.w}, std::int64_t{128},
               r.gbps, best > 0 ? r.gbps / best : 0.0});
  t.add_note("warps/SM is requested, not resident: above 64 warps or the shared-memory limit CTAs run in waves");
  t.add_note("seed 000 found 8 CTAs/SM x 1 warp enough on a GTX 580 (p = 8P); compare the rows with warps/SM = 8");
  return t;
}

Table vector_width(const ExperimentContext& ctx) {
  const std::size_t bytes = buffer_bytes(ctx, 1024, 64);
  struct Config {
    int c, w;
  };
  const std::vector<Config> configs = ctx.quick ? std::vector<Config>{{8, 1}, {8, 8}}
                                                : std::vector<Config>{{8, 1}, {8, 4}, {4, 16}, {16, 8}, {32, 2}};
  Table t({{"setup", "setup"},
           {"ctas_per_sm", "CTAs/SM"},
           {"warps_per_cta", "warps/CTA"},
           {"vector_bits", "vector bits"},
           {"gbps", "GB/s", 1}},
          "Global -> shared throughput against load width (seed 000 Appendix A/B: Merrill's vector types), " +
              std::to_string(bytes >> 20) + " MiB read");
  for (auto setup : {BandwidthSetup::tile_per_cta, BandwidthSetup::virtual_cta})
    for (const auto& cfg : configs)
      for (int vector_bytes : {4, 8, 16}) {
        BandwidthConfig config{setup, cfg.c, cfg.w, vector_bytes};
        t.add_row({std::int64_t{static_cast<int>(setup)}, std::int64_t{cfg.c}, std::int64_t{cfg.w},
                   std::int64_t{vector_bytes * 8}, measure_setup_bandwidth(config, bytes, ctx.quick ? 2 : 5)});
      }
  t.add_note("wider loads put more bytes in flight per instruction: with few warps per SM they decide the throughput");
  return t;
}

std::string memory_level(std::size_t footprint, std::size_t l2) {
  if (footprint <= (std::size_t{256} << 10)) return "L1";
  if (footprint <= l2 / 2) return "L2";
  if (footprint <= 2 * l2) return "L2/DRAM";
  return "DRAM";
}

Table latency(const ExperimentContext& ctx) {
  const auto info = query_device();
  const std::size_t l2 = info ? info->l2_bytes : std::size_t{50} << 20;
  std::vector<std::size_t> footprints;
  if (ctx.quick) {
    footprints = {std::size_t{64} << 10, std::size_t{4} << 20, std::size_t{256} << 20};
  } else {
    for (std::size_t kib = 16; kib <= (std::size_t{2} << 20); kib *= 4) footprints.push_back(kib << 10);
    footprints.push_back(std::size_t{32} << 20);
    footprints.push_back(std::size_t{128} << 20);
    footprints.push_back(std::size_t{1} << 30);
    std::sort(footprints.begin(), footprints.end());
    footprints.erase(std::unique(footprints.begin(), footprints.end()), footprints.end());
  }
  const long hops = ctx.base.param("hops", ctx.quick ? 10000 : 100000);
  Table t({{"footprint_bytes", "footprint B"},
           {"footprint_mib", "MiB", 3},
           {"level", "level"},
           {"ns_per_hop", "ns/hop", 1},
           {"cycles_per_hop", "cycles/hop", 0},
           {"sm_clock_ghz", "SM GHz", 2}},
          "Latency by pointer chase: one thread, a random cyclic permutation (Sattolo), 256-byte stride, " +
              std::to_string(hops) + " dependent loads");
  double dram_ns = 0, dram_cycles = 0;
  for (std::size_t f : footprints) {
    const auto r = measure_latency(f, hops);
    t.add_row({static_cast<std::int64_t>(r.footprint_bytes), static_cast<double>(r.footprint_bytes) / (1 << 20),
               memory_level(r.footprint_bytes, l2), r.ns_per_hop, r.cycles_per_hop, r.sm_clock_ghz()});
    dram_ns = r.ns_per_hop;
    dram_cycles = r.cycles_per_hop;
  }
  std::ostringstream note;
  note << "lambda (largest footprint, " << (footprints.back() >> 20) << " MiB vs an L2 of " << (l2 >> 20)
       << " MiB): " << std::llround(dram_ns) << " ns = " << std::llround(dram_cycles)
       << " cycles; seed 000 §2.1 quotes 400-800 cycles for 2012 GPUs";
  t.add_note(note.str());
  t.add_note("beyond a few MiB the chase also misses the TLB: part of lambda for random access, not for streaming");
  return t;
}

Table block_size(const ExperimentContext& ctx) {
  const std::size_t bytes = buffer_bytes(ctx, 1024, 128);
  std::vector<std::size_t> sizes = block_size_sweep_sizes();
  if (ctx.quick) sizes = {4, 32, 128, 512};
  std::vector<BlockSizePoint> points;
  for (std::size_t s : sizes) points.push_back(measure_block_read(s, bytes, ctx.quick ? 2 : 5));
  double best = 0;
  for (const auto& p : points) best = std::max(best, p.gbps);
  Table t({{"access_bytes", "access B"}, {"gbps", "GB/s", 1}, {"fraction_of_best", "of best", 2}},
          "Read throughput against the size of each contiguous random access (" + std::to_string(bytes >> 20) +
              " MiB, every byte read once, full GPU)");
  for (const auto& p : points)
    t.add_row({static_cast<std::int64_t>(p.access_bytes), p.gbps, best > 0 ? p.gbps / best : 0.0});
  t.add_note("B = " + std::to_string(saturating_block_bytes(points)) +
             " bytes: the smallest access reaching 90% of the best (seed 000 §2.1 estimates B between w and 4w words)");
  return t;
}

Table barrier(const ExperimentContext& ctx) {
  const std::vector<int> chains = ctx.quick ? std::vector<int>{100} : std::vector<int>{100, 1000, 10000};
  const auto lambda = measure_latency(static_cast<std::size_t>(ctx.quick ? 256 : 1024) << 20, ctx.quick ? 10000 : 50000);
  Table t({{"kernels", "kernels"},
           {"ctas", "CTAs each"},
           {"sigma_us", "sigma us (stream)", 2},
           {"sigma_graph_us", "sigma us (graph)", 2},
           {"lambda_ns", "lambda ns", 1},
           {"sigma_over_lambda", "sigma/lambda", 1},
           {"sigma_graph_over_lambda", "graph sigma/lambda", 1}},
          "The cost of a global barrier (a kernel boundary): a chain of empty kernels, seed 000 §2.1");
  for (int k : chains) {
    const auto r = measure_barrier(k, ctx.quick ? 2 : 5);
    t.add_row({std::int64_t{r.kernels}, std::int64_t{r.ctas}, r.per_kernel_us, r.per_graph_node_us, lambda.ns_per_hop,
               r.per_kernel_us * 1000.0 / lambda.ns_per_hop, r.per_graph_node_us * 1000.0 / lambda.ns_per_hop});
  }
  t.add_note("seed 000 footnote 4: sigma is 10-100x lambda on a GTX 580; a transpose is one round (R = 1), so it pays sigma once");
  return t;
}

Table model_table(const ExperimentContext& ctx) { return machine_model_table(measure_machine_model(ctx.quick)); }

Table bank_model(const ExperimentContext& ctx) {
  using namespace transpose::banks;
  std::vector<Column> columns{{"access", "access"}, {"layout", "layout"}, {"block_dim_x", "blockDim.x"}};
  for (auto& c : bank_columns()) columns.push_back(c);
  Table t(columns, "The bank model (32 banks of 4 bytes) on warp 0's first request in each phase of each stage");
  auto add = [&](const std::string& access, const std::string& layout, int bdx, const WarpAccess& a) {
    std::vector<Cell> cells{access, layout, std::int64_t{bdx}};
    for (auto& c : bank_cells(summarize({{access, a}}))) cells.push_back(std::move(c));
    t.add_row(std::move(cells));
  };
  for (int bdx : {32, 16})
    for (auto layout : {TileLayout::plain, TileLayout::padded, TileLayout::swizzled}) {
      add("row store (load phase)", std::string(name(layout)), bdx, row_phase(layout, bdx));
      add("column load (store phase)", std::string(name(layout)), bdx, column_phase(layout, bdx));
    }
  int sweep_excess = 0;
  for (int i = 1; i < kTile; ++i)
    for (bool lower : {false, true})
      for (int square : {0, kTile * kTile}) sweep_excess += analyze_bank_conflicts(sweep_step(i, lower, square)).excess();
  add("sweep step i=1, upper word", "in-place 32x32", 32, sweep_step(1, false));
  add("sweep step i=1, lower word", "in-place 32x32", 32, sweep_step(1, true));
  add("sweep step i=31, upper word", "in-place 32x32", 32, sweep_step(31, false));
  add("rect store r=0, square 1", "in-place 64x32", 32, rect_store(0, 1));
  t.add_note("all 31 sweep steps x 2 words x 2 squares together: " + std::to_string(sweep_excess) + " excess wavefronts");
  t.add_note("blockDim.x = 16: a warp covers two half rows of the tile, and neither padding nor the swizzle separates them");
  if (ctx.base.param("draw", 0) != 0) {
    auto draw = [&](const std::string& what, const WarpAccess& a) { add_drawing(t, what, a); };
    draw("tiled 32x32, column load, blockDim.x = 32", column_phase(TileLayout::plain, 32));
    draw("padded 32x33, column load, blockDim.x = 32", column_phase(TileLayout::padded, 32));
    draw("swizzled 32x32, column load, blockDim.x = 32", column_phase(TileLayout::swizzled, 32));
    draw("padded 32x33, column load, blockDim.x = 16", column_phase(TileLayout::padded, 16));
    draw("in-place sweep, step i = 5, lower word", sweep_step(5, true));
  }
  return t;
}

}  // namespace

namespace transpose {

std::vector<gpulab::Experiment> make_experiments() {
  return {
      {"bandwidth-setups", "throughput vs CTAs/SM x warps/CTA, setups 1 and 2 (seed 000 Fig. 4)", true, bandwidth_setups, {"mib"}},
      {"vector-width", "throughput vs load width 32/64/128 bit (seed 000 App. A)", true, vector_width, {"mib"}},
      {"latency", "lambda: pointer-chase latency vs footprint (L1, L2, DRAM)", true, latency, {"hops"}},
      {"block-size", "B: read throughput vs contiguous access size", true, block_size, {"mib"}},
      {"barrier", "sigma: cost of a kernel boundary, stream and CUDA graph", true, barrier},
      {"model", "all model parameters of this GPU (lambda, B, sigma, P, w, b, M)", true, model_table},
      {"bank-model", "bank-model wavefronts of every tile access (--param draw=1 draws them)", false, bank_model, {"draw"}},
  };
}

}  // namespace transpose
