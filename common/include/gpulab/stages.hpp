// The lab kit's building blocks for stage instances (lab.hpp): a cache of a problem's inputs and
// CPU results, and stages whose output is one array. A lab supplies the inputs, the expected
// output and run(); poisoning, the check, the saved output bytes and the out-of-process check come
// from here. Include from a lab's lab.cu (needs CUDA).
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulab/buffer.hpp"
#include "gpulab/check.hpp"
#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "gpulab/scratch.hpp"
#include "gpulab/scratch_guard.hpp"

namespace gpulab {

// Inputs and CPU results computed once per problem and shared by every stage (and test) that runs
// it: a sweep over a dozen stages at n = 2^28 generates and checks 1 GiB on the CPU once, not a
// dozen times. Key the problem on what the data depends on (Problem::only), so that a block-size
// sweep reuses one input. The oldest entry is dropped *before* a new one is built, so at most
// `capacity` values are alive at once (at 2^28 each is GiBs).
template <class Value>
class ProblemCache {
 public:
  explicit ProblemCache(std::size_t capacity = 1) : capacity_(capacity) {}
  std::shared_ptr<const Value> get(const Problem& key, const std::function<Value()>& make) {
    std::lock_guard lock(mutex_);
    for (const auto& [k, v] : entries_)
      if (k == key) return v;
    while (!entries_.empty() && entries_.size() >= capacity_) entries_.pop_front();
    auto value = std::make_shared<const Value>(make());
    entries_.emplace_back(key, value);
    return value;
  }

 private:
  std::size_t capacity_;
  std::mutex mutex_;
  std::deque<std::pair<Problem, std::shared_ptr<const Value>>> entries_;
};

// A CPU stage's output array, allocated without zeroing: reset_output() poisons it before every
// run, and a verdict's HostCheck, which never runs, never touches its pages (zeroing 64 MiB per
// stage was a third of the reference's verdict on scan's 2^24 case).
template <class T>
class HostArray {
 public:
  explicit HostArray(std::size_t count) : data_(std::make_unique_for_overwrite<T[]>(count)), size_(count) {}
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::unique_ptr<T[]> data_;
  std::size_t size_;
};

// A stage whose output is one array of T, on the host (Where::cpu) or the device (Where::gpu),
// checked exactly against an expected array. Subclasses implement run() (writing output()) and
// bytes_moved(); they may override check_values() for a richer report (where in a matrix).
// The check also fails when the run wrote past a region of the scratch it took (ScratchOwner):
// the guards are rearmed in reset_output() and read after the run, with no lab code. With the
// replay guard set (set_guard), a draw rewrites the stage's input and a run after one is judged by
// the guard's verdict (or by a subclass's check() that reads drawn()).
template <class T, Where W>
class ArrayStage : public StageInstance {
 public:
  using Output = std::conditional_t<W == Where::gpu, DeviceBuffer<T>, HostArray<T>>;

  ArrayStage(std::size_t count, std::function<std::span<const T>()> expected)
      : out_(count), expected_(std::move(expected)) {}

  void reset_output() override {
    scratch_.before_run();
    if constexpr (W == Where::gpu) out_.poison();
    else if (!out_.empty()) std::memset(out_.data(), kPoisonByte, out_.size() * sizeof(T));
  }
  CheckResult check() override {
    try {
      if (drawn_ && judge_drawn_) {
        finish_run();
        return judge_drawn_(output());
      }
      return check_values(download());
    } catch (const ScratchOverrun& e) {
      return CheckResult::fail(e.what());
    }
  }
  // The replay guard (StageInstance::redraw): `draw(seed)` rewrites the stage's input (untimed);
  // `judge`, when set, is the verdict on the output of a run after a draw (the expected output is
  // then no longer the problem's).
  void set_guard(std::function<void(std::uint64_t)> draw, std::function<CheckResult(const T*)> judge = {}) {
    draw_ = std::move(draw);
    judge_drawn_ = std::move(judge);
  }
  bool redraw(std::uint64_t seed) override {
    if (!draw_) return false;
    draw_(seed);
    drawn_ = true;
    return true;
  }
  // Saved even after an overrun (the check, which runs next, says why the stage failed).
  std::optional<std::vector<unsigned char>> output_bytes() override {
    return to_bytes<T>(std::span<const T>(download_output()));
  }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    const auto values = from_bytes<T>(bytes);
    if (!values) return CheckResult::fail("saved output is not a whole number of elements");
    return check_values(*values);
  }

 protected:
  virtual CheckResult check_values(std::span<const T> got) { return compare_exact<T>(expected_(), got); }
  T* output() { return out_.data(); }
  std::size_t size() const { return out_.size(); }
  bool drawn() const { return drawn_; }  // the input is a draw of the replay guard
  // The output for a check: refused with ScratchOverrun when the run wrote past a scratch region,
  // so that a lab's own check() (scan's compaction) fails on it too.
  auto download() {
    finish_run();
    return download_output();
  }
  // The run finished (synchronised) and inside its scratch, or a ScratchOverrun.
  void finish_run() {
    if constexpr (W == Where::gpu) GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    if (auto overrun = scratch_.overrun()) throw ScratchOverrun(*overrun);
  }

 private:
  // The output on the host: a copy from the device, or a view of the host array (no copy).
  auto download_output() {
    if constexpr (W == Where::gpu) {
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
      return out_.download();
    } else {
      return std::span<const T>(out_.data(), out_.size());
    }
  }

  Output out_;
  std::function<std::span<const T>()> expected_;
  StageScratch scratch_;  // the arenas this instance's runs took from
  std::function<void(std::uint64_t)> draw_;
  std::function<CheckResult(const T*)> judge_drawn_;
  bool drawn_ = false;
};

// The out-of-process verdict's instance of a stage (Stage::checked_on_host): `Base` is the host
// (Where::cpu) variant of the stage's output class, so it has the same expected output and the same
// check, and there is nothing to run. The reference runner then judges a case's saved bytes without
// a CUDA context: a verdict of a 33-element case took 1.0-1.6 s on an H100 beside 7 others, about
// as long as the student's run of it (2026-11-24).
template <class Base>
class HostCheck final : public Base {
 public:
  using Base::Base;
  void run() override { throw std::logic_error("a host check only judges saved output (Stage::checked_on_host)"); }
};

// Stage::checked_on_host's factory for HostCheck<Base>, constructed from the problem and `args`.
template <class Base, class... Args>
std::function<std::unique_ptr<StageInstance>(const Problem&)> host_check(Args... args) {
  return [=](const Problem& p) -> std::unique_ptr<StageInstance> { return std::make_unique<HostCheck<Base>>(p, args...); };
}

// The device memory behind a ScratchOwner, and what compute-sanitizer knows of it
// (common/src/scratch_arena.cpp). Allocated and filled with kScratchGuardByte when the stage is
// prepared (untimed). While a tool listens to NVTX (compute-sanitizer --nvtx yes, the default
// since CUDA 12.0: docs.nvidia.com/compute-sanitizer/SanitizerNvtxGuide) the allocation is a
// sub-allocator heap and every take a named region of it, so memcheck reports an access outside
// the stage's regions ("scratch #2: take<int>(1024)"), not only outside the allocation.
class ScratchArena final : public ScratchMemory, public ScratchObserver {
 public:
  explicit ScratchArena(std::size_t bytes);
  ~ScratchArena();
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;

  unsigned char* data() { return buffer_.data(); }
  std::size_t size() const { return buffer_.size(); }
  // What the Scratch reports its takes to: this while a tool listens, else nothing (a take then
  // costs what it did).
  ScratchObserver* observer() { return heap_ ? this : nullptr; }

  // The kit's own accesses (guards; untimed), announced to the tool as regions while they last.
  void fill(std::size_t offset, std::size_t bytes, unsigned char value) override;
  void read(std::size_t offset, std::size_t bytes, unsigned char* out) override;
  // Inside the timed run, only while a tool listens.
  void taken(std::size_t index, const ScratchRegion& region) override;
  void reset() override;

 private:
  void register_heap();
  void register_region(std::size_t offset, std::size_t bytes, const std::string& name);
  void unregister_region(std::size_t offset);

  DeviceBuffer<unsigned char> buffer_;
  void* heap_ = nullptr;  // the NVTX heap handle; null while no tool listens
};

// Device scratch for one stage: allocated when the stage is prepared (untimed), reset before
// every run. `Workspace` is the lab's view type (derived from Scratch, with its knobs). `bytes` is
// what the lab asks for; the arena adds kScratchGuardReserve for the guard after each region.
template <class Workspace>
class ScratchOwner : public GuardedScratch {
 public:
  explicit ScratchOwner(std::size_t bytes) : arena_(bytes + kScratchGuardReserve) {
    static_cast<Scratch&>(view_) = Scratch(arena_.data(), arena_.size(), kScratchGuardBytes, arena_.observer());
  }
  Workspace& fresh() {
    view_.reset();
    guards_.run_started();
    join_running_stage();
    return view_;
  }
  Workspace& view() { return view_; }

  void rearm_guards() override { guards_.rearm(view_, arena_); }
  std::optional<std::string> overrun() override { return guards_.overrun(view_, arena_); }

 private:
  ScratchArena arena_;
  Workspace view_;
  ScratchGuards guards_;
};

// ---- the stage plumbing, so that a lab's lab.cu holds only what is the lab's --------------------
//
// A lab names its problem's data (inputs and expected output, made once per problem), says what a
// stage's output is (ArrayOutput: the expected values, the model's bytes, an optional judge), and
// gives each stage of its manifest the code that runs it:
//   lab.bind("cpu", host_stage(kScan, [](const ScanData& d, int* out) { ... }));
//   lab.bind("naive", device_stage(kScan, [fn](auto data, const Problem& p) {
//     auto in = upload(data->input);                        // untimed, when the stage is prepared
//     auto ws = scratch<ScanWorkspace>(bytes);              // the kit's guarded arena
//     return [=](int* out) { fn(in->data(), out, data->input.size(), ws->fresh()); };   // timed
//   }));
// Poisoning, the check, saved output, the host verdict (Stage::checked_on_host) and the scratch
// guard check come from here.

// A problem's data, made once per key and shared by every stage and test that runs it (at 2^28 a
// dozen stages check against one CPU result). Key it on what the data depends on (Problem::only);
// `Tag` keeps two caches of one Data type apart.
template <class Data, class Tag = void>
std::shared_ptr<const Data> problem_data(const Problem& key, const std::function<Data()>& make,
                                         std::size_t capacity = 2) {
  static ProblemCache<Data> cache(capacity);
  return cache.get(key, make);
}

// What a stage's output array is, for the problem's data.
template <class T, class Data>
struct ArrayOutput {
  std::function<std::shared_ptr<const Data>(const Problem&)> data;  // the problem's data (problem_data)
  std::function<std::span<const T>(const Data&)> expected;            // also fixes the output's size
  std::function<double(const Data&)> bytes;                           // the model's bytes (GB/s)
  // A richer verdict than the first mismatch (where in a matrix, an oracle decoded); unset: exact.
  std::function<CheckResult(const Data&, std::span<const T>)> judge = {};
  std::function<std::optional<double>(const Data&)> elements = {};    // unset: the problem's n
  // What a stage that copies its input would write, in the output's layout (a sort: the keys as
  // they came), for an output that is the only one its check accepts. Set, the grader learns which
  // cases a copy passes (n = 1, equal keys, sorted input): they show that a stage works only beside
  // a case that needed its work.
  std::function<std::vector<T>(const Data&)> copied = {};
};

namespace detail {
template <class Data>
struct HoldsData {  // a base, so that the data exists before ArrayStage is sized from it
  std::shared_ptr<const Data> data_;
};
}  // namespace detail

// What a GPU stage's setup gives the kit: the timed run and, for the replay guard
// (StageInstance::redraw), how to draw a fresh input into the stage's device input and judge a
// run's output against it. A setup that returns only the run's closure is timed on one input.
template <class T>
struct DeviceRun {
  std::function<void(T*)> run;
  // Rewrites the stage's device input with a draw of the problem's input from this seed (untimed).
  std::function<void(std::uint64_t)> redraw = {};
  // The verdict on a run's device output for the latest draw (O(n), e.g. judge_sort_on_device).
  std::function<CheckResult(const T*)> judge_drawn = {};

  template <class F>
    requires std::is_invocable_v<F&, T*>
  DeviceRun(F f) : run(std::move(f)) {}  // NOLINT: a closure is a run without a guard
  DeviceRun(std::function<void(T*)> r, std::function<void(std::uint64_t)> draw, std::function<CheckResult(const T*)> judge)
      : run(std::move(r)), redraw(std::move(draw)), judge_drawn(std::move(judge)) {}
};

// A stage whose output is ArrayOutput's array; run() calls the closure the factory gave it.
template <class T, Where W, class Data>
class DataStage : private detail::HoldsData<Data>, public ArrayStage<T, W> {
 public:
  using Run = std::function<void(T*)>;
  DataStage(const Problem& p, ArrayOutput<T, Data> out)
      : detail::HoldsData<Data>{out.data(p)},
        ArrayStage<T, W>(out.expected(*this->data_).size(), [this] { return out_.expected(*this->data_); }),
        out_(std::move(out)) {}
  void run() override {
    if (!run_) throw std::logic_error("DataStage without code to run (a host check only judges saved output)");
    run_(this->output());
  }
  double bytes_moved() const override { return out_.bytes(*this->data_); }
  std::optional<double> elements() const override {
    return out_.elements ? out_.elements(*this->data_) : std::optional<double>{};
  }
  // Equality with the expected output, not the check: wherever an output is its input's kind (a
  // sort's) it is the only one the check accepts, and equality stops at the first difference where
  // the judge diagnoses the whole array (1.3-1.5 s more per verify of 2^24 keys on the CI host).
  std::optional<bool> input_is_answer() override {
    if (!out_.copied) return std::nullopt;
    return std::ranges::equal(out_.copied(*this->data_), out_.expected(*this->data_));
  }
  const std::shared_ptr<const Data>& data() const { return this->data_; }
  void set_run(Run run) { run_ = std::move(run); }
  void set_device_run(DeviceRun<T> r) {
    run_ = std::move(r.run);
    if (r.redraw && r.judge_drawn) this->set_guard(std::move(r.redraw), std::move(r.judge_drawn));
  }

 protected:
  CheckResult check_values(std::span<const T> got) override {
    return out_.judge ? out_.judge(*this->data_, got) : ArrayStage<T, W>::check_values(got);
  }

 private:
  ArrayOutput<T, Data> out_;
  Run run_;
};

// A CPU stage: fn(data, output).
template <class T, class Data>
Stage::Code host_stage(ArrayOutput<T, Data> out, std::function<void(const Data&, T*)> fn) {
  return {[out, fn](const Problem& p) -> std::unique_ptr<StageInstance> {
    auto stage = std::make_unique<DataStage<T, Where::cpu, Data>>(p, out);
    stage->set_run([fn, data = stage->data()](T* o) { fn(*data, o); });
    return stage;
  }};
}

// A GPU stage: setup(data, problem), called when the stage is prepared (untimed: uploads, scratch),
// returns what each timed run does with the device output: a DeviceRun, with the replay guard's
// draw and verdict, or only the run's closure. Its verdict on saved output is judged on the host
// (HostCheck), with no CUDA context.
template <class T, class Data>
using DeviceSetup = std::function<DeviceRun<T>(const std::shared_ptr<const Data>&, const Problem&)>;
template <class T, class Data>
Stage::Code device_stage(ArrayOutput<T, Data> out, DeviceSetup<T, Data> setup) {
  return {[out, setup](const Problem& p) -> std::unique_ptr<StageInstance> {
            auto stage = std::make_unique<DataStage<T, Where::gpu, Data>>(p, out);
            stage->set_device_run(setup(stage->data(), p));
            return stage;
          },
          [out](const Problem& p) -> std::unique_ptr<StageInstance> {
            return std::make_unique<HostCheck<DataStage<T, Where::cpu, Data>>>(p, out);
          }};
}

// A stage's input on the device that the replay guard rewrites with each draw (DeviceRun::redraw).
template <class T>
std::shared_ptr<DeviceBuffer<T>> upload_input(std::span<const T> values) {
  return std::make_shared<DeviceBuffer<T>>(values);
}
template <class T>
std::shared_ptr<DeviceBuffer<T>> upload_input(const std::vector<T>& values) {
  return upload_input(std::span<const T>(values));
}

// A host array on the device (untimed, in a stage's setup), shared by the runs that read it.
template <class T>
std::shared_ptr<const DeviceBuffer<T>> upload(std::span<const T> values) {
  return std::make_shared<const DeviceBuffer<T>>(values);
}
template <class T>
std::shared_ptr<const DeviceBuffer<T>> upload(const std::vector<T>& values) {
  return upload(std::span<const T>(values));
}

// The kit's guarded scratch arena of `bytes` for a stage's runs, its view a `Workspace` (a
// gpulab::Scratch with the lab's knobs), set up by `configure` once.
template <class Workspace>
std::shared_ptr<ScratchOwner<Workspace>> scratch(std::size_t bytes, const std::function<void(Workspace&)>& configure = {}) {
  auto owner = std::make_shared<ScratchOwner<Workspace>>(bytes);
  if (configure) configure(owner->view());
  return owner;
}

}  // namespace gpulab
