// The reduction lab's experiments (`gpulab experiment reduction ID`): the size sweep (seed 004
// Fig. 9 on today's GPU), the operator sweep against both order-keeping CUB peers, the block and
// grid sweeps, and the bank model every ncu count is held to. Each prints a table and writes CSV;
// the stages come from the stage table in lab.cu. Do not edit.
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/device_info.hpp"
#include "gpulab/experiments.hpp"
#include "reduction.cuh"
#include "reduction_lab.hpp"
#include "reduction_model.hpp"

namespace {

using namespace gpulab;
namespace rm = reduction::model;

// Seed 004 Fig. 9 (integer +, K20c) on this GPU: every GPU stage and CUB against n.
Table size_sweep(const ExperimentContext& ctx) {
  std::vector<std::string> ids;
  for (const auto& s : ctx.lab->stages)
    if (s.where == Where::gpu) ids.push_back(s.id);
  std::vector<long long> sizes;
  for (int k = 10; k <= (ctx.quick ? 16 : 28); ++k) sizes.push_back(1LL << k);
  ExperimentContext sum = ctx;
  sum.base = ctx.base.with("op", reduction::lab::sum);
  Sweep s{"size-sweep", "reduction (op = sum): time against n, every GPU stage beside cub::DeviceReduce", ids, "n", sizes};
  s.peers = {{"cub-sum", "vs_cub", "vs CUB"}};
  s.launches = s.elements_per_s = true;
  Table t = sweep(sum, s);
  t.add_note("GB/s counts the model's bytes: 4(n + 1); vs CUB = cub::DeviceReduce time / stage time");
  t.add_note("launches: counted by CUPTI; model: reduction_model.hpp's R(n)");
  return t;
}

// The order-keeping stages with sum, affine and mat2 against the two CUB peers that keep order.
Table op_sweep(const ExperimentContext& ctx) {
  const std::size_t n = ctx.quick ? std::size_t{1} << 16 : ctx.base.n;
  Sweep s{"op-sweep", "reduction: operators (sum, affine, mat2) for the order-keeping stages, n = " + size_name(n),
          {"tree-interleaved", "pipeline-heap", "pipeline", "matrix", "ordered-registers"}, "op",
          {reduction::lab::sum, reduction::lab::affine, reduction::lab::mat2}, n};
  s.peers = {{"cub-block-raking", "vs_block_raking", "vs raking"}, {"cub-scan-last", "vs_scan_last", "vs scan-last"}};
  Table t = sweep(ctx, s);
  t.add_note("GB/s counts (n + 1) elements of 4 (sum), 8 (affine) or 16 (mat2) bytes");
  t.add_note("vs raking / vs scan-last = the CUB peer's time / the stage's time (cub::DeviceReduce does not "
             "support non-commutative operators)");
  return t;
}

Table block_sweep(const ExperimentContext& ctx) {
  const std::vector<long long> blocks =
      ctx.quick ? std::vector<long long>{64, 256, 1024} : std::vector<long long>{64, 128, 256, 512, 1024};
  return sweep(ctx, {"block-sweep", "reduction (sum): threads per block (--param block), n = " + size_name(ctx.base.n),
                     {"tree-interleaved", "tree", "cascading", "pipeline-heap", "pipeline", "matrix", "ordered-registers"},
                     "block", blocks, ctx.quick ? std::optional<std::size_t>(std::size_t{1} << 16) : std::nullopt});
}

// How many blocks per SM the one-pass stages need to hide DRAM latency: the latency x bandwidth product in bytes in flight.
Table grid_sweep(const ExperimentContext& ctx) {
  const std::vector<long long> per_sm =
      ctx.quick ? std::vector<long long>{1, 4} : std::vector<long long>{1, 2, 3, 4, 6, 8, 12, 16};
  return sweep(ctx, {"grid-sweep", "reduction (sum): first-round grid = SMs x blocks_per_sm, n = " + size_name(ctx.base.n),
                     {"cascading", "ordered-registers"}, "blocks_per_sm", per_sm,
                     ctx.quick ? std::optional<std::size_t>(std::size_t{1} << 16) : std::nullopt});
}

// The bank model (CPU): per stage and block, the excess shared wavefronts Nsight Compute should
// count over a whole run at n (measure.toml's ncu sweep holds ncu to the model_excess column).
Table bank_model(const ExperimentContext& ctx) {
  Table t({{"stage", "stage"},
           {"block", "block"},
           {"n", "n"},
           {"model_excess", "excess (run)"},
           {"launches", "launches"},
           {"step_excess", "excess/step"},
           {"max_way", "max way"}},
          "reduction: the bank model (op = sum), n = " + size_name(ctx.base.n));
  const std::vector<long long> blocks =
      ctx.quick ? std::vector<long long>{64, 256, 1024} : std::vector<long long>{64, 128, 256, 512, 1024};
  using S = rm::Stage;
  for (S s : {S::tree_interleaved, S::tree, S::pipeline_heap, S::pipeline, S::matrix, S::cascading, S::ordered_registers})
    for (long long block : blocks) {
      const Problem p = ctx.base.with("block", block);
      const auto shape = reduction::lab::shape_for(p, 4);
      rm::RequestSummary one;
      switch (s) {
        case S::tree_interleaved: one = rm::summarize(rm::tree_interleaved_requests(static_cast<int>(block))); break;
        case S::tree: one = rm::summarize(rm::tree_requests(static_cast<int>(block))); break;
        case S::pipeline_heap: one = rm::summarize(rm::pipeline_step_requests(rm::PipelineLayout::heap)); break;
        case S::pipeline: one = rm::summarize(rm::pipeline_step_requests(rm::PipelineLayout::two_b)); break;
        case S::matrix: one = rm::summarize(rm::matrix_tile_requests()); break;
        default: break;  // no shared-memory tree: k partials per block only
      }
      t.add_row({std::string(rm::to_string(s)), static_cast<std::int64_t>(block), static_cast<std::int64_t>(p.n),
                 static_cast<std::int64_t>(rm::predicted_excess_wavefronts(s, p.n, shape, 1)),
                 static_cast<std::int64_t>(rm::launches(s, p.n, shape)), static_cast<std::int64_t>(one.excess()),
                 static_cast<std::int64_t>(one.max_way)});
    }
  t.add_note("excess (run): reduction_model.hpp's predicted_excess_wavefronts over every launch (int32: one plane)");
  t.add_note("excess/step: one block of a tree, one pipeline step of a warp, one 32 x 32 matrix tile");
  t.add_note(gpu_available() ? "grid from this GPU's SM count" : "no GPU: grid from 132 SMs (an H100), exact while n sets it");
  if (ctx.base.param("draw", 0) != 0) {
    // The handout's drawings: the same requests as the excess/step column, as bank matrices.
    const auto heap = rm::pipeline_step_requests(rm::PipelineLayout::heap);
    const auto two_b = rm::pipeline_step_requests(rm::PipelineLayout::two_b);
    for (std::size_t i = 0; i < heap.size() && i < two_b.size(); ++i) {
      add_drawing(t, "pipeline-heap " + heap[i].step, heap[i].access);
      add_drawing(t, "pipeline (2b) " + two_b[i].step, two_b[i].access);
    }
    for (const auto& r : rm::tree_interleaved_requests(256))
      if (r.step.rfind("load x[2st] s=", 0) == 0 && r.step.find("warp 0") != std::string::npos)
        add_drawing(t, "tree-interleaved, block 256, " + r.step, r.access);
  }
  return t;
}

}  // namespace

namespace reduction {

std::vector<gpulab::Experiment> make_experiments() {
  return {
      {"size-sweep", "every GPU stage and CUB against n = 2^10 .. 2^28 (seed 004 Fig. 9), op = sum", true, size_sweep},
      {"op-sweep", "sum / affine / mat2: the order-keeping stages against both CUB peers", true, op_sweep},
      {"block-sweep", "threads per block 64 .. 1024", true, block_sweep},
      {"grid-sweep", "one-pass grid: SMs x 1 .. 16 blocks", true, grid_sweep},
      {"bank-model", "the bank model's excess shared wavefronts per stage and block (CPU; --param draw=1 draws the requests)",
       false, bank_model, {"draw"}},
  };
}

}  // namespace reduction
