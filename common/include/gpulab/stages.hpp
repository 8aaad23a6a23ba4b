// The lab kit's building blocks for stage instances (lab.hpp): a cache of a problem's inputs and
// CPU results, and stages whose output is one array. A lab supplies the inputs, the expected
// output and run(); poisoning, the check, the saved output bytes and the out-of-process check come
// from here. Include from a lab's lab.cu (needs CUDA).
#pragma once
#include <cuda_runtime_api.h>

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
template <class T, Where W>
class ArrayStage : public StageInstance {
 public:
  using Output = std::conditional_t<W == Where::gpu, DeviceBuffer<T>, HostArray<T>>;

  ArrayStage(std::size_t count, std::function<std::span<const T>()> expected)
      : out_(count), expected_(std::move(expected)) {}

  void reset_output() override {
    if constexpr (W == Where::gpu) out_.poison();
    else if (!out_.empty()) std::memset(out_.data(), kPoisonByte, out_.size() * sizeof(T));
  }
  CheckResult check() override { return check_values(download()); }
  std::optional<std::vector<unsigned char>> output_bytes() override { return to_bytes<T>(std::span<const T>(download())); }
  CheckResult check_output(std::span<const unsigned char> bytes) override {
    const auto values = from_bytes<T>(bytes);
    if (!values) return CheckResult::fail("saved output is not a whole number of elements");
    return check_values(*values);
  }

 protected:
  virtual CheckResult check_values(std::span<const T> got) { return compare_exact<T>(expected_(), got); }
  T* output() { return out_.data(); }
  std::size_t size() const { return out_.size(); }
  // The output on the host: a copy from the device, or a view of the host array (no copy).
  auto download() {
    if constexpr (W == Where::gpu) {
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
      return out_.download();
    } else {
      return std::span<const T>(out_.data(), out_.size());
    }
  }

 private:
  Output out_;
  std::function<std::span<const T>()> expected_;
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

// Device scratch for one stage: allocated when the stage is prepared (untimed), reset before
// every run. `Workspace` is the lab's view type (derived from Scratch, with its knobs).
template <class Workspace>
class ScratchOwner {
 public:
  explicit ScratchOwner(std::size_t bytes) : buffer_(bytes) { static_cast<Scratch&>(view_) = Scratch(buffer_.data(), buffer_.size()); }
  Workspace& fresh() {
    view_.reset();
    return view_;
  }
  Workspace& view() { return view_; }

 private:
  DeviceBuffer<unsigned char> buffer_;
  Workspace view_;
};

}  // namespace gpulab
