// Instructors only (left out of the handout, like the rest of autograder/bench/): the reduction lab's
// GPU check and benchmark beside the stage table: more sizes per run (each one-pass stage's one-block
// threshold +- 1, 2T +- 1) in one process, and issue 13's goals as GOAL lines.
//   check   every reference stage and baseline x every operator x edge sizes x three
//           distributions, exact against the CPU left fold (the model's fold); `interval` (the
//           order oracle) for every order-keeping stage at every size; max on all-negative input;
//           kernel launches against the model's R(n). Exit 1 on any wrong result.
//   bench   n = 2^28 (default): the issue's benchmark table and goals, next to a device-to-device
//           copy, every timed output checked too.
//   one     one run of one stage (for compute-sanitizer and Nsight Compute), checked, with the
//           model's launches and excess shared wavefronts printed for the script to compare.
// Build: cmake --build --preset gpu --target bench-reduction; autograder/bench/reduction_gpu_check.sh runs it.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpulab/buffer.hpp"
#include "gpulab/check.hpp"
#include "gpulab/cuda_check.hpp"
#include "gpulab/data.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/launch_counter.hpp"
#include "gpulab/timing.hpp"
#include "reduction.cuh"
#include "reduction_model.hpp"

namespace {

using namespace reduction;
namespace model = reduction::model;
using gpulab::Distribution;

template <class Op>
using StageFn = void (*)(const Value<Op>*, std::size_t, Value<Op>*, ReduceWorkspace&, Op);

template <class Op>
struct Entry {
  std::string id;
  std::optional<model::Stage> stage;  // nullopt: a baseline (no model)
  StageFn<Op> run;
};

// The stages built for operator Op: order-keeping ones for all, tree/cascading/DeviceReduce for
// commutative operators only (their templates refuse the others at compile time).
template <class Op>
std::vector<Entry<Op>> entries() {
  using S = model::Stage;
  std::vector<Entry<Op>> e{{"global-tree", S::global_tree, reduce_global_tree<Op>},
                           {"tree-interleaved", S::tree_interleaved, reduce_tree_interleaved<Op>}};
  if constexpr (Op::commutative) {
    e.push_back({"tree", S::tree, reduce_tree<Op>});
    e.push_back({"cascading", S::cascading, reduce_cascading<Op>});
  }
  e.push_back({"pipeline-heap", S::pipeline_heap, reduce_pipeline_heap<Op>});
  e.push_back({"pipeline", S::pipeline, reduce_pipeline<Op>});
  e.push_back({"matrix", S::matrix, reduce_matrix<Op>});
  e.push_back({"ordered-registers", S::ordered_registers, reduce_ordered_registers<Op>});
  if constexpr (Op::commutative) e.push_back({"cub-sum", std::nullopt, reduce_cub_device<Op>});
  e.push_back({"cub-block-raking", std::nullopt, reduce_cub_block_raking<Op>});
  e.push_back({"cub-scan-last", std::nullopt, reduce_cub_scan_last<Op>});
  return e;
}

template <class T>
std::vector<std::uint32_t> words_of(const T& v) {
  std::vector<std::uint32_t> w(kWords<T>);
  std::memcpy(w.data(), &v, sizeof(T));
  return w;
}

struct Context {
  gpulab::DeviceInfo device;
  int block = 256;
  gpulab::DeviceBuffer<unsigned char> memory;
  ReduceWorkspace ws;
  gpulab::LaunchCounter counter;
  long runs = 0, failures = 0, launch_mismatches = 0;

  Context(const gpulab::DeviceInfo& d, std::size_t max_n, int block_size)
      : device(d), block(block_size), memory(reduce_workspace_bytes(max_n, 16)) {
    static_cast<gpulab::Scratch&>(ws) = gpulab::Scratch(memory.data(), memory.size());
    ws.multiprocessors = d.multiprocessors;
    ws.config.block = block_size;
  }
  // R(n) depends only on whether the first round needs more than one block, so any max_grid >= 2
  // predicts it; the SM count is also the exact grid whenever n (not the GPU) sets it.
  model::Shape shape(int element_bytes) const { return {block, device.multiprocessors, element_bytes}; }
};

// One run: poison the output, run, compare with the fold and the launches with the model.
template <class Op>
bool run_checked(Context& ctx, const Entry<Op>& e, const gpulab::DeviceBuffer<Value<Op>>& in, std::size_t n,
                 const Value<Op>& expected, const std::string& what, bool quiet = true, long* launches_out = nullptr) {
  using T = Value<Op>;
  gpulab::DeviceBuffer<T> out(1);
  out.poison();
  ctx.ws.reset();
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  if (ctx.counter.available()) ctx.counter.start();
  try {
    e.run(in.data(), n, out.data(), ctx.ws, Op{});
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const gpulab::CudaError& err) {
    if (err.sticky()) throw;  // the context is lost: nothing after this can be trusted
    ++ctx.failures;
    std::printf("ERROR %-18s %-8s %s n=%zu: %s\n", e.id.c_str(), Op::name, what.c_str(), n, err.what());
    if (ctx.counter.available()) ctx.counter.stop();
    return false;
  } catch (const std::exception& err) {
    ++ctx.failures;
    std::printf("ERROR %-18s %-8s %s n=%zu: %s\n", e.id.c_str(), Op::name, what.c_str(), n, err.what());
    if (ctx.counter.available()) ctx.counter.stop();
    return false;
  }
  const long launches = ctx.counter.available() ? ctx.counter.stop() : -1;
  if (launches_out) *launches_out = launches;
  ++ctx.runs;
  const T got = out.download()[0];
  const auto want_w = words_of(expected), got_w = words_of(got);
  const auto check = gpulab::compare_exact<std::uint32_t>(want_w, got_w);
  bool ok = check.ok;
  if (!ok) {
    ++ctx.failures;
    std::printf("WRONG %-18s %-8s %s n=%zu: %s\n", e.id.c_str(), Op::name, what.c_str(), n, check.to_string().c_str());
  }
  if (e.stage && launches >= 0) {
    const long want = model::launches(*e.stage, n, ctx.shape(sizeof(T)));
    if (launches != want) {
      ++ctx.launch_mismatches;
      ok = false;
      std::printf("LAUNCHES %-18s %-8s n=%zu: %ld launches, the model says %ld\n", e.id.c_str(), Op::name, n, launches, want);
    }
  }
  if (!quiet && ok) std::printf("ok %-18s %-8s %s n=%zu launches=%ld\n", e.id.c_str(), Op::name, what.c_str(), n, launches);
  return ok;
}

// ---- check ----------------------------------------------------------------------------------------------

template <class Op>
std::set<std::size_t> check_sizes(const Context& ctx, int k_max, std::size_t large) {
  using T = Value<Op>;
  const auto edge = gpulab::edge_sizes(10, k_max, large);
  std::set<std::size_t> sizes(edge.begin(), edge.end());
  // labs-brief §1.6: 2, 63..65, 2T +- 1, and each one-pass stage's one-block threshold +- 1.
  for (std::size_t n : {2, 63, 64, 65}) sizes.insert(n);
  for (long d : {-1, 0, 1}) sizes.insert(2 * ctx.block + d);
  for (auto s : {model::Stage::cascading, model::Stage::pipeline, model::Stage::matrix, model::Stage::ordered_registers}) {
    const std::size_t one_block = std::size_t(ctx.block / kWarp) * kMinUnitsPerWarp * model::unit_elements(s, sizeof(T));
    for (long d : {-1, 0, 1}) sizes.insert(one_block + d);
  }
  return sizes;
}

template <class Op>
void check_op(Context& ctx, int k_max, std::size_t large) {
  using T = Value<Op>;
  const auto stages = entries<Op>();
  // interval's input does not depend on the distribution: one is enough.
  std::vector<Distribution> dists{Distribution::uniform, Distribution::small_range, Distribution::full_range};
  if constexpr (std::is_same_v<Op, IntervalOp>) dists = {Distribution::uniform};
  const long before = ctx.failures;
  for (std::size_t n : check_sizes<Op>(ctx, k_max, large)) {
    for (auto d : dists) {
      const auto host = model::make_input<Op>(d, n, 7 + n);
      const T expected = model::fold<Op>(std::span<const T>(host));
      // The stage "cpu" is the reference's reduce_cpu: it must agree with the model's fold.
      if (!(reduce_cpu<Op>(host.data(), n, Op{}) == expected)) {
        ++ctx.failures;
        std::printf("WRONG cpu %s n=%zu\n", Op::name, n);
      }
      gpulab::DeviceBuffer<T> in(host);
      for (const auto& e : stages) run_checked(ctx, e, in, n, expected, std::string(gpulab::to_string(d)));
    }
    if constexpr (std::is_same_v<Op, MaxOp>) {
      const auto host = model::all_negative_input(n, 3 + n);
      gpulab::DeviceBuffer<T> in(host);
      const T expected = model::fold<Op>(std::span<const T>(host));
      for (const auto& e : stages) run_checked(ctx, e, in, n, expected, "all-negative");
    }
  }
  std::printf("check %-8s %zu stages: %s\n", Op::name, stages.size(),
              ctx.failures == before ? "all exact" : "FAILURES above");
}

// ---- bench ----------------------------------------------------------------------------------------------

struct Timed {
  std::string stage, op;
  double ms = 0, gbps = 0;
  long launches = -1, model_launches = -1;
  bool ok = true;
};

template <class Op>
std::vector<Timed> bench_op(Context& ctx, std::size_t n, const std::vector<std::string>& ids, const gpulab::MeasureOptions& opt) {
  using T = Value<Op>;
  const auto host = model::make_input<Op>(Distribution::uniform, n, 11);
  const T expected = model::fold<Op>(std::span<const T>(host));
  gpulab::DeviceBuffer<T> in(host);
  gpulab::DeviceBuffer<T> out(1);
  std::vector<Timed> rows;
  for (const auto& e : entries<Op>()) {
    if (std::find(ids.begin(), ids.end(), e.id) == ids.end()) continue;
    Timed t{e.id, Op::name};
    t.ok = run_checked(ctx, e, in, n, expected, "uniform", true, &t.launches);  // also counts the launches
    // A stage that cannot run here (matrix's staging at a block too big for 8- and 16-byte values)
    // was reported by run_checked: no row, and the bench goes on with the others.
    if (!t.ok) continue;
    if (e.stage) t.model_launches = model::launches(*e.stage, n, ctx.shape(sizeof(T)));
    const auto stats = gpulab::measure_gpu([&] { e.run(in.data(), n, out.data(), ctx.ws, Op{}); },
                                           [&] {
                                             out.poison();
                                             ctx.ws.reset();
                                           },
                                           opt);
    // The last timed run's output must be right too (poisoned before it).
    t.ok = t.ok && words_of(out.download()[0]) == words_of(expected);
    if (!t.ok) ++ctx.failures;
    t.ms = stats.median_ms;
    t.gbps = gpulab::gigabytes_per_second(double(n) * sizeof(T), t.ms);
    rows.push_back(t);
  }
  return rows;
}

int bench(Context& ctx, std::size_t n, const gpulab::MeasureOptions& opt) {
  std::printf("bench: %s, %d SMs, n = %zu, block %d, median of %d (L2 flushed)\n", ctx.device.name.c_str(),
              ctx.device.multiprocessors, n, ctx.block, opt.repetitions);
  double copy_ms = 0;
  {
    gpulab::DeviceBuffer<int> a(n), b(n);
    a.zero();
    copy_ms = gpulab::measure_gpu([&] {
                GPULAB_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice));
              }, {}, opt).median_ms;
  }
  const double copy_gbps = gpulab::gigabytes_per_second(2.0 * n * 4, copy_ms);
  std::vector<Timed> rows;
  const std::vector<std::string> all{"global-tree", "tree-interleaved", "tree", "cascading", "pipeline-heap", "pipeline",
                                     "matrix", "ordered-registers", "cub-sum", "cub-block-raking", "cub-scan-last"};
  for (auto& r : bench_op<SumOp>(ctx, n, all, opt)) rows.push_back(r);
  const std::vector<std::string> ordered{"pipeline-heap", "pipeline", "matrix", "ordered-registers", "cub-block-raking",
                                         "cub-scan-last"};
  for (auto& r : bench_op<AffineOp>(ctx, n, ordered, opt)) rows.push_back(r);
  for (auto& r : bench_op<Mat2Op>(ctx, n, ordered, opt)) rows.push_back(r);

  std::printf("\n%-20s %-7s %10s %9s %9s %16s\n", "stage", "op", "ms", "GB/s", "% copy", "launches/model");
  std::printf("%-20s %-7s %10.4f %9.1f %9s %10s (read + write: %.1f GB/s)\n", "d2d-copy int32", "", copy_ms,
              gpulab::gigabytes_per_second(n * 4.0, copy_ms), "", "", copy_gbps);
  for (const auto& r : rows) {
    const std::string launches = (r.launches >= 0 ? std::to_string(r.launches) : "-") + "/" +
                                 (r.model_launches >= 0 ? std::to_string(r.model_launches) : "-");
    std::printf("%-20s %-7s %10.4f %9.1f %9.1f %16s %s\n", r.stage.c_str(), r.op.c_str(), r.ms, r.gbps,
                100.0 * r.gbps / copy_gbps, launches.c_str(), r.ok ? "" : "WRONG");
  }
  auto ms = [&](const std::string& stage, const std::string& op) {
    for (const auto& r : rows)
      if (r.stage == stage && r.op == op) return r.ms;
    return 0.0;
  };
  // Issue 13, "Benchmarks to reach": speed ratios = peer time / stage time.
  struct Goal {
    const char* what;
    double ratio, want;
  };
  const std::vector<Goal> goals{
      {"cascading sum vs cub-sum", ms("cub-sum", "sum") / ms("cascading", "sum"), 0.95},
      {"ordered-registers affine vs cub-block-raking", ms("cub-block-raking", "affine") / ms("ordered-registers", "affine"), 1.0},
      {"ordered-registers affine vs cub-scan-last", ms("cub-scan-last", "affine") / ms("ordered-registers", "affine"), 2.0},
      {"pipeline affine vs cub-block-raking", ms("cub-block-raking", "affine") / ms("pipeline", "affine"), 0.8},
      {"pipeline sum vs cub-sum", ms("cub-sum", "sum") / ms("pipeline", "sum"), 0.8},
  };
  std::printf("\n");
  for (const auto& g : goals)
    std::printf("GOAL %-46s %6.3fx (goal >= %.2fx) %s\n", g.what, g.ratio, g.want, g.ratio >= g.want ? "met" : "MISSED");
  return 0;
}

// ---- one --------------------------------------------------------------------------------------------------

template <class Op>
int one(Context& ctx, const std::string& stage, std::size_t n, Distribution d) {
  using T = Value<Op>;
  for (const auto& e : entries<Op>()) {
    if (e.id != stage) continue;
    const auto host = model::make_input<Op>(d, n, 5);
    gpulab::DeviceBuffer<T> in(host);
    const T expected = model::fold<Op>(std::span<const T>(host));
    const bool ok = run_checked(ctx, e, in, n, expected, std::string(gpulab::to_string(d)), false);
    if (e.stage) {
      const auto shape = ctx.shape(sizeof(T));
      std::printf("model-launches: %ld\n", model::launches(*e.stage, n, shape));
      std::printf("model-excess-wavefronts: %ld\n", model::predicted_excess_wavefronts(*e.stage, n, shape, kWords<T>));
      std::printf("model-first-round-blocks: %d (exact when below the SM count %d)\n",
                  model::first_round_blocks(*e.stage, n, shape), ctx.device.multiprocessors);
    }
    return ok ? 0 : 1;
  }
  std::fprintf(stderr, "bench-reduction: stage '%s' is not built for operator %s (tree, cascading and cub-sum "
                       "need a commutative operator: sum or max)\n", stage.c_str(), Op::name);
  return 2;
}

template <class F>
int with_op(const std::string& op, F&& f) {
  if (op == "sum") return f(SumOp{});
  if (op == "max") return f(MaxOp{});
  if (op == "interval") return f(IntervalOp{});
  if (op == "affine") return f(AffineOp{});
  if (op == "mat2") return f(Mat2Op{});
  std::fprintf(stderr, "bench-reduction: unknown operator '%s' (sum, max, interval, affine, mat2)\n", op.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"reduction lab: GPU check and benchmark of the reference stages (instructors)"};
  app.require_subcommand(1);
  int block = 256, k_max = 20, reps = 10;
  std::size_t large = (std::size_t{1} << 24) + 5, n = std::size_t{1} << 28;
  std::string stage, op = "sum", dist = "uniform";
  auto* check = app.add_subcommand("check", "every stage x operator x edge sizes x distributions, exact");
  check->add_option("--k-max", k_max, "sizes 2^k and 2^k - 3 for k = 10 .. k-max")->check(CLI::Range(10, 26));
  check->add_option("--large", large, "one more size (>= 2^24 by default)");
  auto* bench_cmd = app.add_subcommand("bench", "issue 13's benchmark table and goals");
  bench_cmd->add_option("--n", n, "elements")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 29));
  bench_cmd->add_option("--reps", reps, "timed repetitions")->check(CLI::Range(1, 1000));
  auto* one_cmd = app.add_subcommand("one", "one checked run of one stage (for sanitizers and ncu)");
  one_cmd->add_option("--stage", stage, "stage id")->required();
  one_cmd->add_option("--op", op, "sum, max, interval, affine, mat2");
  one_cmd->add_option("--n", n, "elements")->required();
  one_cmd->add_option("--dist", dist, "input distribution");
  for (auto* c : {check, bench_cmd, one_cmd})
    c->add_option("--block", block, "threads per block")->check(CLI::IsMember({64, 128, 256, 512, 1024}));
  CLI11_PARSE(app, argc, argv);

  const auto device = gpulab::query_device();
  if (!device) return gpulab::missing_gpu_exit_code(std::cerr);

  if (*check) {
    Context ctx(*device, std::max(large, std::size_t{1} << k_max), block);
    if (!ctx.counter.available()) std::printf("launch counts not checked: %s\n", ctx.counter.reason().c_str());
    check_op<SumOp>(ctx, k_max, large);
    check_op<MaxOp>(ctx, k_max, large);
    check_op<IntervalOp>(ctx, k_max, large);
    check_op<AffineOp>(ctx, k_max, large);
    check_op<Mat2Op>(ctx, k_max, large);
    std::printf("check: %ld runs, %ld wrong, %ld launch counts off the model\n", ctx.runs, ctx.failures,
                ctx.launch_mismatches);
    return ctx.failures || ctx.launch_mismatches ? 1 : 0;
  }
  if (*bench_cmd) {
    Context ctx(*device, n, block);
    gpulab::MeasureOptions opt;
    opt.repetitions = reps;
    bench(ctx, n, opt);
    return ctx.failures ? 1 : 0;
  }
  const auto d = gpulab::parse_distribution(dist);
  if (!d) {
    std::fprintf(stderr, "bench-reduction: unknown distribution '%s'\n", dist.c_str());
    return 2;
  }
  return with_op(op, [&](auto o) {
    Context ctx(*device, n, block);
    return one<decltype(o)>(ctx, stage, n, *d);
  });
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench-reduction: %s\n", e.what());
  return 1;
}
