// The reduction lab's harness: the stage table and the baselines (CUB three ways, the CPU fold);
// the experiments live in experiments.cu, the inputs, the fold and the model in
// reduction_model.cpp. Every stage is generic over the operator (--param op=N); the harness
// prepares seeded input for that operator, calls the implementation (yours or the reference) and
// checks the one result word by word against the left fold. Do not edit.
#include <cuda_runtime.h>

#include <array>
#include <cstring>
#include <memory>
#include <span>
#include <sstream>

#include "gpulab/device_info.hpp"
#include "gpulab/stages.hpp"
#include "reduction.cuh"
#include "reduction_lab.hpp"
#include "reduction_model.hpp"

namespace reduction {
std::vector<gpulab::Experiment> make_experiments();  // experiments.cu
}

namespace reduction::lab {

const std::array<const char*, kOps> kOpNames{"sum", "max", "interval", "affine", "mat2"};

std::string op_list() {
  std::string s;
  for (int i = 0; i < kOps; ++i) s += (i ? ", " : "") + std::to_string(i) + " " + kOpNames[i];
  return s;
}

int op_of(const gpulab::Problem& p) {
  const long long op = p.param("op", 0);
  if (op < 0 || op >= kOps)
    throw gpulab::UsageError("--param op=" + std::to_string(op) + ": unknown operator; use one of " + op_list());
  return static_cast<int>(op);
}

ReduceConfig config_for(const gpulab::Problem& p) {
  ReduceConfig c;
  c.block = p.param_in("block", 256, 64, 1024);
  if (!gpulab::is_pow2(static_cast<std::size_t>(c.block)))
    throw gpulab::UsageError("--param block=" + std::to_string(c.block) + ": must be a power of two (64, 128, ..., 1024)");
  c.blocks_per_sm = p.param_in("blocks_per_sm", 0, 0, 32);
  return c;
}

model::Shape shape_for(const gpulab::Problem& p, int element_bytes) {
  // R(n) depends only on whether the first round needs more than one block (reduction.cuh), so any
  // grid bound predicts it; the device's SM count makes the grid exact when n sets it.
  const int sms = gpulab::gpu_available() ? gpulab::multiprocessors() : 132;
  return {config_for(p).block, std::max(1, sms), element_bytes};
}

}  // namespace reduction::lab

namespace {

using namespace gpulab;
using namespace reduction;
using reduction::lab::config_for;
using reduction::lab::op_of;
namespace rm = reduction::model;
using Instance = std::unique_ptr<StageInstance>;

// ---- inputs and the left fold, once per problem and operator -----------------------------------------

template <class Op>
struct Data {
  std::vector<Value<Op>> input;
  std::vector<std::uint32_t> expected;  // the fold's 32-bit words
};

template <class T>
std::vector<std::uint32_t> words(const T& v) {
  std::vector<std::uint32_t> w(kWords<T>);
  std::memcpy(w.data(), &v, sizeof(T));
  return w;
}

// negative=1 (sum, max): every element in [-1000, -1]: an identity of 0 for max shows.
template <class Op>
std::shared_ptr<const Data<Op>> data_for(const Problem& p) {
  static ProblemCache<Data<Op>> cache(1);
  const bool negative = p.param_in("negative", 0, 0, 1) == 1;
  return cache.get(p.only({"op", "negative"}), [&] {
    Data<Op> d;
    if constexpr (std::is_same_v<Value<Op>, std::int32_t>)
      d.input = negative ? rm::all_negative_input(p.n, p.seed) : rm::make_input<Op>(p.distribution, p.n, p.seed);
    else
      d.input = rm::make_input<Op>(p.distribution, p.n, p.seed);
    d.expected = words(rm::fold<Op>(std::span<const Value<Op>>(d.input)));
    return d;
  });
}

// What a wrong result says: the interval oracle decoded, the poison recognised, max's 0 identity.
template <class Op>
CheckResult judge(std::span<const std::uint32_t> want_words, std::span<const std::uint32_t> got_words, std::size_t n) {
  using T = Value<Op>;
  if (got_words.size() != static_cast<std::size_t>(kWords<T>))
    return CheckResult::fail("the result has " + std::to_string(got_words.size()) + " 32-bit words, expected " +
                             std::to_string(kWords<T>) + " (one " + Op::name + " element)");
  if (std::equal(want_words.begin(), want_words.end(), got_words.begin())) return CheckResult::pass();
  T got, want;
  std::memcpy(&got, got_words.data(), sizeof(T));
  std::memcpy(&want, want_words.data(), sizeof(T));
  std::ostringstream s;
  s << Op::name << " reduction of n=" << n << ": ";
  const bool poisoned = std::all_of(got_words.begin(), got_words.end(), [](std::uint32_t w) { return w == 0xA5A5A5A5u; });
  if (poisoned) {
    s << "d_out still holds the poison 0xA5A5A5A5: the result was never written";
    return CheckResult::fail(s.str());
  }
  if constexpr (std::is_same_v<Op, IntervalOp>) {
    if (got.lo == IntervalOp::kInvalid)
      s << "INVALID: two ranges that do not touch were combined -- an element out of order, twice, or padded "
           "with (0, 0) instead of the identity";
    else if (got.lo == IntervalOp::kEmpty)
      s << "EMPTY (the identity): no element was combined";
    else
      s << "(" << got.lo << ", " << got.hi << "): elements were dropped";
    s << "; expected (" << want.lo << ", " << want.hi << ")";
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    s << "got " << got << ", expected " << want;
    if constexpr (std::is_same_v<Op, MaxOp>)
      if (got == 0 && want < 0) s << " (an identity of 0? max's identity is INT_MIN)";
  } else {
    s << "got words {";
    for (std::size_t i = 0; i < got_words.size(); ++i) s << (i ? ", " : "") << got_words[i];
    s << "}, expected {";
    for (std::size_t i = 0; i < want_words.size(); ++i) s << (i ? ", " : "") << want_words[i];
    s << "} (" << kWords<T> << " uint32 words, row-major)";
  }
  return CheckResult::fail(s.str());
}

// The output of every stage: one element, kept as its 32-bit words (poisoned, saved and compared as
// words, so the checker of the kit works for every operator).
template <class Op, Where W>
class Reduce : public ArrayStage<std::uint32_t, W> {
 public:
  using T = Value<Op>;
  explicit Reduce(const Problem& p)
      : ArrayStage<std::uint32_t, W>(kWords<T>, [this] { return std::span<const std::uint32_t>(data_->expected); }),
        data_(data_for<Op>(p)) {}
  double bytes_moved() const override { return static_cast<double>((n() + 1) * sizeof(T)); }  // read n, write 1
  std::optional<double> elements() const override { return static_cast<double>(n()); }

 protected:
  CheckResult check_values(std::span<const std::uint32_t> got) override {
    return judge<Op>(std::span<const std::uint32_t>(data_->expected), got, n());
  }
  std::size_t n() const { return data_->input.size(); }
  T* result() { return reinterpret_cast<T*>(this->output()); }
  std::shared_ptr<const Data<Op>> data_;
};

template <class Op>
class HostReduce final : public Reduce<Op, Where::cpu> {
 public:
  using Fn = Value<Op> (*)(const Value<Op>*, std::size_t, Op);
  HostReduce(const Problem& p, Fn fn) : Reduce<Op, Where::cpu>(p), fn_(fn) {}
  void run() override {
    const Value<Op> r = fn_(this->data_->input.data(), this->n(), Op{});
    std::memcpy(this->result(), &r, sizeof r);
  }

 private:
  Fn fn_;
};

// The device scratch of reduction.cuh, allocated when the stage is prepared (untimed), with the
// problem's knobs.
class Workspace : public ScratchOwner<ReduceWorkspace> {
 public:
  Workspace(const Problem& p, std::size_t element_bytes) : ScratchOwner(reduce_workspace_bytes(p.n, element_bytes)) {
    view().config = config_for(p);
    view().multiprocessors = multiprocessors();
  }
};

template <class Op>
using GpuFn = void (*)(const Value<Op>*, std::size_t, Value<Op>*, ReduceWorkspace&, Op);

template <class Op>
class DeviceReduce final : public Reduce<Op, Where::gpu> {
 public:
  DeviceReduce(const Problem& p, GpuFn<Op> fn)
      : Reduce<Op, Where::gpu>(p), in_(std::span<const Value<Op>>(this->data_->input)), fn_(fn),
        workspace_(p, sizeof(Value<Op>)) {}
  void run() override { fn_(in_.data(), this->n(), this->result(), workspace_.fresh(), Op{}); }

 private:
  DeviceBuffer<Value<Op>> in_;
  GpuFn<Op> fn_;
  Workspace workspace_;
};

// Calls f(Op{}) for the operator the problem names.
template <class F>
auto with_op(const Problem& p, F&& f) {
  switch (op_of(p)) {
    case 0: return f(SumOp{});
    case 1: return f(MaxOp{});
    case 2: return f(IntervalOp{});
    case 3: return f(AffineOp{});
    default: return f(Mat2Op{});
  }
}

// A commutative-only stage asked for an ordered operator: one clear line, not a wrong answer.
[[noreturn]] void refuse(const std::string& stage, const Problem& p) {
  const int op = op_of(p);
  throw UsageError("stage " + stage + " relies on a commutative operator (seed 004 §5.1), but --param op=" +
                   std::to_string(op) + " is " + reduction::lab::kOpNames[op] +
                   ", which is not; run it with op=0 (sum) or op=1 (max), or use an order-keeping stage "
                   "(pipeline, matrix, ordered-registers)");
}

// `pick(Op{})` gives the stage's function for Op, or nullptr where the stage is commutative-only.
template <class Pick>
std::function<Instance(const Problem&)> gpu_prepare(std::string id, Pick pick) {
  return [id, pick](const Problem& p) -> Instance {
    return with_op(p, [&](auto o) -> Instance {
      using Op = decltype(o);
      const GpuFn<Op> fn = pick(o);
      if (!fn) refuse(id, p);
      return std::make_unique<DeviceReduce<Op>>(p, fn);
    });
  };
}

#define REDUCTION_ANY_OP(fn) [](auto o) -> GpuFn<decltype(o)> { return &fn<decltype(o)>; }
#define REDUCTION_COMMUTATIVE_OP(fn)                                           \
  [](auto o) -> GpuFn<decltype(o)> {                                           \
    if constexpr (decltype(o)::commutative) return &fn<decltype(o)>;           \
    else return nullptr;                                                       \
  }

// The model's launches R(n) (reduction_model.hpp) at the problem's operator and block. The runner
// asks it before it looks for a GPU, so a commutative-only stage refuses an ordered operator here
// too: the refusal shows on any machine.
LaunchModel model_launches(rm::Stage s) {
  return [s](const Problem& p) -> std::optional<long> {
    return with_op(p, [&](auto o) -> std::optional<long> {
      if (!decltype(o)::commutative && !rm::keeps_order(s)) refuse(std::string(rm::to_string(s)), p);
      return rm::launches(s, p.n, reduction::lab::shape_for(p, sizeof(Value<decltype(o)>)));
    });
  };
}

// The kernels and branches the problem reaches (reduction_model.hpp, paths), at its operator's width.
PathModel model_paths(rm::Stage s) {
  return [s](const Problem& p) {
    return with_op(p, [&](auto o) {
      return rm::paths(s, p.n, reduction::lab::shape_for(p, sizeof(Value<decltype(o)>)));
    });
  };
}

// The verdict on saved output, on the host, for the problem's operator (Stage::checked_on_host).
Instance host_check_reduce(const Problem& p) {
  return with_op(p, [&](auto o) -> Instance { return std::make_unique<HostCheck<Reduce<decltype(o), Where::cpu>>>(p); });
}

Stage student(rm::Stage s, std::string title, std::string source, std::string file,
              std::function<Instance(const Problem&)> prepare) {
  return make_stage(std::string(rm::to_string(s)), std::move(title), Where::gpu, std::move(source), std::move(prepare))
      .checked_on_host(host_check_reduce)
      .in_file(std::move(file))
      .takes({"op", "negative", "block"})
      .launches(model_launches(s))
      .reaches(model_paths(s));
}

// The stage's design (reduction_model's shared_use) must fit one block's shared memory on this GPU:
// matrix keeps 32 x 33 values per warp, so at block = 1024 an 8-byte operator needs 270 KB, more
// than any SM offers (227 KB on Hopper). One clear line instead of the launch's CUDA error.
void check_shared_fits(rm::Stage s, const Problem& p) {
  static const auto dev = gpulab::query_device();   // once per process: it is asked per prepare
  if (!dev || dev->shared_memory_per_block_optin == 0) return;
  with_op(p, [&](auto o) {
    const int bytes = static_cast<int>(sizeof(Value<decltype(o)>));
    const std::size_t limit = dev->shared_memory_per_block_optin;
    auto need = [&](int block) -> std::size_t {
      rm::Shape shape = reduction::lab::shape_for(p, bytes);
      shape.block = block;
      return static_cast<std::size_t>(
          rm::shared_use(s, shape, static_cast<int>(dev->shared_memory_per_multiprocessor), bytes / 4).bytes_per_block);
    };
    const int block = reduction::lab::config_for(p).block;
    if (need(block) <= limit) return;
    int fits = block;
    while (fits > 64 && need(fits) > limit) fits /= 2;
    throw UsageError("stage " + std::string(rm::to_string(s)) + " with op=" + reduction::lab::kOpNames[op_of(p)] + " (" +
                     std::to_string(bytes) + "-byte values) and block=" + std::to_string(block) + " needs " +
                     std::to_string(need(block)) + " bytes of shared memory per block; " + dev->name + " allows " +
                     std::to_string(limit) + ": use block=" + std::to_string(fits) + " or smaller");
  });
}

template <class Pick>
Stage student_gpu(rm::Stage s, std::string title, std::string source, std::string file, Pick pick) {
  auto prepare = gpu_prepare(std::string(rm::to_string(s)), pick);
  return student(s, std::move(title), std::move(source), std::move(file), [s, prepare](const Problem& p) {
    check_shared_fits(s, p);
    return prepare(p);
  });
}

template <class Op>
Value<Op> fold_reference(const Value<Op>* in, std::size_t n, Op op) {
  return rm::fold<Op>(std::span<const Value<Op>>(in, n), op);
}

Stage cpu_stage(std::string id, std::string title, std::string source, bool reference) {
  auto prepare = [reference](const Problem& p) -> Instance {
    return with_op(p, [&](auto o) -> Instance {
      using Op = decltype(o);
      return std::make_unique<HostReduce<Op>>(p, reference ? &fold_reference<Op> : &reduce_cpu<Op>);
    });
  };
  if (reference) return make_baseline(std::move(id), std::move(title), Where::cpu, std::move(source), prepare).takes({"op", "negative"});
  return make_stage(std::move(id), std::move(title), Where::cpu, std::move(source), prepare)
      .in_file("reduce_trees.cu")
      .takes({"op", "negative"});
}

template <class Pick>
Stage baseline(std::string id, std::string title, Pick pick) {
  std::string key = id;
  return make_baseline(std::move(id), std::move(title), Where::gpu, "CCCL", gpu_prepare(std::move(key), pick))
      .takes({"op", "negative"});
}

std::vector<Stage> make_stages() {
  using S = rm::Stage;
  return {
      cpu_stage("cpu", "left fold on the host (the oracle)", "seed 004 §5 (definition)", false),
      student_gpu(S::global_tree, "a launch per level in global memory", "seed 003 (kernFindMax), any n",
                  "reduce_trees.cu", REDUCTION_ANY_OP(reduce_global_tree)),
      student_gpu(S::tree_interleaved, "block tree, interleaved addressing: in order, bank conflicts",
                  "seed 004 §5.1, ref. [14] kernel 2", "reduce_trees.cu", REDUCTION_ANY_OP(reduce_tree_interleaved))
          .expects_conflicts(),
      student_gpu(S::tree, "block tree, sequential addressing: conflict-free, commutative only",
                  "seed 004 §5.1.1, Alg. 1", "reduce_trees.cu", REDUCTION_COMMUTATIVE_OP(reduce_tree))
          .conflict_free(),
      student_gpu(S::cascading, "columns folded in registers (128-bit loads), block tree, one small launch",
                  "seed 004 §5.1.2, Alg. 2-3", "reduce_registers.cu", REDUCTION_COMMUTATIVE_OP(reduce_cascading))
          .takes({"blocks_per_sm"}),
      student_gpu(S::pipeline_heap, "pipeline with the heap layout: in order, 2-way conflicts",
                  "seed 004 §5.2 (layout for contrast)", "reduce_pipeline.cu", REDUCTION_ANY_OP(reduce_pipeline_heap))
          .expects_conflicts(),
      student_gpu(S::pipeline, "pipeline with the 2b layout: in order, conflict-free", "seed 004 §5.2, Alg. 4-6, Fig. 8",
                  "reduce_pipeline.cu", REDUCTION_ANY_OP(reduce_pipeline))
          .conflict_free(),
      student_gpu(S::matrix, "32 x 33 staging per warp, lane c folds 32 consecutive elements", "seed 004 §5.2.1",
                  "reduce_pipeline.cu", REDUCTION_ANY_OP(reduce_matrix))
          .conflict_free(),
      student_gpu(S::ordered_registers, "blocked 128-bit loads, in-order fold, ordered warp shuffles",
                  "beyond the seeds (challenge)", "reduce_registers.cu", REDUCTION_ANY_OP(reduce_ordered_registers))
          .takes({"blocks_per_sm"}),

      cpu_stage("cpu-reference", "the harness's left fold", "std", true),
      // CUB's launch count is CUB's business (no model); the hook only refuses an ordered operator
      // before the runner looks for a GPU, as the commutative student stages do.
      baseline("cub-sum", "cub::DeviceReduce (commutative operators only)", REDUCTION_COMMUTATIVE_OP(reduce_cub_device))
          .launches([](const Problem& p) -> std::optional<long> {
            if (op_of(p) >= reduction::lab::interval) refuse("cub-sum", p);
            return std::nullopt;
          }),
      baseline("cub-block-raking", "cub::BlockReduce RAKING kernel + one block (keeps order)",
               REDUCTION_ANY_OP(reduce_cub_block_raking)),
      baseline("cub-scan-last", "cub::DeviceScan::InclusiveScan, last element (keeps order)",
               REDUCTION_ANY_OP(reduce_cub_scan_last)),
  };
}

}  // namespace

namespace gpulab {

Lab make_lab() {
  Lab lab;
  lab.id = "reduction";
  lab.title = "Reduction: trees, cascading, and the pipeline for non-commutative operators";
  lab.student_files = {"reduce_trees.cu", "reduce_registers.cu", "reduce_pipeline.cu", "reduce_device.cuh"};
  lab.default_n = std::size_t{1} << 24;
  lab.baseline_cpu_stage = "cpu";
  lab.stages = make_stages();
  lab.experiments = reduction::make_experiments();
  return lab;
}

}  // namespace gpulab
