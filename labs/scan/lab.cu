// The scan lab's harness: the stage table and the baselines (CUB, Thrust, the CPU reference); the
// experiments live in experiments.cu, the inputs and CPU references in scan_model.cpp. It prepares
// seeded input, calls the implementation (yours or the reference) and checks the result against
// the CPU. Do not edit.
#include <cuda_runtime.h>


#include <algorithm>
#include <memory>
#include <span>

#include "gpulab/device_info.hpp"
#include "gpulab/stages.hpp"
#include "scan.cuh"
#include "scan_model.hpp"

namespace scan {
std::vector<gpulab::Experiment> make_experiments();  // experiments.cu
}

namespace {

using namespace gpulab;
using Instance = std::unique_ptr<StageInstance>;

// ---- knobs (--param key=value) ----------------------------------------------------------------------

scan::ScanConfig config_for(const Problem& p) {
  scan::ScanConfig c;
  c.block = p.param_in("block", 256, 32, 1024);
  if (!is_pow2(static_cast<std::size_t>(c.block)))
    throw UsageError("--param block=" + std::to_string(c.block) + ": must be a power of two (32, 64, ..., 1024)");
  c.alpha = p.param_in("alpha", 8, 1, 32);
  c.colors = p.param_in("colors", 8, 1, scan::kMaxColors);
  return c;
}

// The device scratch every student GPU stage gets (scan.cuh), with the problem's knobs.
class Workspace : public ScratchOwner<scan::ScanWorkspace> {
 public:
  explicit Workspace(const Problem& p) : ScratchOwner(scan::scan_workspace_ints(p.n) * sizeof(int)) {
    view().config = config_for(p);
    view().multiprocessors = multiprocessors();
  }
};

// ---- inputs and CPU results, once per problem (the knobs they depend on: colors, zeros) -----------

struct ScanData {
  std::vector<int> input, expected;
};
std::shared_ptr<const ScanData> scan_data(const Problem& p) {
  static ProblemCache<ScanData> cache(2);
  return cache.get(p.only({}), [&] {
    ScanData d{scan::model::scan_input(p.distribution, p.n, p.seed), {}};
    d.expected = scan::model::exclusive_scan_reference(d.input);
    return d;
  });
}

struct ColoredData {
  std::vector<int> values, expected;
  std::vector<std::uint8_t> colors;
};
std::shared_ptr<const ColoredData> colored_data(const Problem& p) {
  static ProblemCache<ColoredData> cache(2);
  const int colors = config_for(p).colors;
  return cache.get(p.only({"colors"}), [&] {
    ColoredData d{scan::model::scan_input(p.distribution, p.n, p.seed), {}, scan::model::color_input(p.n, p.seed, colors)};
    d.expected = scan::model::colored_scan_reference(d.values, d.colors);
    return d;
  });
}

struct CompactData {
  std::vector<int> input, expected;
};
std::shared_ptr<const CompactData> compact_data(const Problem& p) {
  static ProblemCache<CompactData> cache(2);
  const int zeros = p.param_in("zeros", 25, 0, 100);
  return cache.get(p.only({"zeros"}), [&] {
    CompactData d{scan::model::compaction_input(p.distribution, p.n, p.seed, zeros), {}};
    d.expected = scan::model::compact_reference(d.input);
    return d;
  });
}

// ---- scans: the output is one array of n ints ------------------------------------------------------

template <Where W>
class Scan : public ArrayStage<int, W> {
 public:
  explicit Scan(const Problem& p)
      : ArrayStage<int, W>(p.n, [this] { return std::span<const int>(data_->expected); }), data_(scan_data(p)) {}
  double bytes_moved() const override { return 8.0 * static_cast<double>(this->size()); }  // read n, write n

 protected:
  std::shared_ptr<const ScanData> data_;
};

class HostScan final : public Scan<Where::cpu> {
 public:
  using Fn = void (*)(const int*, int*, std::size_t);
  HostScan(const Problem& p, Fn fn) : Scan(p), fn_(fn) {}
  void run() override { fn_(data_->input.data(), output(), size()); }

 private:
  Fn fn_;
};

// A GPU scan: the input on the device; `call` runs the student's function, CUB or Thrust.
class DeviceScan final : public Scan<Where::gpu> {
 public:
  using Call = std::function<void(const int*, int*, std::size_t)>;
  DeviceScan(const Problem& p, Call call) : Scan(p), in_(std::span<const int>(data_->input)), call_(std::move(call)) {}
  void run() override { call_(in_.data(), output(), size()); }

 private:
  DeviceBuffer<int> in_;
  Call call_;
};

using StudentScanFn = void (*)(const int*, int*, std::size_t, scan::ScanWorkspace&);
Instance student_scan(const Problem& p, StudentScanFn fn) {
  auto ws = std::make_shared<Workspace>(p);
  return std::make_unique<DeviceScan>(p, [fn, ws](const int* in, int* out, std::size_t n) { fn(in, out, n, ws->fresh()); });
}

// CUB's single-pass scan (decoupled look-back, scan_cub.cu); its temporary storage is allocated
// here, untimed.
Instance cub_scan(const Problem& p) {
  auto temp = std::make_shared<DeviceBuffer<unsigned char>>(std::max<std::size_t>(scan::cub_exclusive_sum_bytes(p.n), 16));
  return std::make_unique<DeviceScan>(p, [temp](const int* in, int* out, std::size_t n) {
    scan::cub_exclusive_sum(temp->data(), temp->size(), in, out, n);
  });
}

// The output of a colored scan (its host variant checks saved output: Stage::checked_on_host).
template <Where W>
class Colored : public ArrayStage<int, W> {
 public:
  explicit Colored(const Problem& p)
      : ArrayStage<int, W>(p.n, [this] { return std::span<const int>(data_->expected); }), data_(colored_data(p)) {}
  double bytes_moved() const override { return 9.0 * static_cast<double>(this->size()); }  // 4-byte values, 1-byte colors, 4-byte out

 protected:
  std::shared_ptr<const ColoredData> data_;
};

class ColoredScan final : public Colored<Where::gpu> {
 public:
  using Fn = void (*)(const int*, const std::uint8_t*, int*, std::size_t, scan::ScanWorkspace&);
  ColoredScan(const Problem& p, Fn fn)
      : Colored(p), values_(std::span<const int>(data_->values)), colors_(std::span<const std::uint8_t>(data_->colors)),
        fn_(fn), workspace_(p) {}
  void run() override { fn_(values_.data(), colors_.data(), output(), size(), workspace_.fresh()); }

 private:
  DeviceBuffer<int> values_;
  DeviceBuffer<std::uint8_t> colors_;
  Fn fn_;
  Workspace workspace_;
};

// ---- compaction: the output is the count, then the kept elements (also as saved bytes) -------------

CheckResult check_compaction(const std::vector<int>& expected, long long count, std::span<const int> out) {
  if (count < 0 || static_cast<std::size_t>(count) > out.size())
    return CheckResult::fail("the count is " + std::to_string(count) + ", outside 0.." + std::to_string(out.size()) +
                             " (was it written?)");
  if (static_cast<std::size_t>(count) != expected.size())
    return CheckResult::fail("compaction kept " + std::to_string(count) + " elements, expected " +
                             std::to_string(expected.size()) + " (the non-zero ones)");
  return compare_exact<int>(expected, out.first(static_cast<std::size_t>(count)));
}

// The output array and, apart from it (a write past n stays out of bounds), the count. Saved
// output: the count as one int, then the kept elements.
template <Where W>
class Compact : public ArrayStage<int, W> {
 public:
  explicit Compact(const Problem& p) : ArrayStage<int, W>(p.n, [] { return std::span<const int>(); }), data_(compact_data(p)) {}
  void reset_output() override {
    ArrayStage<int, W>::reset_output();
    if constexpr (W == Where::gpu) count_.poison();
    else count_[0] = -1;
  }
  CheckResult check() override { return check_compaction(data_->expected, read_count(), this->download()); }
  std::optional<std::vector<unsigned char>> output_bytes() override {
    const int count = read_count();
    const auto out = this->download();
    const std::size_t kept = count >= 0 && static_cast<std::size_t>(count) <= out.size() ? static_cast<std::size_t>(count) : 0;
    std::vector<int> saved{count};
    saved.insert(saved.end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(kept));
    return to_bytes<int>(saved);
  }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    const auto values = from_bytes<int>(bytes);
    if (!values || values->empty()) return CheckResult::fail("saved compaction output is not a count followed by ints");
    if (values->front() >= 0 && static_cast<std::size_t>(values->front()) != values->size() - 1)
      return CheckResult::fail("saved compaction output: the count is " + std::to_string(values->front()) + " but " +
                               std::to_string(values->size() - 1) + " elements were saved");
    return check_compaction(data_->expected, values->front(), std::span<const int>(*values).subspan(1));
  }
  double bytes_moved() const override { return 4.0 * static_cast<double>(this->size() + data_->expected.size()); }

 protected:
  std::size_t n() const { return this->size(); }
  int* count() { return count_.data(); }
  int* out() { return this->output(); }
  std::shared_ptr<const CompactData> data_;

 private:
  int read_count() {
    if constexpr (W == Where::gpu) {
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
      return count_.download()[0];
    } else {
      return count_[0];
    }
  }
  std::conditional_t<W == Where::gpu, DeviceBuffer<int>, std::vector<int>> count_ = decltype(count_)(1);
};

class HostCompact final : public Compact<Where::cpu> {
 public:
  using Fn = std::size_t (*)(const int*, int*, std::size_t);
  HostCompact(const Problem& p, Fn fn) : Compact(p), fn_(fn) {}
  void run() override { *count() = static_cast<int>(fn_(data_->input.data(), out(), n())); }

 private:
  Fn fn_;
};

class DeviceCompact final : public Compact<Where::gpu> {
 public:
  using Call = std::function<void(const int*, int*, int*, std::size_t)>;
  DeviceCompact(const Problem& p, Call call) : Compact(p), in_(std::span<const int>(data_->input)), call_(std::move(call)) {}
  void run() override { call_(in_.data(), out(), count(), n()); }

 private:
  DeviceBuffer<int> in_;
  Call call_;
};

Instance cub_compact(const Problem& p) {
  auto temp = std::make_shared<DeviceBuffer<unsigned char>>(std::max<std::size_t>(scan::cub_select_nonzero_bytes(p.n), 16));
  return std::make_unique<DeviceCompact>(p, [temp](const int* in, int* out, int* count, std::size_t n) {
    scan::cub_select_nonzero(temp->data(), temp->size(), in, out, count, n);
  });
}

// ---- the model's kernel launches (rounds R(n), seed 000 §2) ---------------------------------------------

long naive_rounds(const Problem& p) { return p.n == 0 ? 0 : std::max(1, ceil_log2(p.n)); }
// Levels of the shared-memory recursion: each level's blocks of 2B elements leave one sum each.
long shared_rounds(const Problem& p) {
  if (p.n == 0) return 0;
  const std::size_t per_block = 2 * static_cast<std::size_t>(config_for(p).block);
  long levels = 1;
  for (std::size_t m = p.n; m > per_block; m = ceil_div(m, per_block)) ++levels;
  return 2 * levels - 1;
}

// ---- the stage table ---------------------------------------------------------------------------------------

// The kernels and branches the problem reaches in stage `id` (scan_model.hpp, paths).
PathModel model_paths(std::string id) {
  return [id](const Problem& p) { return scan::model::paths(id, p.n, config_for(p), p.param_in("zeros", 25, 0, 100)); };
}

Stage gpu_scan(std::string id, std::string title, std::string source, std::string file, StudentScanFn fn) {
  return make_stage(id, std::move(title), Where::gpu, std::move(source),
                    [fn](const Problem& p) { return student_scan(p, fn); })
      .checked_on_host(host_check<Scan<Where::cpu>>())
      .reaches(model_paths(id))
      .in_file(std::move(file))
      .takes({"block"});
}

Stage colored(std::string id, std::string title, ColoredScan::Fn fn) {
  return make_stage(id, std::move(title), Where::gpu, "seed 000 §4, Fig. 2",
                    [fn](const Problem& p) -> Instance { return std::make_unique<ColoredScan>(p, fn); })
      .checked_on_host(host_check<Colored<Where::cpu>>())
      .reaches(model_paths(id))
      .in_file("colored.cu")
      .takes({"block", "colors"})
      .launches(3);
}

Stage cpu_compact(std::string id, std::string title, std::string source, HostCompact::Fn fn) {
  return make_stage(std::move(id), std::move(title), Where::cpu, std::move(source),
                    [fn](const Problem& p) -> Instance { return std::make_unique<HostCompact>(p, fn); })
      .in_file("compact.cu")
      .takes({"zeros"});
}

void cpu_reference_scan(const int* in, int* out, std::size_t n) {
  std::uint32_t running = 0;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = static_cast<int>(running);
    running += static_cast<std::uint32_t>(in[i]);
  }
}

std::vector<Stage> make_stages() {
  // Block sizes measured best for the reference (block-sweep); any power of two works.
  return {
      make_stage("cpu", "sequential exclusive scan", Where::cpu, "seed 003 (CPU scan)",
                 [](const Problem& p) -> Instance { return std::make_unique<HostScan>(p, &scan::exclusive_scan_cpu); })
          .in_file("scan_basic.cu"),
      cpu_compact("cpu-compact", "compaction on the CPU, one pass without scan", "seed 003 (CPU compact)", &scan::compact_cpu),
      cpu_compact("cpu-compact-scan", "compaction on the CPU by map, scan, scatter", "seed 003 (CPU compact with scan)",
                  &scan::compact_cpu_with_scan),
      gpu_scan("naive", "Hillis-Steele in global memory, ping-pong buffers", "seed 003 (naive scan)", "scan_basic.cu",
               &scan::exclusive_scan_naive)
          .launches(naive_rounds),
      gpu_scan("work-efficient", "Blelloch up/down-sweep in global memory, a thread per element",
               "seed 003 (work-efficient scan)", "scan_basic.cu", &scan::exclusive_scan_work_efficient)
          .launches([](const Problem& p) -> std::optional<long> { return 2 * naive_rounds(p); }),
      gpu_scan("work-efficient-compact-threads", "Blelloch in global memory, only the threads a level needs",
               "seed 003 (work-efficient scan, extra credit)", "scan_basic.cu",
               &scan::exclusive_scan_work_efficient_compact_threads)
          .launches([](const Problem& p) -> std::optional<long> { return 2 * naive_rounds(p); }),
      gpu_scan("shared", "Blelloch per block in shared memory, block sums scanned recursively",
               "seed 003 (shared-memory scan)", "scan_basic.cu", &scan::exclusive_scan_shared)
          .expects_conflicts()
          .launches(shared_rounds),
      gpu_scan("shared-conflict-free", "shared with padded indices: no bank conflicts",
               "seed 003 (bank-conflict offsets, corrected)", "scan_basic.cu", &scan::exclusive_scan_shared_conflict_free)
          .conflict_free()
          .launches(shared_rounds),
      gpu_scan("three-round", "reduce / spine / scan over tiles, 128-bit loads", "seed 000 §4", "scan_tiled.cu",
               &scan::exclusive_scan_three_round)
          .default_param("block", 512)
          .launches(3),
      gpu_scan("alpha-matrix", "three rounds with an alpha x (b+1) matrix per warp", "seed 004 §6, Alg. 7-8",
               "scan_tiled.cu", &scan::exclusive_scan_alpha_matrix)
          .takes({"alpha"})
          .launches(3),
      colored("colored-direct", "colored prefix sums, offsets walked in place (d-way conflicts)",
              &scan::colored_exclusive_scan_direct)
          .expects_conflicts(),
      colored("colored-conflict-free", "colored prefix sums, offsets walked on the transpose",
              &scan::colored_exclusive_scan_conflict_free)
          .conflict_free(),
      // compact's launches are 2 + those of the scan it uses: no prediction.
      make_stage("compact", "stream compaction: map, scan, scatter", Where::gpu, "seed 003 (GPU stream compaction)",
                 [](const Problem& p) -> Instance {
                   auto ws = std::make_shared<Workspace>(p);
                   return std::make_unique<DeviceCompact>(p, [ws](const int* in, int* out, int* count, std::size_t n) {
                     scan::compact(in, out, count, n, ws->fresh());
                   });
                 })
          .checked_on_host(host_check<Compact<Where::cpu>>())
          .reaches(model_paths("compact"))
          .in_file("compact.cu")
          .takes({"block", "zeros"}),
      gpu_scan("single-pass", "decoupled look-back: one launch, 2n words", "Merrill & Garland 2016 (challenge)",
               "scan_tiled.cu", &scan::exclusive_scan_single_pass)
          .default_param("block", 128)
          .launches(1),

      make_baseline("cpu-reference", "the harness's CPU reference scan", Where::cpu, "std",
                    [](const Problem& p) -> Instance { return std::make_unique<HostScan>(p, &cpu_reference_scan); }),
      make_baseline("cub", "cub::DeviceScan::ExclusiveSum", Where::gpu, "CCCL", cub_scan),
      // Thrust allocates its temporary storage inside the call, as a user of thrust::exclusive_scan pays.
      make_baseline("thrust", "thrust::exclusive_scan (allocates inside)", Where::gpu, "CCCL",
                    [](const Problem& p) -> Instance {
                      return std::make_unique<DeviceScan>(p, &scan::thrust_exclusive_scan);
                    }),
      make_baseline("cub-compact", "cub::DeviceSelect::If (non-zero)", Where::gpu, "CCCL", cub_compact).takes({"zeros"}),
  };
}

}  // namespace

namespace gpulab {

Lab make_lab() {
  Lab lab;
  lab.id = "scan";
  lab.title = "Scan and stream compaction";
  lab.student_files = {"scan_basic.cu", "scan_tiled.cu", "colored.cu", "compact.cu"};
  lab.default_n = std::size_t{1} << 24;
  lab.baseline_cpu_stage = "cpu";
  lab.stages = make_stages();
  lab.experiments = scan::make_experiments();
  return lab;
}

}  // namespace gpulab
