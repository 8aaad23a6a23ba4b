// The scan lab's harness: the code of each stage of lab.toml (the facts are there), the
// experiments in experiments.cu, the inputs and CPU references in scan_model.cpp. It prepares
// seeded input, calls the implementation (yours or the reference) and checks the result against
// the CPU. Do not edit.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <span>
#include <tuple>
#include <utility>

#include "gpulab/device_info.hpp"
#include "gpulab/fresh_input.cuh"
#include "gpulab/manifest.hpp"
#include "gpulab/stages.hpp"
#include "scan.cuh"
#include "scan_model.hpp"

namespace scan {
std::vector<gpulab::Experiment> make_experiments();  // experiments.cu
}

namespace gpulab {

namespace {

using Instance = std::unique_ptr<StageInstance>;

// ---- the problems: a scan, a colored scan, a compaction (inputs and CPU results, once each) --------

struct ScanData {
  std::vector<int> input, expected;
};
struct ColoredData {
  std::vector<int> values, expected;
  std::vector<std::uint8_t> colors;
};
struct CompactData {
  std::vector<int> input, expected;
};

// The problems' data, made once per problem (problem_data).
ScanData make_scan_data(const Problem& p) {
  ScanData d{scan::model::scan_input(p.distribution, p.n, p.seed), {}};
  d.expected = scan::model::exclusive_scan_reference(d.input);
  return d;
}
ColoredData make_colored_data(const Problem& p) {
  const int colors = static_cast<int>(p.knob("colors"));
  ColoredData d{scan::model::scan_input(p.distribution, p.n, p.seed), {}, scan::model::color_input(p.n, p.seed, colors)};
  d.expected = scan::model::colored_scan_reference(d.values, d.colors);
  return d;
}
CompactData make_compact_data(const Problem& p) {
  CompactData d{scan::model::compaction_input(p.distribution, p.n, p.seed, static_cast<int>(p.knob("zeros"))), {}};
  d.expected = scan::model::compact_reference(d.input);
  return d;
}

const ArrayOutput<int, ScanData> kScan{
    [](const Problem& p) { return problem_data<ScanData>(p.only({}), [&] { return make_scan_data(p); }); },
    [](const ScanData& d) { return std::span<const int>(d.expected); },
    [](const ScanData& d) { return 8.0 * static_cast<double>(d.input.size()); }};  // read n, write n

const ArrayOutput<int, ColoredData> kColored{
    [](const Problem& p) { return problem_data<ColoredData>(p.only({"colors"}), [&] { return make_colored_data(p); }); },
    [](const ColoredData& d) { return std::span<const int>(d.expected); },
    [](const ColoredData& d) { return 9.0 * static_cast<double>(d.values.size()); }};  // 4-byte values, 1-byte colors, 4-byte out

std::shared_ptr<const CompactData> compact_data(const Problem& p) {
  return problem_data<CompactData>(p.only({"zeros"}), [&] { return make_compact_data(p); });
}

// The scratch every student GPU stage gets (scan.cuh), with the problem's knobs.
std::shared_ptr<ScratchOwner<scan::ScanWorkspace>> workspace(const Problem& p) {
  return scratch<scan::ScanWorkspace>(scan::scan_workspace_ints(p.n) * sizeof(int), [&](scan::ScanWorkspace& ws) {
    ws.config = {static_cast<int>(p.knob("block")), static_cast<int>(p.knob("alpha")), static_cast<int>(p.knob("colors"))};
    ws.multiprocessors = multiprocessors();
  });
}

// ---- the replay guard (StageInstance::redraw): each timed run scans a fresh draw of the input ----
// A draw is a gather from a pool of the problem's generator (gpulab/fresh_input.cuh: a scan's work
// does not depend on the values) and the run is judged on the device: an exclusive sum exactly
// (out[i + 1] - out[i] = in[i]), a compaction against CUB's DeviceSelect of the same draw.
struct PoolTag {};
std::shared_ptr<const DrawPool<int>> input_pool(const Problem& p, int zeros = -1) {
  return draw_pool<int, PoolTag>(p.only({}).with("zeros", zeros), [&](std::size_t count, std::uint64_t seed) {
    return zeros < 0 ? scan::model::scan_input(p.distribution, count, seed)
                     : scan::model::compaction_input(p.distribution, count, seed, zeros);
  });
}

using Input = std::shared_ptr<DeviceBuffer<int>>;

DeviceRun<int> guarded_scan(std::function<void(int*)> run, const Input& in, const Problem& p) {
  const std::size_t n = in->size();
  return with_fresh_input<int, int>(
      std::move(run), in, [pool = input_pool(p), n](int* input, std::uint64_t seed) { pool->draw(input, n, seed); },
      [n](const int* drawn, const int* out) { return judge_exclusive_sum_on_device(drawn, out, n); });
}

using ScanFn = void (*)(const int*, int*, std::size_t, scan::ScanWorkspace&);
Stage::Code gpu_scan(ScanFn fn) {
  return device_stage<int, ScanData>(kScan, [fn](const std::shared_ptr<const ScanData>& d, const Problem& p) {
    auto in = upload_input(d->input);
    auto ws = workspace(p);
    return guarded_scan([fn, in, ws](int* out) { fn(in->data(), out, in->size(), ws->fresh()); }, in, p);
  });
}

using ColoredFn = void (*)(const int*, const std::uint8_t*, int*, std::size_t, scan::ScanWorkspace&);
Stage::Code colored(ColoredFn fn) {
  return device_stage<int, ColoredData>(kColored, [fn](const std::shared_ptr<const ColoredData>& d, const Problem& p) {
    auto values = upload(d->values);
    auto colors = upload(d->colors);
    auto ws = workspace(p);
    return [=](int* out) { fn(values->data(), colors->data(), out, values->size(), ws->fresh()); };
  });
}

// CUB's scan: its temporary storage allocated here, untimed (scan_cub.cu).
Stage::Code cub_scan() {
  return device_stage<int, ScanData>(kScan, [](const std::shared_ptr<const ScanData>& d, const Problem& p) {
    auto in = upload_input(d->input);
    auto temp = std::make_shared<DeviceBuffer<unsigned char>>(std::max<std::size_t>(scan::cub_exclusive_sum_bytes(d->input.size()), 16));
    return guarded_scan(
        [in, temp](int* out) { scan::cub_exclusive_sum(temp->data(), temp->size(), in->data(), out, in->size()); }, in, p);
  });
}

// ---- compaction: the kept elements and, apart from them, the count (a write past n stays out of
// bounds); saved output is the count, then the kept elements ----------------------------------------

template <Where W>
class Compact : public ArrayStage<int, W> {
 public:
  // run(data, out, count): the stage's code (none in a host check).
  using Run = std::function<void(const CompactData&, int*, int*)>;
  explicit Compact(const Problem& p, Run run = {})
      : ArrayStage<int, W>(p.n, [] { return std::span<const int>(); }), data_(compact_data(p)), run_(std::move(run)) {}
  // The replay guard (device_compact sets it): `draw(seed)` rewrites the device input and makes
  // `*expected`, the draw's compaction, which check() then judges against.
  void guard(std::function<void(std::uint64_t)> draw, std::shared_ptr<const std::vector<int>> expected) {
    this->set_guard(std::move(draw));
    drawn_expected_ = std::move(expected);
  }
  void reset_output() override {
    ArrayStage<int, W>::reset_output();
    if constexpr (W == Where::gpu) count_.poison();
    else count_[0] = -1;
  }
  void run() override { run_(*data_, this->output(), count_.data()); }
  CheckResult check() override {
    const int count = read_count();
    return scan::model::check_compaction(this->drawn() ? *drawn_expected_ : data_->expected, count, this->download());
  }
  std::optional<std::vector<unsigned char>> output_bytes() override {
    const int count = read_count();
    const auto out = this->download();
    std::vector<int> saved{count};
    if (count >= 0 && static_cast<std::size_t>(count) <= out.size()) saved.insert(saved.end(), out.begin(), out.begin() + count);
    return to_bytes<int>(saved);
  }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    const auto values = from_bytes<int>(bytes);
    if (!values || values->empty()) return CheckResult::fail("saved compaction output is not a count followed by ints");
    if (values->front() >= 0 && static_cast<std::size_t>(values->front()) != values->size() - 1)
      return CheckResult::fail("saved compaction output: the count is " + std::to_string(values->front()) + " but " +
                               std::to_string(values->size() - 1) + " elements were saved");
    return scan::model::check_compaction(data_->expected, values->front(), std::span<const int>(*values).subspan(1));
  }
  double bytes_moved() const override { return 4.0 * static_cast<double>(this->size() + data_->expected.size()); }

 private:
  int read_count() {
    if constexpr (W == Where::gpu) {
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
      return count_.download()[0];
    } else {
      return count_[0];
    }
  }
  std::shared_ptr<const CompactData> data_;
  Run run_;
  std::shared_ptr<const std::vector<int>> drawn_expected_;
  std::conditional_t<W == Where::gpu, DeviceBuffer<int>, std::vector<int>> count_ = decltype(count_)(1);
};

Stage::Code host_compact(std::size_t (*fn)(const int*, int*, std::size_t)) {
  return {[fn](const Problem& p) -> Instance {
    return std::make_unique<Compact<Where::cpu>>(p, [fn](const CompactData& d, int* out, int* count) {
      *count = static_cast<int>(fn(d.input.data(), out, d.input.size()));
    });
  }};
}

// setup(problem, device input) -> what a run does with (out, count): the student's compact or CUB's.
Stage::Code device_compact(std::function<std::function<void(const int*, int*, int*, std::size_t)>(const Problem&)> setup) {
  return {[setup](const Problem& p) -> Instance {
            auto in = upload_input(compact_data(p)->input);
            auto call = setup(p);
            auto stage = std::make_unique<Compact<Where::gpu>>(
                p, [in, call](const CompactData& d, int* out, int* count) { call(in->data(), out, count, d.input.size()); });
            // The draw's compaction by CUB's DeviceSelect (the harness's, in scan_cub.cu), made right
            // after the draw, before the run (which may write to its input), untimed.
            auto temp = std::make_shared<DeviceBuffer<unsigned char>>(std::max<std::size_t>(scan::cub_select_nonzero_bytes(p.n), 16));
            auto kept = std::make_shared<DeviceBuffer<int>>(p.n);
            auto count = std::make_shared<DeviceBuffer<int>>(1);
            auto expected = std::make_shared<std::vector<int>>();
            stage->guard(
                [in, temp, kept, count, expected, pool = input_pool(p, static_cast<int>(p.knob("zeros")))](std::uint64_t seed) {
                  pool->draw(in->data(), in->size(), seed);
                  scan::cub_select_nonzero(temp->data(), temp->size(), in->data(), kept->data(), count->data(), in->size());
                  *expected = kept->download();
                  expected->resize(static_cast<std::size_t>(std::max(0, count->download()[0])));
                },
                expected);
            return stage;
          },
          host_check<Compact<Where::cpu>>()};
}

// ---- the model: launches R(n) (seed 000 §2) and paths --------------------------------------------

long naive_rounds(const Problem& p) { return p.n == 0 ? 0 : std::max(1, ceil_log2(p.n)); }
// Levels of the shared-memory recursion: each level's blocks of 2B elements leave one sum each.
long shared_rounds(const Problem& p) {
  if (p.n == 0) return 0;
  const std::size_t per_block = 2 * static_cast<std::size_t>(p.knob("block"));
  long levels = 1;
  for (std::size_t m = p.n; m > per_block; m = ceil_div(m, per_block)) ++levels;
  return 2 * levels - 1;
}
PathModel paths(std::string id) {
  return [id](const Problem& p) {
    const scan::ScanConfig c{static_cast<int>(p.knob("block")), static_cast<int>(p.knob("alpha")),
                             static_cast<int>(p.knob("colors"))};
    return scan::model::paths(id, p.n, c, static_cast<int>(p.knob("zeros")));
  };
}

void cpu_reference_scan(const ScanData& d, int* out) {
  std::uint32_t running = 0;
  for (std::size_t i = 0; i < d.input.size(); ++i) {
    out[i] = static_cast<int>(running);
    running += static_cast<std::uint32_t>(d.input[i]);
  }
}

}  // namespace

Lab make_lab() {
  Lab lab = lab_from_manifest();
  lab.bind("cpu", host_stage<int, ScanData>(kScan, [](const ScanData& d, int* out) {
    scan::exclusive_scan_cpu(d.input.data(), out, d.input.size());
  }));
  lab.bind("cpu-compact", host_compact(&scan::compact_cpu));
  lab.bind("cpu-compact-scan", host_compact(&scan::compact_cpu_with_scan));
  const LaunchModel twice = [](const Problem& p) -> std::optional<long> { return 2 * naive_rounds(p); };
  const LaunchModel three = [](const Problem& p) -> std::optional<long> { return p.n == 0 ? 0 : 3; };
  const LaunchModel one = [](const Problem& p) -> std::optional<long> { return p.n == 0 ? 0 : 1; };
  for (const auto& [id, fn, rounds] : std::vector<std::tuple<const char*, ScanFn, LaunchModel>>{
           {"naive", &scan::exclusive_scan_naive, naive_rounds},
           {"work-efficient", &scan::exclusive_scan_work_efficient, twice},
           {"work-efficient-compact-threads", &scan::exclusive_scan_work_efficient_compact_threads, twice},
           {"shared", &scan::exclusive_scan_shared, shared_rounds},
           {"shared-conflict-free", &scan::exclusive_scan_shared_conflict_free, shared_rounds},
           {"three-round", &scan::exclusive_scan_three_round, three},
           {"alpha-matrix", &scan::exclusive_scan_alpha_matrix, three},
           {"single-pass", &scan::exclusive_scan_single_pass, one}})
    lab.bind(id, gpu_scan(fn)).launches(rounds).reaches(paths(id));
  for (const auto& [id, fn] : {std::pair{"colored-direct", &scan::colored_exclusive_scan_direct},
                               std::pair{"colored-conflict-free", &scan::colored_exclusive_scan_conflict_free}})
    lab.bind(id, colored(fn)).launches(three).reaches(paths(id));
  // compact's launches are 2 + those of the scan it uses: no prediction.
  lab.bind("compact", device_compact([](const Problem& p) {
             auto ws = workspace(p);
             return [ws](const int* in, int* out, int* count, std::size_t n) { scan::compact(in, out, count, n, ws->fresh()); };
           })).reaches(paths("compact"));

  lab.bind("cpu-reference", host_stage<int, ScanData>(kScan, cpu_reference_scan));
  lab.bind("cub", cub_scan());
  // Thrust allocates its temporary storage inside the call, as a user of thrust::exclusive_scan pays.
  lab.bind("thrust", device_stage<int, ScanData>(kScan, [](const std::shared_ptr<const ScanData>& d, const Problem& p) {
    auto in = upload_input(d->input);
    return guarded_scan([in](int* out) { scan::thrust_exclusive_scan(in->data(), out, in->size()); }, in, p);
  }));
  lab.bind("cub-compact", device_compact([](const Problem& p) {
    auto temp = std::make_shared<DeviceBuffer<unsigned char>>(std::max<std::size_t>(scan::cub_select_nonzero_bytes(p.n), 16));
    return [temp](const int* in, int* out, int* count, std::size_t n) {
      scan::cub_select_nonzero(temp->data(), temp->size(), in, out, count, n);
    };
  }));
  lab.experiments = scan::make_experiments();
  return lab;
}

}  // namespace gpulab
