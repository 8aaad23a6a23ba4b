// The transpose lab's stage table and experiments (the harness). Do not edit: it prepares seeded
// input, calls the functions of transpose.cuh, and checks every output exactly against a CPU
// transpose (a transpose only moves bits, so nothing but equality is right).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/bank_model.hpp"
#include "gpulab/buffer.hpp"
#include "gpulab/check.hpp"
#include "gpulab/cuda_check.hpp"
#include "gpulab/data.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/lab.hpp"
#include "gpulab/machine_model.hpp"
#include "tile_layouts.hpp"
#include "transpose.cuh"

namespace gpulab {

namespace {

// ---- problems ------------------------------------------------------------------------------------

struct Shape {
  std::size_t rows = 0, cols = 0;
  std::size_t count() const { return rows * cols; }
};

Shape shape_of(const Problem& p) {
  Shape s{p.rows, p.cols};
  if (s.rows == 0 && s.cols == 0 && p.n > 0) {
    // A plain count: accept a perfect square, otherwise say how to ask for a matrix.
    const auto side = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(p.n))));
    if (side * side != p.n)
      throw UsageError("transpose works on matrices: give --n ROWSxCOLS (e.g. 1000x999), not a count of " +
                       std::to_string(p.n));
    s.rows = s.cols = side;
  }
  if (s.rows != 0 && s.cols > std::numeric_limits<std::size_t>::max() / 8 / s.rows)
    throw UsageError("transpose: " + std::to_string(s.rows) + " x " + std::to_string(s.cols) + " is too large");
  return s;
}

// The input and its transpose for one problem, computed once: every stage of a run (and every
// test on the same size) shares them. One problem is kept; 8192 x 8192 is 256 MiB per matrix.
struct HostMatrices {
  Shape shape;
  std::uint64_t seed = 0;
  Distribution distribution = Distribution::uniform;
  std::vector<float> in;          // rows x cols
  std::vector<float> transposed;  // cols x rows: the expected output of every transposing stage
};

// The obviously-right transpose, the only truth the checks use (the `cpu` stage is a separate,
// faster, blocked implementation).
std::vector<float> reference_transpose(const std::vector<float>& in, Shape s) {
  std::vector<float> out(in.size());
  for (std::size_t r = 0; r < s.rows; ++r)
    for (std::size_t c = 0; c < s.cols; ++c) out[c * s.rows + r] = in[r * s.cols + c];
  return out;
}

std::shared_ptr<const HostMatrices> host_matrices(const Problem& p) {
  static std::mutex mutex;
  static std::shared_ptr<const HostMatrices> cached;
  const Shape s = shape_of(p);
  std::lock_guard lock(mutex);
  if (cached && cached->shape.rows == s.rows && cached->shape.cols == s.cols && cached->seed == p.seed &&
      cached->distribution == p.distribution)
    return cached;
  cached.reset();  // free the old pair before building a new one
  auto m = std::make_shared<HostMatrices>();
  m->shape = s;
  m->seed = p.seed;
  m->distribution = p.distribution;
  m->in = generate_float(p.distribution, s.count(), p.seed);
  m->transposed = reference_transpose(m->in, s);
  cached = m;
  return cached;
}

// The checker's report, plus where the first wrong element sits in the matrix.
CheckResult check_matrix(const HostMatrices& m, std::span<const float> actual, bool transposed) {
  const std::vector<float>& expected = transposed ? m.transposed : m.in;
  CheckResult result = compare_exact<float>(expected, actual);
  if (result.ok || expected.empty() || result.mismatch_count == 0) return result;  // size mismatch: no position
  const std::size_t i = result.first_mismatch;
  std::ostringstream where;
  if (transposed) {
    const std::size_t out_row = i / m.shape.rows, out_col = i % m.shape.rows;
    where << " [out(" << out_row << ", " << out_col << ") of the " << m.shape.cols << " x " << m.shape.rows
          << " output should be in(" << out_col << ", " << out_row << ")]";
  } else {
    where << " [element (" << i / m.shape.cols << ", " << i % m.shape.cols << ") of the copy]";
  }
  result.message += where.str();
  return result;
}

double bytes_moved(Shape s) { return 2.0 * static_cast<double>(s.count()) * sizeof(float); }

// ---- stage instances ---------------------------------------------------------------------------

using DeviceFunction = void (*)(const float*, float*, std::size_t, std::size_t);

class DeviceStage : public StageInstance {
 public:
  DeviceStage(const Problem& p, DeviceFunction function, bool transposes)
      : host_(host_matrices(p)), function_(function), transposes_(transposes),
        in_(std::span<const float>(host_->in)), out_(host_->shape.count()) {}
  void reset_output() override { out_.poison(); }
  void run() override { function_(in_.data(), out_.data(), host_->shape.rows, host_->shape.cols); }
  CheckResult check() override {
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    const auto actual = out_.download();
    return check_matrix(*host_, actual, transposes_);
  }
  double bytes_moved() const override { return gpulab::bytes_moved(host_->shape); }
  std::optional<std::vector<unsigned char>> output_bytes() override {
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    return gpulab::to_bytes<float>(out_.download());
  }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    const auto actual = gpulab::from_bytes<float>(bytes);
    if (!actual) return CheckResult::fail("saved output is not a whole number of floats");
    return check_matrix(*host_, *actual, transposes_);
  }

 private:
  std::shared_ptr<const HostMatrices> host_;
  DeviceFunction function_;
  bool transposes_;
  DeviceBuffer<float> in_, out_;
};

// Baseline: the driver's device-to-device copy of the same bytes.
void memcpy_baseline(const float* in, float* out, std::size_t rows, std::size_t cols) {
  if (rows * cols == 0) return;
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(out, in, rows * cols * sizeof(float), cudaMemcpyDeviceToDevice));
}

// Baseline: a cache-blocked CPU transpose (64 x 64 blocks stay in L1/L2 while both the rows read
// and the columns written are walked), the "vs CPU" denominator.
void cpu_transpose(const float* in, float* out, std::size_t rows, std::size_t cols) {
  constexpr std::size_t kBlock = 64;
  for (std::size_t r0 = 0; r0 < rows; r0 += kBlock)
    for (std::size_t c0 = 0; c0 < cols; c0 += kBlock) {
      const std::size_t r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
      for (std::size_t r = r0; r < r1; ++r)
        for (std::size_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
    }
}

class HostStage : public StageInstance {
 public:
  explicit HostStage(const Problem& p) : host_(host_matrices(p)), out_(host_->shape.count()) {}
  void reset_output() override {
    std::fill(out_.begin(), out_.end(), -std::numeric_limits<float>::infinity());
  }
  void run() override { cpu_transpose(host_->in.data(), out_.data(), host_->shape.rows, host_->shape.cols); }
  CheckResult check() override { return check_matrix(*host_, out_, true); }
  double bytes_moved() const override { return gpulab::bytes_moved(host_->shape); }
  std::optional<std::vector<unsigned char>> output_bytes() override { return gpulab::to_bytes<float>(out_); }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    const auto actual = gpulab::from_bytes<float>(bytes);
    if (!actual) return CheckResult::fail("saved output is not a whole number of floats");
    return check_matrix(*host_, *actual, true);
  }

 private:
  std::shared_ptr<const HostMatrices> host_;
  std::vector<float> out_;
};

std::optional<long> one_round(const Problem&) { return 1; }

Stage gpu_stage(std::string id, std::string title, DeviceFunction f, bool transposes, std::string source,
                Role role = Role::student) {
  Stage s = make_stage(std::move(id), std::move(title), Where::gpu, std::move(source),
                       [f, transposes](const Problem& p) -> std::unique_ptr<StageInstance> {
                         return std::make_unique<DeviceStage>(p, f, transposes);
                       },
                       role);
  if (role == Role::student) s.predicted_launches = one_round;  // R(n) = 1: one round, no barrier
  return s;
}

// ---- experiments -------------------------------------------------------------------------------

std::size_t buffer_bytes(const ExperimentContext& ctx, std::size_t full_mib, std::size_t quick_mib) {
  const auto mib = ctx.base.param("mib", static_cast<long long>(ctx.quick ? quick_mib : full_mib));
  if (mib < 1 || mib > 16384) throw UsageError("--param mib=" + std::to_string(mib) + ": use 1..16384");
  return static_cast<std::size_t>(mib) << 20;
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

Table model(const ExperimentContext& ctx) { return machine_model_table(measure_machine_model(ctx.quick)); }

Table bank_model(const ExperimentContext& ctx) {
  using namespace transpose::banks;
  Table t({{"access", "access"},
           {"layout", "layout"},
           {"block_dim_x", "blockDim.x"},
           {"wavefronts", "wavefronts"},
           {"ideal", "ideal"},
           {"excess", "excess"},
           {"max_way", "worst n-way"}},
          "The bank model (32 banks of 4 bytes) on warp 0's first request in each phase of each stage");
  auto add = [&](const std::string& access, const std::string& layout, int bdx, const WarpAccess& a) {
    const auto r = analyze_bank_conflicts(a);
    t.add_row({access, layout, std::int64_t{bdx}, std::int64_t{r.wavefronts}, std::int64_t{r.ideal_wavefronts},
               std::int64_t{r.excess()}, std::int64_t{r.max_way}});
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
    auto draw = [&](const std::string& what, const WarpAccess& a) {
      t.add_note("");
      t.add_note(what + ":");
      std::istringstream lines(draw_bank_matrix(a, 8));
      for (std::string line; std::getline(lines, line);) t.add_note(line);
    };
    draw("tiled 32x32, column load, blockDim.x = 32", column_phase(TileLayout::plain, 32));
    draw("padded 32x33, column load, blockDim.x = 32", column_phase(TileLayout::padded, 32));
    draw("swizzled 32x32, column load, blockDim.x = 32", column_phase(TileLayout::swizzled, 32));
    draw("padded 32x33, column load, blockDim.x = 16", column_phase(TileLayout::padded, 16));
    draw("in-place sweep, step i = 5, lower word", sweep_step(5, true));
  }
  return t;
}

Experiment experiment(std::string id, std::string title, std::function<Table(const ExperimentContext&)> run,
                      bool needs_gpu = true) {
  Experiment e;
  e.id = std::move(id);
  e.title = std::move(title);
  e.needs_gpu = needs_gpu;
  e.run = std::move(run);
  return e;
}

}  // namespace

Lab make_lab() {
  Lab lab;
  lab.id = "transpose";
  lab.title = "Matrix transpose and the machine model";
  lab.student_files = "labs/transpose/transpose.cu";
  lab.default_rows = 8192;
  lab.default_cols = 8192;
  lab.default_n = lab.default_rows * lab.default_cols;
  lab.baseline_cpu_stage = "cpu";

  lab.stages.push_back(gpu_stage("copy", "global -> global copy, the roof", transpose::copy, false, "seed 000 §6.1"));
  lab.stages.push_back(gpu_stage("copy-shared", "copy through a 32x32 shared tile", transpose::copy_shared, false,
                                 "seed 000 §3, Appendix B Alg. 1"));
  lab.stages.push_back(gpu_stage("naive", "read rows, write columns", transpose::naive, true, "seed 000 §2.1"));
  Stage tiled = gpu_stage("tiled", "32x32 shared tile, column reads conflict 32-way", transpose::tiled, true,
                          "seed 000 §3, Fig. 1");
  tiled.expect_conflicts = true;
  lab.stages.push_back(tiled);
  Stage padded = gpu_stage("padded", "32x33 shared tile, conflict-free", transpose::padded, true, "seed 000 §3");
  padded.must_be_conflict_free = true;
  lab.stages.push_back(padded);
  Stage swizzled =
      gpu_stage("swizzled", "XOR-swizzled 32x32 tile, conflict-free", transpose::swizzled, true, "seed 000 §3");
  swizzled.must_be_conflict_free = true;
  lab.stages.push_back(swizzled);
  Stage sweep = gpu_stage("in-place-sweep", "32x32 tile transposed in place, diagonal sweep",
                          transpose::in_place_sweep, true, "seed 000 Appendix B, Alg. 2");
  sweep.must_be_conflict_free = true;
  lab.stages.push_back(sweep);
  Stage rect = gpu_stage("in-place-sweep-rect", "64x32 tile as two squares swept in place",
                         transpose::in_place_sweep_rect, true, "seed 000 §3 and Appendix B (m = 2n)");
  rect.must_be_conflict_free = true;
  lab.stages.push_back(rect);

  lab.stages.push_back(
      gpu_stage("memcpy", "cudaMemcpy device to device, same bytes", memcpy_baseline, false, "CUDA runtime", Role::baseline));
  lab.stages.push_back(make_stage(
      "cpu", "CPU transpose, 64x64 cache blocks", Where::cpu, "baseline",
      [](const Problem& p) -> std::unique_ptr<StageInstance> { return std::make_unique<HostStage>(p); }, Role::baseline));

  lab.experiments.push_back(experiment("bandwidth-setups", "throughput vs CTAs/SM x warps/CTA, setups 1 and 2 (seed 000 Fig. 4)",
                                       bandwidth_setups));
  lab.experiments.push_back(experiment("vector-width", "throughput vs load width 32/64/128 bit (seed 000 App. A)", vector_width));
  lab.experiments.push_back(experiment("latency", "lambda: pointer-chase latency vs footprint (L1, L2, DRAM)", latency));
  lab.experiments.push_back(experiment("block-size", "B: read throughput vs contiguous access size", block_size));
  lab.experiments.push_back(experiment("barrier", "sigma: cost of a kernel boundary, stream and CUDA graph", barrier));
  lab.experiments.push_back(experiment("model", "all model parameters of this GPU (lambda, B, sigma, P, w, b, M)", model));
  lab.experiments.push_back(experiment("bank-model", "bank-model wavefronts of every tile access (--param draw=1 draws them)",
                                       bank_model, false));
  return lab;
}

}  // namespace gpulab
