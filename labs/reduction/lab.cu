// The reduction lab's harness: the code of each stage of lab.toml (the facts are there), the
// experiments in experiments.cu, the inputs, the fold and the model in reduction_model.cpp. Every
// stage is generic over the operator (--param op); the harness prepares seeded input for that
// operator, calls the implementation (yours or the reference) and checks the one result word by
// word against the left fold. Do not edit.
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <span>

#include "gpulab/device_info.hpp"
#include "gpulab/fresh_input.cuh"
#include "gpulab/manifest.hpp"
#include "gpulab/stages.hpp"
#include "reduction.cuh"
#include "reduction_lab.hpp"
#include "reduction_model.hpp"

namespace reduction {
std::vector<gpulab::Experiment> make_experiments();  // experiments.cu
}

namespace reduction::lab {

ReduceConfig config_for(const gpulab::Problem& p) {
  return {static_cast<int>(p.knob("block")), static_cast<int>(p.param("blocks_per_sm", 0))};
}

model::Shape shape_for(const gpulab::Problem& p, int element_bytes) {
  // R(n) depends only on whether the first round needs more than one block (reduction.cuh), so any
  // grid bound predicts it; the device's SM count makes the grid exact when n sets it.
  const int sms = gpulab::gpu_available() ? gpulab::multiprocessors() : 132;
  return {config_for(p).block, std::max(1, sms), element_bytes};
}

}  // namespace reduction::lab

namespace gpulab {

namespace {

using namespace reduction;
namespace rm = reduction::model;
using Instance = std::unique_ptr<StageInstance>;

// ---- the problem: the input for the operator and its left fold, as 32-bit words ----------------------

template <class Op>
struct Data {
  std::vector<Value<Op>> input;
  std::vector<std::uint32_t> expected;
};

// negative=1 (sum, max): every element in [-1000, -1]: an identity of 0 for max shows.
template <class Op>
Data<Op> make_data(const Problem& p) {
  Data<Op> d;
  if constexpr (std::is_same_v<Value<Op>, std::int32_t>)
    d.input = p.knob("negative") ? rm::all_negative_input(p.n, p.seed) : rm::make_input<Op>(p.distribution, p.n, p.seed);
  else
    d.input = rm::make_input<Op>(p.distribution, p.n, p.seed);
  const Value<Op> r = rm::fold<Op>(std::span<const Value<Op>>(d.input));
  d.expected.resize(kWords<Value<Op>>);
  std::memcpy(d.expected.data(), &r, sizeof r);
  return d;
}

template <class Op>
std::shared_ptr<const Data<Op>> data_for(const Problem& p) {
  return problem_data<Data<Op>>(p.only({"op", "negative"}), [&] { return make_data<Op>(p); }, 1);
}

// Every stage's output: one element, kept as its 32-bit words (poisoned, saved and compared as words).
template <class Op>
ArrayOutput<std::uint32_t, Data<Op>> output() {
  return {data_for<Op>, [](const Data<Op>& d) { return std::span<const std::uint32_t>(d.expected); },
          [](const Data<Op>& d) { return static_cast<double>((d.input.size() + 1) * sizeof(Value<Op>)); },  // read n, write 1
          [](const Data<Op>& d, std::span<const std::uint32_t> got) {
            return rm::check_fold<Op>(d.expected, got, d.input.size());
          },
          [](const Data<Op>& d) { return std::optional<double>(static_cast<double>(d.input.size())); }};
}

// f(Op{}) for the problem's operator (lab.toml's op, in reduction_lab.hpp's order).
template <class F>
auto with_op(const Problem& p, F&& f) {
  switch (p.knob("op")) {
    case lab::sum: return f(SumOp{});
    case lab::max: return f(MaxOp{});
    case lab::interval: return f(IntervalOp{});
    case lab::affine: return f(AffineOp{});
    default: return f(Mat2Op{});
  }
}

template <class Op>
using GpuFn = void (*)(const Value<Op>*, std::size_t, Value<Op>*, ReduceWorkspace&, Op);

// The workspace a reduction gets (reduction.cuh), with the problem's knobs.
template <class Op>
std::shared_ptr<ScratchOwner<ReduceWorkspace>> workspace(const Problem& p) {
  return scratch<ReduceWorkspace>(reduce_workspace_bytes(p.n, sizeof(Value<Op>)), [&](ReduceWorkspace& w) {
    w.config = lab::config_for(p);
    w.multiprocessors = multiprocessors();
  });
}

// ---- the replay guard (StageInstance::redraw): each timed run folds a fresh draw of the input ----
// A draw is a gather from a pool of the problem's generator (gpulab/fresh_input.cuh: a fold's work
// does not depend on the values; a sum or max over another half of the pool), and the run is judged
// against the harness's cub-scan-last fold of the same draw (reduction_cub.cu: any operator, exact),
// on a workspace of its own, untimed.
template <class Op>
struct PoolTag {};
template <class Op>
std::shared_ptr<const DrawPool<Value<Op>>> input_pool(const Problem& p) {
  return draw_pool<Value<Op>, PoolTag<Op>>(p.only({"op", "negative"}), [&](std::size_t count, std::uint64_t seed) {
    Problem wide = p;
    wide.n = count;
    wide.seed = seed;
    return make_data<Op>(wide).input;
  });
}

template <class Op>
DeviceRun<std::uint32_t> guarded(std::function<void(std::uint32_t*)> run, std::shared_ptr<DeviceBuffer<Value<Op>>> in,
                                 const Problem& p) {
  using V = Value<Op>;
  auto judge_ws = workspace<Op>(p);
  // The draw's fold, made right after the draw, before the run (which may write to its input).
  auto want = std::make_shared<std::vector<std::uint32_t>>(kWords<V>);
  auto expected = std::make_shared<DeviceBuffer<V>>(1);
  return {std::move(run),
          [in, judge_ws, want, expected, pool = input_pool<Op>(p)](std::uint64_t seed) {
            pool->draw(in->data(), in->size(), seed);
            ReduceWorkspace& ws = judge_ws->view();
            ws.reset();
            reduce_cub_scan_last<Op>(in->data(), in->size(), expected->data(), ws, Op{});
            GPULAB_CUDA_CHECK(cudaMemcpy(want->data(), expected->data(), sizeof(V), cudaMemcpyDeviceToHost));
          },
          [want, n = in->size()](const std::uint32_t* out) {
            std::vector<std::uint32_t> got(kWords<V>);
            GPULAB_CUDA_CHECK(cudaMemcpy(got.data(), out, sizeof(V), cudaMemcpyDeviceToHost));
            return rm::check_fold<Op>(*want, got, n);
          }};
}

// A GPU stage for every operator: `pick(Op{})` gives its function (nullptr where lab.toml's
// `accepts` already refused the operator: a commutative-only stage is not built for the others).
template <class Pick>
Stage::Code gpu(Pick pick, std::function<void(const Problem&)> before = {}) {
  auto code = [pick](auto o) {
    using Op = decltype(o);
    const GpuFn<Op> fn = pick(o);
    return device_stage<std::uint32_t, Data<Op>>(output<Op>(), [fn](const std::shared_ptr<const Data<Op>>& d, const Problem& p) {
      if (!fn) throw std::logic_error("this stage is not built for operator " + std::string(Op::name));
      auto in = upload_input(d->input);
      auto ws = workspace<Op>(p);
      return guarded<Op>(
          [fn, in, ws](std::uint32_t* out) { fn(in->data(), in->size(), reinterpret_cast<Value<Op>*>(out), ws->fresh(), Op{}); },
          in, p);
    });
  };
  return {[code, before](const Problem& p) {
            if (before) before(p);
            return with_op(p, [&](auto o) { return code(o).prepare(p); });
          },
          [code](const Problem& p) { return with_op(p, [&](auto o) { return code(o).check_on_host(p); }); }};
}

#define REDUCTION_ANY_OP(fn) [](auto o) -> GpuFn<decltype(o)> { return &fn<decltype(o)>; }
#define REDUCTION_COMMUTATIVE_OP(fn)                                           \
  [](auto o) -> GpuFn<decltype(o)> {                                           \
    if constexpr (decltype(o)::commutative) return &fn<decltype(o)>;           \
    else return nullptr;                                                       \
  }

// The model (reduction_model.hpp) at the problem's operator width: launches R(n) and paths.
LaunchModel launches(rm::Stage s) {
  return [s](const Problem& p) -> std::optional<long> {
    return with_op(p, [&](auto o) { return rm::launches(s, p.n, lab::shape_for(p, sizeof(Value<decltype(o)>))); });
  };
}
PathModel paths(rm::Stage s) {
  return [s](const Problem& p) {
    return with_op(p, [&](auto o) { return rm::paths(s, p.n, lab::shape_for(p, sizeof(Value<decltype(o)>))); });
  };
}

// The stage's design (reduction_model's shared_use) must fit one block's shared memory on this GPU:
// matrix keeps 32 x 33 values per warp, so at block = 1024 an 8-byte operator needs 270 KB, more
// than any SM offers (227 KB on Hopper). One clear line instead of the launch's CUDA error.
void check_shared_fits(rm::Stage s, const Problem& p) {
  static const auto dev = query_device();   // once per process: it is asked per prepare
  if (!dev || dev->shared_memory_per_block_optin == 0) return;
  with_op(p, [&](auto o) {
    const int bytes = static_cast<int>(sizeof(Value<decltype(o)>));
    auto need = [&](int block) {
      rm::Shape shape = lab::shape_for(p, bytes);
      shape.block = block;
      return static_cast<std::size_t>(
          rm::shared_use(s, shape, static_cast<int>(dev->shared_memory_per_multiprocessor), bytes / 4).bytes_per_block);
    };
    const int block = lab::config_for(p).block;
    if (need(block) <= dev->shared_memory_per_block_optin) return;
    int fits = block;
    while (fits > 64 && need(fits) > dev->shared_memory_per_block_optin) fits /= 2;
    throw UsageError("stage " + std::string(rm::to_string(s)) + " with op=" + o.name + " (" + std::to_string(bytes) +
                     "-byte values) and block=" + std::to_string(block) + " needs " + std::to_string(need(block)) +
                     " bytes of shared memory per block; " + dev->name + " allows " +
                     std::to_string(dev->shared_memory_per_block_optin) + ": use block=" + std::to_string(fits) + " or smaller");
  });
}

// A CPU stage: the student's reduce_cpu, or the harness's own fold.
Stage::Code cpu(bool reference) {
  return {[reference](const Problem& p) {
    return with_op(p, [&](auto o) -> Instance {
      using Op = decltype(o);
      return host_stage<std::uint32_t, Data<Op>>(output<Op>(), [reference](const Data<Op>& d, std::uint32_t* out) {
               const Value<Op> r = reference ? rm::fold<Op>(std::span<const Value<Op>>(d.input))
                                             : reduce_cpu<Op>(d.input.data(), d.input.size(), Op{});
               std::memcpy(out, &r, sizeof r);
             }).prepare(p);
    });
  }};
}

}  // namespace

Lab make_lab() {
  Lab lab = lab_from_manifest();
  using S = rm::Stage;
  lab.bind("cpu", cpu(false));
  auto student = [&](S s, Stage::Code code) -> Stage& {
    return lab.bind(rm::to_string(s), std::move(code)).launches(launches(s)).reaches(paths(s));
  };
  auto fits = [](S s) { return [s](const Problem& p) { check_shared_fits(s, p); }; };
  student(S::global_tree, gpu(REDUCTION_ANY_OP(reduce_global_tree), fits(S::global_tree)));
  student(S::tree_interleaved, gpu(REDUCTION_ANY_OP(reduce_tree_interleaved), fits(S::tree_interleaved)));
  student(S::tree, gpu(REDUCTION_COMMUTATIVE_OP(reduce_tree), fits(S::tree)));
  student(S::cascading, gpu(REDUCTION_COMMUTATIVE_OP(reduce_cascading), fits(S::cascading)));
  student(S::pipeline_heap, gpu(REDUCTION_ANY_OP(reduce_pipeline_heap), fits(S::pipeline_heap)));
  student(S::pipeline, gpu(REDUCTION_ANY_OP(reduce_pipeline), fits(S::pipeline)));
  student(S::matrix, gpu(REDUCTION_ANY_OP(reduce_matrix), fits(S::matrix)));
  student(S::ordered_registers, gpu(REDUCTION_ANY_OP(reduce_ordered_registers), fits(S::ordered_registers)));
  lab.bind("cpu-reference", cpu(true));
  // CUB's launch count is CUB's business (no model).
  lab.bind("cub-sum", gpu(REDUCTION_COMMUTATIVE_OP(reduce_cub_device)));
  lab.bind("cub-block-raking", gpu(REDUCTION_ANY_OP(reduce_cub_block_raking)));
  lab.bind("cub-scan-last", gpu(REDUCTION_ANY_OP(reduce_cub_scan_last)));
  lab.experiments = reduction::make_experiments();
  // The operators' order in reduction_lab.hpp is lab.toml's: a reordered manifest is caught here.
  const Knob* op = lab.find_knob("op");
  if (!op || op->values != std::vector<std::string>{"sum", "max", "interval", "affine", "mat2"})
    throw std::logic_error("labs/reduction/lab.toml: knob op must list sum, max, interval, affine, mat2 (reduction_lab.hpp)");
  return lab;
}

}  // namespace gpulab
