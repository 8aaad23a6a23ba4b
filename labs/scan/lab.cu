// The scan lab's harness: the stage table and the baselines (CUB, Thrust, the CPU reference); the
// experiments live in experiments.cu. It prepares seeded input, calls the implementation (yours or
// the reference) and checks the result against the CPU. Do not edit.
#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/execution_policy.h>
#include <thrust/scan.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <tuple>

#include "gpulab/buffer.hpp"
#include "gpulab/check.hpp"
#include "gpulab/cuda_check.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/lab.hpp"
#include "gpulab/runner.hpp"
#include "scan.cuh"
#include "scan_model.hpp"

namespace scan {
std::vector<gpulab::Experiment> make_experiments();  // experiments.cu
}

namespace {

using namespace gpulab;

// ---- parameters ------------------------------------------------------------------------------------

int checked_param(const Problem& p, const std::string& key, int fallback, int lo, int hi, const char* what) {
  const long long v = p.param(key, fallback);
  if (v < lo || v > hi)
    throw UsageError("--param " + key + "=" + std::to_string(v) + ": " + what + " (" + std::to_string(lo) + ".." +
                     std::to_string(hi) + ")");
  return static_cast<int>(v);
}

scan::ScanConfig config_for(const Problem& p, int default_block) {
  scan::ScanConfig c;
  c.block = checked_param(p, "block", default_block, 32, 1024, "threads per block, a power of two");
  if ((c.block & (c.block - 1)) != 0)
    throw UsageError("--param block=" + std::to_string(c.block) + ": must be a power of two (32, 64, ..., 1024)");
  c.alpha = checked_param(p, "alpha", 8, 1, 32, "rows of the alpha x b matrix");
  c.colors = checked_param(p, "colors", 8, 1, scan::kMaxColors, "number of colors d");
  return c;
}

int zero_percent(const Problem& p) {
  return checked_param(p, "zeros", 25, 0, 100, "percent of zeros in the compaction input");
}

int multiprocessors() {
  static const int sms = [] {
    const auto d = query_device();
    return d ? d->multiprocessors : 1;
  }();
  return sms;
}

// ---- memoized inputs and CPU results: one per (n, seed, distribution, ...) -------------------------
//
// The size sweep prepares a dozen stages at n = 2^28; generating and scanning 1 GiB on the CPU
// once per problem instead of once per stage keeps that affordable. The last two problems are kept.

template <class Key, class Value>
class Memo {
 public:
  template <class Make>
  std::shared_ptr<const Value> get(const Key& key, Make make) {
    for (const auto& [k, v] : entries_)
      if (k == key) return v;
    auto value = std::make_shared<const Value>(make());
    entries_.emplace_back(key, value);
    if (entries_.size() > 2) entries_.pop_front();
    return value;
  }

 private:
  std::deque<std::pair<Key, std::shared_ptr<const Value>>> entries_;
};

using ProblemKey = std::tuple<std::size_t, std::uint64_t, int, int>;  // n, seed, distribution, extra

struct ScanData {
  std::vector<int> input, expected;
};
std::shared_ptr<const ScanData> scan_data(const Problem& p) {
  static Memo<ProblemKey, ScanData> memo;
  return memo.get({p.n, p.seed, static_cast<int>(p.distribution), 0}, [&] {
    ScanData d;
    d.input = scan::model::scan_input(p.distribution, p.n, p.seed);
    d.expected = scan::model::exclusive_scan_reference(d.input);
    return d;
  });
}

struct ColoredData {
  std::vector<int> values, expected;
  std::vector<std::uint8_t> colors;
};
std::shared_ptr<const ColoredData> colored_data(const Problem& p, int colors) {
  static Memo<ProblemKey, ColoredData> memo;
  return memo.get({p.n, p.seed, static_cast<int>(p.distribution), colors}, [&] {
    ColoredData d;
    d.values = scan::model::scan_input(p.distribution, p.n, p.seed);
    d.colors = scan::model::color_input(p.n, p.seed, colors);
    d.expected = scan::model::colored_scan_reference(d.values, d.colors);
    return d;
  });
}

struct CompactData {
  std::vector<int> input, expected;
};
std::shared_ptr<const CompactData> compact_data(const Problem& p) {
  static Memo<ProblemKey, CompactData> memo;
  const int zeros = zero_percent(p);
  return memo.get({p.n, p.seed, static_cast<int>(p.distribution), zeros}, [&] {
    CompactData d;
    d.input = scan::model::compaction_input(p.distribution, p.n, p.seed, zeros);
    d.expected = scan::model::compact_reference(d.input);
    return d;
  });
}

void poison(std::vector<int>& v) {
  if (!v.empty()) std::memset(v.data(), kPoisonByte, v.size() * sizeof(int));
}

void synchronize() { GPULAB_CUDA_CHECK(cudaDeviceSynchronize()); }

// The device scratch every student GPU stage gets: allocated here, untimed.
class Workspace {
 public:
  Workspace(std::size_t n, const scan::ScanConfig& config) : buffer_(scan::scan_workspace_ints(n)) {
    ws_.temp = buffer_.data();
    ws_.temp_ints = buffer_.size();
    ws_.config = config;
    ws_.multiprocessors = multiprocessors();
  }
  scan::ScanWorkspace& fresh() {
    ws_.reset();
    return ws_;
  }

 private:
  DeviceBuffer<int> buffer_;
  scan::ScanWorkspace ws_;
};

// ---- CPU stages --------------------------------------------------------------------------------------

class HostScan final : public StageInstance {
 public:
  using Fn = void (*)(const int*, int*, std::size_t);
  HostScan(const Problem& p, Fn fn) : data_(scan_data(p)), fn_(fn), out_(p.n) {}
  void reset_output() override { poison(out_); }
  void run() override { fn_(data_->input.data(), out_.data(), out_.size()); }
  CheckResult check() override { return compare_exact<int>(data_->expected, out_); }
  double bytes_moved() const override { return 8.0 * static_cast<double>(out_.size()); }
  std::optional<std::vector<unsigned char>> output_bytes() override { return to_bytes<int>(out_); }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    return compare_exact_bytes<int>(data_->expected, bytes);
  }

 private:
  std::shared_ptr<const ScanData> data_;
  Fn fn_;
  std::vector<int> out_;
};

CheckResult check_compaction(const std::vector<int>& expected, std::size_t count, std::span<const int> out) {
  if (count != expected.size())
    return CheckResult::fail("compaction kept " + std::to_string(count) + " elements, expected " +
                             std::to_string(expected.size()) + " (the non-zero ones)");
  return compare_exact<int>(expected, out.first(count));
}

// Out-of-process verification (lab.hpp): a compaction's saved output is the count as one int32,
// then the kept elements.
std::vector<unsigned char> compaction_bytes(long long count, std::span<const int> out) {
  const int head = static_cast<int>(count);
  const std::size_t kept = count >= 0 && static_cast<std::size_t>(count) <= out.size() ? static_cast<std::size_t>(count) : 0;
  auto bytes = to_bytes<int>(std::span<const int>(&head, 1));
  const auto body = to_bytes<int>(out.first(kept));
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

CheckResult check_compaction_bytes(const std::vector<int>& expected, std::span<const unsigned char> bytes) {
  const auto values = from_bytes<int>(bytes);
  if (!values || values->empty()) return CheckResult::fail("saved compaction output is not a count followed by ints");
  const int count = values->front();
  if (count < 0 || static_cast<std::size_t>(count) != values->size() - 1)
    return CheckResult::fail("saved compaction output: the count is " + std::to_string(count) + " but " +
                             std::to_string(values->size() - 1) + " elements were saved (expected " +
                             std::to_string(expected.size()) + ")");
  return check_compaction(expected, static_cast<std::size_t>(count), std::span<const int>(*values).subspan(1));
}

class HostCompact final : public StageInstance {
 public:
  using Fn = std::size_t (*)(const int*, int*, std::size_t);
  HostCompact(const Problem& p, Fn fn) : data_(compact_data(p)), fn_(fn), out_(p.n) {}
  void reset_output() override {
    poison(out_);
    count_ = static_cast<std::size_t>(-1);
  }
  void run() override { count_ = fn_(data_->input.data(), out_.data(), out_.size()); }
  CheckResult check() override { return check_compaction(data_->expected, count_, out_); }
  double bytes_moved() const override { return 4.0 * static_cast<double>(out_.size() + data_->expected.size()); }
  std::optional<std::vector<unsigned char>> output_bytes() override {
    return compaction_bytes(count_ > out_.size() ? -1 : static_cast<long long>(count_), out_);
  }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    return check_compaction_bytes(data_->expected, bytes);
  }

 private:
  std::shared_ptr<const CompactData> data_;
  Fn fn_;
  std::vector<int> out_;
  std::size_t count_ = 0;
};

// ---- GPU scans -----------------------------------------------------------------------------------------

class DeviceScan : public StageInstance {
 public:
  explicit DeviceScan(const Problem& p) : data_(scan_data(p)), in_(std::span<const int>(data_->input)), out_(p.n) {}
  void reset_output() override { out_.poison(); }
  CheckResult check() override {
    synchronize();
    const auto got = out_.download();
    return compare_exact<int>(data_->expected, got);
  }
  // Read n ints, write n ints: the model's minimum. Stages that move more show fewer GB/s.
  double bytes_moved() const override { return 8.0 * static_cast<double>(out_.size()); }
  std::optional<std::vector<unsigned char>> output_bytes() override {
    synchronize();
    return to_bytes<int>(out_.download());
  }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    return compare_exact_bytes<int>(data_->expected, bytes);
  }

 protected:
  std::size_t n() const { return out_.size(); }
  std::shared_ptr<const ScanData> data_;
  DeviceBuffer<int> in_, out_;
};

class StudentScan final : public DeviceScan {
 public:
  using Fn = void (*)(const int*, int*, std::size_t, scan::ScanWorkspace&);
  StudentScan(const Problem& p, Fn fn, const scan::ScanConfig& config)
      : DeviceScan(p), fn_(fn), workspace_(p.n, config) {}
  void run() override { fn_(in_.data(), out_.data(), n(), workspace_.fresh()); }

 private:
  Fn fn_;
  Workspace workspace_;
};

// CUB's single-pass scan (decoupled look-back); its temporary storage is allocated here, untimed.
class CubScan final : public DeviceScan {
 public:
  explicit CubScan(const Problem& p) : DeviceScan(p) {
    std::size_t bytes = 0;
    GPULAB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in_.data(), out_.data(), static_cast<int>(n())));
    temp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(bytes, 16));
    temp_bytes_ = temp_.size();
  }
  void run() override {
    GPULAB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.data(), temp_bytes_, in_.data(), out_.data(), static_cast<int>(n())));
  }

 private:
  DeviceBuffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
};

// Thrust allocates its temporary storage inside the call, as a user of thrust::exclusive_scan pays.
class ThrustScan final : public DeviceScan {
 public:
  using DeviceScan::DeviceScan;
  void run() override { thrust::exclusive_scan(thrust::device, in_.data(), in_.data() + n(), out_.data()); }
};

// ---- colored prefix sums ------------------------------------------------------------------------------

class ColoredScan final : public StageInstance {
 public:
  using Fn = void (*)(const int*, const std::uint8_t*, int*, std::size_t, scan::ScanWorkspace&);
  ColoredScan(const Problem& p, Fn fn, const scan::ScanConfig& config)
      : data_(colored_data(p, config.colors)),
        values_(std::span<const int>(data_->values)),
        colors_(std::span<const std::uint8_t>(data_->colors)),
        out_(p.n),
        fn_(fn),
        workspace_(p.n, config) {}
  void reset_output() override { out_.poison(); }
  void run() override { fn_(values_.data(), colors_.data(), out_.data(), out_.size(), workspace_.fresh()); }
  CheckResult check() override {
    synchronize();
    const auto got = out_.download();
    return compare_exact<int>(data_->expected, got);
  }
  // 4-byte values and 1-byte colors read once, 4-byte results written once.
  double bytes_moved() const override { return 9.0 * static_cast<double>(out_.size()); }
  std::optional<std::vector<unsigned char>> output_bytes() override {
    synchronize();
    return to_bytes<int>(out_.download());
  }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    return compare_exact_bytes<int>(data_->expected, bytes);
  }

 private:
  std::shared_ptr<const ColoredData> data_;
  DeviceBuffer<int> values_;
  DeviceBuffer<std::uint8_t> colors_;
  DeviceBuffer<int> out_;
  Fn fn_;
  Workspace workspace_;
};

// ---- compaction on the GPU -------------------------------------------------------------------------------

class DeviceCompact : public StageInstance {
 public:
  explicit DeviceCompact(const Problem& p)
      : data_(compact_data(p)), in_(std::span<const int>(data_->input)), out_(p.n), count_(1) {}
  void reset_output() override {
    out_.poison();
    count_.poison();
  }
  CheckResult check() override {
    synchronize();
    const auto count = count_.download()[0];
    if (count < 0 || static_cast<std::size_t>(count) > out_.size())
      return CheckResult::fail("the count is " + std::to_string(count) + ", outside 0.." + std::to_string(out_.size()) +
                               " (was it written?)");
    const auto got = out_.download();
    return check_compaction(data_->expected, static_cast<std::size_t>(count), got);
  }
  double bytes_moved() const override {
    return 4.0 * static_cast<double>(out_.size() + data_->expected.size() + 1);
  }
  std::optional<std::vector<unsigned char>> output_bytes() override {
    synchronize();
    const int count = count_.download()[0];
    const auto out = out_.download();
    return compaction_bytes(count, out);
  }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    return check_compaction_bytes(data_->expected, bytes);
  }

 protected:
  std::size_t n() const { return out_.size(); }
  std::shared_ptr<const CompactData> data_;
  DeviceBuffer<int> in_, out_, count_;
};

class StudentCompact final : public DeviceCompact {
 public:
  using Fn = void (*)(const int*, int*, int*, std::size_t, scan::ScanWorkspace&);
  StudentCompact(const Problem& p, Fn fn, const scan::ScanConfig& config)
      : DeviceCompact(p), fn_(fn), workspace_(p.n, config) {}
  void run() override { fn_(in_.data(), out_.data(), count_.data(), n(), workspace_.fresh()); }

 private:
  Fn fn_;
  Workspace workspace_;
};

struct NonZero {
  __host__ __device__ bool operator()(int x) const { return x != 0; }
};

class CubCompact final : public DeviceCompact {
 public:
  explicit CubCompact(const Problem& p) : DeviceCompact(p) {
    std::size_t bytes = 0;
    GPULAB_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, in_.data(), out_.data(), count_.data(),
                                            static_cast<int>(n()), NonZero{}));
    temp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(bytes, 16));
  }
  void run() override {
    std::size_t bytes = temp_.size();
    GPULAB_CUDA_CHECK(cub::DeviceSelect::If(temp_.data(), bytes, in_.data(), out_.data(), count_.data(),
                                            static_cast<int>(n()), NonZero{}));
  }

 private:
  DeviceBuffer<unsigned char> temp_;
};

// ---- the model's kernel launches (rounds R(n), seed 000 §2) ---------------------------------------------

long naive_rounds(std::size_t n) { return n == 0 ? 0 : std::max(1, scan::ceil_log2(n)); }
long work_efficient_rounds(std::size_t n) { return 2 * naive_rounds(n); }
// Levels of the shared-memory recursion: each level's blocks of 2B elements leave one sum each.
long shared_rounds(std::size_t n, int block) {
  if (n == 0) return 0;
  long levels = 1;
  for (std::size_t m = n; m > 2 * static_cast<std::size_t>(block); m = scan::ceil_div(m, 2 * static_cast<std::size_t>(block)))
    ++levels;
  return 2 * levels - 1;
}

// ---- the stage table ---------------------------------------------------------------------------------------

// Block sizes measured best for the reference on an H100 (block-sweep); any power of two works.
constexpr int kDefaultBlock = 256;

int default_block_of(const std::string& id) {
  static const std::map<std::string, int> defaults{{"three-round", 512}, {"single-pass", 128}};
  auto it = defaults.find(id);
  return it == defaults.end() ? kDefaultBlock : it->second;
}

Stage gpu_scan_stage(const std::string& id, const std::string& title, const std::string& source, StudentScan::Fn fn) {
  const int block = default_block_of(id);
  return make_stage(id, title, Where::gpu, source, [fn, block](const Problem& p) -> std::unique_ptr<StageInstance> {
    return std::make_unique<StudentScan>(p, fn, config_for(p, block));
  });
}

Stage colored_stage(const std::string& id, const std::string& title, ColoredScan::Fn fn) {
  Stage s = make_stage(id, title, Where::gpu, "seed 000 §4, Fig. 2", [fn](const Problem& p) -> std::unique_ptr<StageInstance> {
    return std::make_unique<ColoredScan>(p, fn, config_for(p, kDefaultBlock));
  });
  s.predicted_launches = [](const Problem& p) -> std::optional<long> { return p.n == 0 ? 0 : 3; };
  return s;
}

Stage baseline(const std::string& id, const std::string& title, Where where, const std::string& source,
               std::function<std::unique_ptr<StageInstance>(const Problem&)> prepare) {
  return make_stage(id, title, where, source, std::move(prepare), Role::baseline);
}

std::vector<Stage> make_stages() {
  std::vector<Stage> stages;
  stages.push_back(make_stage("cpu", "sequential exclusive scan", Where::cpu, "seed 003 (CPU scan)",
                              [](const Problem& p) -> std::unique_ptr<StageInstance> {
                                return std::make_unique<HostScan>(p, &scan::exclusive_scan_cpu);
                              }));
  stages.push_back(make_stage("cpu-compact", "compaction on the CPU, one pass without scan", Where::cpu,
                              "seed 003 (CPU compact)", [](const Problem& p) -> std::unique_ptr<StageInstance> {
                                return std::make_unique<HostCompact>(p, &scan::compact_cpu);
                              }));
  stages.push_back(make_stage("cpu-compact-scan", "compaction on the CPU by map, scan, scatter", Where::cpu,
                              "seed 003 (CPU compact with scan)", [](const Problem& p) -> std::unique_ptr<StageInstance> {
                                return std::make_unique<HostCompact>(p, &scan::compact_cpu_with_scan);
                              }));

  auto add = [&](Stage s, std::function<std::optional<long>(const Problem&)> rounds) {
    s.predicted_launches = std::move(rounds);
    stages.push_back(std::move(s));
  };
  add(gpu_scan_stage("naive", "Hillis-Steele in global memory, ping-pong buffers", "seed 003 (naive scan)",
                     &scan::exclusive_scan_naive),
      [](const Problem& p) -> std::optional<long> { return naive_rounds(p.n); });
  add(gpu_scan_stage("work-efficient", "Blelloch up/down-sweep in global memory, a thread per element",
                     "seed 003 (work-efficient scan)", &scan::exclusive_scan_work_efficient),
      [](const Problem& p) -> std::optional<long> { return work_efficient_rounds(p.n); });
  add(gpu_scan_stage("work-efficient-compact-threads", "Blelloch in global memory, only the threads a level needs",
                     "seed 003 (work-efficient scan, extra credit)", &scan::exclusive_scan_work_efficient_compact_threads),
      [](const Problem& p) -> std::optional<long> { return work_efficient_rounds(p.n); });
  {
    Stage s = gpu_scan_stage("shared", "Blelloch per block in shared memory, block sums scanned recursively",
                             "seed 003 (shared-memory scan)", &scan::exclusive_scan_shared);
    s.expect_conflicts = true;
    add(std::move(s), [](const Problem& p) -> std::optional<long> {
      return shared_rounds(p.n, config_for(p, kDefaultBlock).block);
    });
  }
  {
    Stage s = gpu_scan_stage("shared-conflict-free", "shared with padded indices: no bank conflicts",
                             "seed 003 (bank-conflict offsets, corrected)", &scan::exclusive_scan_shared_conflict_free);
    s.must_be_conflict_free = true;
    add(std::move(s), [](const Problem& p) -> std::optional<long> {
      return shared_rounds(p.n, config_for(p, kDefaultBlock).block);
    });
  }
  add(gpu_scan_stage("three-round", "reduce / spine / scan over tiles, 128-bit loads", "seed 000 §4",
                     &scan::exclusive_scan_three_round),
      [](const Problem& p) -> std::optional<long> { return p.n == 0 ? 0 : 3; });
  add(gpu_scan_stage("alpha-matrix", "three rounds with an alpha x (b+1) matrix per warp", "seed 004 §6, Alg. 7-8",
                     &scan::exclusive_scan_alpha_matrix),
      [](const Problem& p) -> std::optional<long> { return p.n == 0 ? 0 : 3; });
  {
    Stage s = colored_stage("colored-direct", "colored prefix sums, offsets walked in place (d-way conflicts)",
                            &scan::colored_exclusive_scan_direct);
    s.expect_conflicts = true;
    stages.push_back(std::move(s));
  }
  {
    Stage s = colored_stage("colored-conflict-free", "colored prefix sums, offsets walked on the transpose",
                            &scan::colored_exclusive_scan_conflict_free);
    s.must_be_conflict_free = true;
    stages.push_back(std::move(s));
  }
  // compact's launches are 2 + those of the scan it uses: no prediction.
  stages.push_back(make_stage("compact", "stream compaction: map, scan, scatter", Where::gpu,
                              "seed 003 (GPU stream compaction)", [](const Problem& p) -> std::unique_ptr<StageInstance> {
                                return std::make_unique<StudentCompact>(p, &scan::compact, config_for(p, kDefaultBlock));
                              }));
  add(gpu_scan_stage("single-pass", "decoupled look-back: one launch, 2n words", "Merrill & Garland 2016 (challenge)",
                     &scan::exclusive_scan_single_pass),
      [](const Problem& p) -> std::optional<long> { return p.n == 0 ? 0 : 1; });

  stages.push_back(baseline("cpu-reference", "the harness's CPU reference scan", Where::cpu, "std",
                            [](const Problem& p) -> std::unique_ptr<StageInstance> {
                              return std::make_unique<HostScan>(p, [](const int* in, int* out, std::size_t n) {
                                std::uint32_t running = 0;
                                for (std::size_t i = 0; i < n; ++i) {
                                  out[i] = static_cast<int>(running);
                                  running += static_cast<std::uint32_t>(in[i]);
                                }
                              });
                            }));
  stages.push_back(baseline("cub", "cub::DeviceScan::ExclusiveSum", Where::gpu, "CCCL",
                            [](const Problem& p) -> std::unique_ptr<StageInstance> { return std::make_unique<CubScan>(p); }));
  stages.push_back(baseline("thrust", "thrust::exclusive_scan (allocates inside)", Where::gpu, "CCCL",
                            [](const Problem& p) -> std::unique_ptr<StageInstance> { return std::make_unique<ThrustScan>(p); }));
  stages.push_back(baseline("cub-compact", "cub::DeviceSelect::If (non-zero)", Where::gpu, "CCCL",
                            [](const Problem& p) -> std::unique_ptr<StageInstance> { return std::make_unique<CubCompact>(p); }));
  return stages;
}

}  // namespace

namespace gpulab {

Lab make_lab() {
  Lab lab;
  lab.id = "scan";
  lab.title = "Scan and stream compaction";
  lab.student_files = "labs/scan/scan_basic.cu, labs/scan/scan_tiled.cu, labs/scan/colored.cu, labs/scan/compact.cu";
  lab.default_n = std::size_t{1} << 24;
  lab.baseline_cpu_stage = "cpu";
  lab.stages = make_stages();
  lab.experiments = scan::make_experiments();
  return lab;
}

}  // namespace gpulab
