// The replay guard's device parts (StageInstance::redraw: every timed run gets an input no earlier
// call saw, and its output is judged): verdicts in O(n) with no oracle, where a CPU oracle of every
// draw would cost seconds per stage (a CPU sort of 2^24 keys), and draws made on the device for
// stages whose work does not depend on the values (a transpose). Include from a lab's lab.cu.
//
// judge_sort_on_device: a sort's output, per segment of `segment` keys (a whole sort: segment = n;
// ShearSort's tile stages: 1024):
// - sorted: order_key(out[i]) <= order_key(out[i + 1]) inside a segment;
// - with values (value i = input position i): every value names a position of the same segment
//   whose key is the output key, and equal order keys have increasing values. Together that makes
//   the values a permutation (a repeat would be equal keys with equal values) and the sort stable:
//   exact, no fingerprint;
// - keys only: the output is the input's multiset of keys per segment, up to a salted 128-bit
//   fingerprint (sums of a 64-bit mix of (key, segment) under two salts from the OS's entropy, so
//   no stage can aim at a collision).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulab/buffer.hpp"
#include "gpulab/check.hpp"
#include "gpulab/cuda_check.hpp"
#include "gpulab/math.hpp"
#include "gpulab/splitmix64.hpp"
#include "gpulab/stages.hpp"

namespace gpulab {

// The judges' and draws' launches: 256 threads, a grid-stride loop over n on at most 4096 blocks.
inline constexpr int kJudgeThreads = 256;
inline unsigned judge_grid(std::size_t n) {
  return static_cast<unsigned>(std::min<std::size_t>(ceil_div(n, std::size_t{kJudgeThreads}), 4096));
}

// The smallest index a judge kernel flagged (atomicMin into `*first`), none when it flagged none:
// `launch(first)` enqueues the kernel. The report of a judge that names the first wrong element.
template <class Launch>
std::optional<std::size_t> first_flagged(Launch launch) {
  const unsigned long long none = ~0ull;
  DeviceBuffer<unsigned long long> first(std::vector<unsigned long long>{none});
  launch(first.data());
  GPULAB_CUDA_CHECK(cudaGetLastError());
  const unsigned long long at = first.download()[0];
  return at == none ? std::nullopt : std::optional<std::size_t>(static_cast<std::size_t>(at));
}

namespace fresh_input_detail {

inline constexpr unsigned long long kNone = ~0ull;

struct Tally {
  unsigned long long unsorted = kNone;    // first i with out[i + 1] before out[i]
  unsigned long long bad_value = kNone;   // first i whose value is not the position of its key
  unsigned long long unstable = kNone;    // first i with equal keys and values not increasing
  unsigned long long in_sum[2] = {0, 0};  // keys only: the input's fingerprints
  unsigned long long out_sum[2] = {0, 0};
};

__device__ inline unsigned long long warp_sum(unsigned long long v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <class OrderKey>
__global__ void judge_sort(const std::uint32_t* in, const std::uint32_t* out, const std::uint32_t* values,
                           std::size_t n, std::size_t segment, OrderKey order_key, unsigned long long salt0,
                           unsigned long long salt1, Tally* tally) {
  unsigned long long in0 = 0, in1 = 0, out0 = 0, out1 = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::size_t seg = i / segment;
    const std::uint32_t key = out[i];
    const bool has_next = i + 1 < n && (i + 1) % segment != 0;
    const std::uint32_t next = has_next ? out[i + 1] : 0;
    if (has_next && order_key(next) < order_key(key)) atomicMin(&tally->unsorted, i);
    if (values) {
      const std::uint32_t v = values[i];
      if (v >= n || v / segment != seg || in[v] != key) atomicMin(&tally->bad_value, i);
      if (has_next && order_key(next) == order_key(key) && values[i + 1] <= v) atomicMin(&tally->unstable, i);
    } else {
      const unsigned long long tagged = (static_cast<unsigned long long>(seg) << 32) | key;
      const unsigned long long tagged_in = (static_cast<unsigned long long>(seg) << 32) | in[i];
      out0 += splitmix64_mix(tagged ^ salt0);
      out1 += splitmix64_mix(tagged ^ salt1);
      in0 += splitmix64_mix(tagged_in ^ salt0);
      in1 += splitmix64_mix(tagged_in ^ salt1);
    }
  }
  if (values) return;
  in0 = warp_sum(in0), in1 = warp_sum(in1), out0 = warp_sum(out0), out1 = warp_sum(out1);
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&tally->in_sum[0], in0);
    atomicAdd(&tally->in_sum[1], in1);
    atomicAdd(&tally->out_sum[0], out0);
    atomicAdd(&tally->out_sum[1], out1);
  }
}

}  // namespace fresh_input_detail

// The verdict on a sort's device output `out` (and `out_values`, or null for keys only) of the device
// input `in` (values of the input: their positions). `order_key` maps a key's 32 bits to an unsigned
// key in the sort's order (a device-callable functor). Synchronises; one pass over n (judge_grid), a
// few atomics per warp.
template <class OrderKey>
CheckResult judge_sort_on_device(const std::uint32_t* in, const std::uint32_t* out, const std::uint32_t* out_values,
                                 std::size_t n, std::size_t segment, OrderKey order_key) {
  namespace d = fresh_input_detail;
  if (n == 0) return CheckResult::pass();
  if (segment == 0) segment = n;
  DeviceBuffer<d::Tally> tally(std::vector<d::Tally>{d::Tally{}});
  d::judge_sort<<<judge_grid(n), kJudgeThreads>>>(in, out, out_values, n, segment, order_key, entropy_seed(),
                                                    entropy_seed(), tally.data());
  GPULAB_CUDA_CHECK(cudaGetLastError());
  const d::Tally t = tally.download()[0];
  auto at = [&](unsigned long long i) {
    return "at " + std::to_string(i) + (segment < n ? " (tile " + std::to_string(i / segment) + ")" : std::string{});
  };
  if (t.unsorted != d::kNone) return CheckResult::fail("not sorted " + at(t.unsorted) + ": the next key comes before it");
  if (t.bad_value != d::kNone)
    return CheckResult::fail("value " + at(t.bad_value) + " is not the input position of its key");
  if (t.unstable != d::kNone) return CheckResult::fail("unstable " + at(t.unstable) + ": equal keys out of input order");
  if (!out_values && (t.in_sum[0] != t.out_sum[0] || t.in_sum[1] != t.out_sum[1]))
    return CheckResult::fail(segment < n ? "some tile's keys are not that tile's input keys (lost, invented or moved)"
                                         : "the output keys are not the input keys (a key lost or invented)");
  return CheckResult::pass();
}

// n floats drawn uniformly in [lo, hi) from `seed`, on the device (counter-based: element i is a mix
// of (seed, i)), for a stage whose work does not depend on the values.
namespace fresh_input_detail {
template <class Float>
__global__ void draw_floats(Float* out, std::size_t n, unsigned long long seed, float lo, float hi) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const unsigned long long z = splitmix64_mix(seed + 0x9E3779B97F4A7C15ull * (i + 1));
    out[i] = lo + (hi - lo) * static_cast<float>(z >> 40) * 0x1.0p-24f;
  }
}
}  // namespace fresh_input_detail

inline void draw_uniform_floats(float* out, std::size_t n, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  if (n == 0) return;
  fresh_input_detail::draw_floats<<<judge_grid(n), kJudgeThreads>>>(out, n, seed, lo, hi);
  GPULAB_CUDA_CHECK(cudaGetLastError());
}

// A pool for draws made on the device: 2 x next_pow2(n) values of the problem's own generator, made
// once (when the stage is prepared), and each draw a gather of n of them, element i from position
// (offset + stride * i) mod P with a random offset and an odd stride: n distinct pool values (P is
// a power of two), a different subset in a different order every draw, so no answer of an earlier
// draw is right (a sum or max over another half of the pool). The values keep the generator's
// distribution element by element; an order the generator made (sorted input) is not kept, so a
// pool serves stages whose work does not depend on the values (a scan, a reduction), not sorts.
// Nor would it be safe for a sort: a stage that collected the pool in the untimed warm-ups (two
// draws see three quarters of it) and sorted it there could answer a timed draw by compacting the
// sorted pool, a pool position p being in the draw when (p - offset) / stride mod P < n, arithmetic
// it can solve from the draw's first two keys: one pass where a sort makes four or more. A sum or a
// prefix sum over the draw has no such shortcut (the positions are a window of the pool permuted by
// the stride, a new permutation each draw); a max has one (the largest pool key the draw holds: a
// few tests), which is why reduction is timed with sum. The sorts draw on the host from the generator.
namespace fresh_input_detail {
template <class T>
__global__ void gather_pool(const T* pool, std::size_t mask, T* out, std::size_t n, std::size_t offset,
                            std::size_t stride) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = pool[(offset + stride * i) & mask];
}
}  // namespace fresh_input_detail

template <class T>
class DrawPool {
 public:
  // The pool's size for n, and its values: `make(count)` draws count values like the problem's input.
  static std::size_t size_for(std::size_t n) {
    std::size_t p = 1;
    while (p < n) p *= 2;
    return n == 0 ? 0 : 2 * p;
  }
  explicit DrawPool(const std::vector<T>& values) : values_(values) {
    if (!values.empty() && (values.size() & (values.size() - 1)) != 0)
      throw std::logic_error("DrawPool: the pool's size must be a power of two (size_for)");
  }
  void draw(T* out, std::size_t n, std::uint64_t seed) const {
    if (n == 0) return;
    const std::size_t mask = values_.size() - 1;
    const auto offset = static_cast<std::size_t>(splitmix64_mix(seed)) & mask;
    const auto stride = (static_cast<std::size_t>(splitmix64_mix(seed ^ 0x5851F42D4C957F2Dull)) & mask) | 1;
    fresh_input_detail::gather_pool<<<judge_grid(n), kJudgeThreads>>>(values_.data(), mask, out, n, offset, stride);
    GPULAB_CUDA_CHECK(cudaGetLastError());
  }

 private:
  DeviceBuffer<T> values_;
};

// The pool of the problem `key` (its n, seed and knobs): `make(count, seed)` draws count values like
// the problem's input (its generator) under a seed other than the input's; the values are made once
// per key (problem_data under `Tag`), each stage uploads its own pool.
template <class T, class Tag>
std::shared_ptr<const DrawPool<T>> draw_pool(const Problem& key,
                                             const std::function<std::vector<T>(std::size_t, std::uint64_t)>& make) {
  const auto values = problem_data<std::vector<T>, Tag>(
      key, [&] { return make(DrawPool<T>::size_for(key.n), key.seed ^ 0xD1B54A32D192ED03ull); }, 1);
  return std::make_shared<const DrawPool<T>>(*values);
}

// An exclusive sum of int32 (wrapping modulo 2^32) judged on the device in O(n), exactly: out[0] is
// 0 and out[i + 1] - out[i] is in[i]. The first wrong element is reported.
namespace fresh_input_detail {
template <class Int>
__global__ void first_wrong_prefix(const Int* in, const Int* out, std::size_t n, unsigned long long* first) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const auto here = static_cast<std::uint32_t>(out[i]);
    const auto before = i == 0 ? 0u : static_cast<std::uint32_t>(out[i - 1]) + static_cast<std::uint32_t>(in[i - 1]);
    if (here != before) atomicMin(first, static_cast<unsigned long long>(i));
  }
}
}  // namespace fresh_input_detail

inline CheckResult judge_exclusive_sum_on_device(const std::int32_t* in, const std::int32_t* out, std::size_t n) {
  if (n == 0) return CheckResult::pass();
  const auto at = first_flagged([&](unsigned long long* first) {
    fresh_input_detail::first_wrong_prefix<<<judge_grid(n), kJudgeThreads>>>(in, out, n, first);
  });
  if (!at) return CheckResult::pass();
  return CheckResult::fail("element " + std::to_string(*at) + " of the exclusive sum is wrong (it is not the element " +
                           "before it plus the input before it)");
}

// The judge's own copy of a draw, taken right after it (untimed, before the run): a stage's input
// pointer is const only by promise, and a judge that read the input after the run could be shown a
// rewritten input that fits a rewritten output (all zeros in both is a sorted permutation and an
// exclusive sum). Judges read this copy, never the stage's input.
template <class T>
class DrawCopy {
 public:
  explicit DrawCopy(std::size_t n) : copy_(n) {}
  void take(const T* input) {
    if (!copy_.empty()) GPULAB_CUDA_CHECK(cudaMemcpy(copy_.data(), input, copy_.bytes(), cudaMemcpyDeviceToDevice));
  }
  const T* data() const { return copy_.data(); }
  std::size_t size() const { return copy_.size(); }

 private:
  DeviceBuffer<T> copy_;
};

// int32 keys in their order, as unsigned words (the sign bit flipped).
struct Int32Order {
  __device__ std::uint32_t operator()(std::uint32_t bits) const { return bits ^ 0x80000000u; }
};

// A DeviceRun with the replay guard for a stage whose input is one device array: `fill(input,
// seed)` writes a draw into it, the judge's own copy is taken right after (DrawCopy), and
// `judge(drawn, out)` is the verdict on a run's output. The sorts, scan and transpose use it.
template <class T, class In>
DeviceRun<T> with_fresh_input(std::function<void(T*)> run, std::shared_ptr<DeviceBuffer<In>> input,
                              std::function<void(In*, std::uint64_t)> fill,
                              std::function<CheckResult(const In* drawn, const T* out)> judge) {
  auto drawn = std::make_shared<DrawCopy<In>>(input->size());
  return {std::move(run),
          [input, drawn, fill = std::move(fill)](std::uint64_t seed) {
            fill(input->data(), seed);
            drawn->take(input->data());
          },
          [drawn, judge = std::move(judge)](const T* out) { return judge(drawn->data(), out); }};
}

// A GPU sort's DeviceRun with the replay guard: `draw(seed)` makes a fresh draw of the problem's
// keys on the host (the problem's own generator, another seed), uploaded into `keys`, the device
// input every run reads; each run's output is judged by judge_sort_on_device. `values_at`: where
// the values (the input positions, never redrawn) start in the output, in elements; none: keys only.
template <class Key, class OrderKey>
DeviceRun<Key> sort_with_fresh_keys(std::function<void(Key*)> run, std::shared_ptr<DeviceBuffer<Key>> keys,
                                    std::function<std::vector<Key>(std::uint64_t)> draw, OrderKey order_key,
                                    std::size_t segment = 0, std::optional<std::size_t> values_at = std::nullopt) {
  static_assert(sizeof(Key) == 4 && std::is_trivially_copyable_v<Key>, "the verdict reads 32-bit keys");
  const std::size_t n = keys->size();
  return with_fresh_input<Key, Key>(
      std::move(run), keys,
      [draw = std::move(draw), n](Key* input, std::uint64_t seed) {
        const std::vector<Key> fresh = draw(seed);
        GPULAB_CUDA_CHECK(cudaMemcpy(input, fresh.data(), n * sizeof(Key), cudaMemcpyHostToDevice));
      },
      [order_key, segment, values_at, n](const Key* drawn, const Key* out) {
        const auto* words = reinterpret_cast<const std::uint32_t*>(out);
        return judge_sort_on_device(reinterpret_cast<const std::uint32_t*>(drawn), words,
                                    values_at ? words + *values_at : nullptr, n, segment, order_key);
      });
}

}  // namespace gpulab
