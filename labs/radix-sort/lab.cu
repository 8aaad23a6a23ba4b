// The radix-sort lab's harness: the code of each stage of lab.toml (the facts are there), the
// experiments in experiments.cu, the inputs and the oracle in radix_sort_problem.cpp, the model in
// radix_sort_model.cpp, the library baselines in radix_sort_cub.cu. The harness prepares seeded keys of the problem's key type
// (--param key, input, --dist), calls the implementation (yours or the reference) and judges its
// output against the oracle (radix_sort_model.hpp: judge_sort says "not sorted at i" or "unstable:
// equal keys out of input order at i"). Do not edit.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>

#include "gpulab/device_info.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/fresh_input.cuh"
#include "gpulab/stages.hpp"
#include "radix_sort.cuh"
#include "radix_sort_lab.hpp"
#include "radix_sort_model.hpp"

namespace radix_sort {
std::vector<gpulab::Experiment> make_experiments();  // experiments.cu
}

namespace radix_sort::lab {

namespace rm = radix_sort::model;

model::KeyDistribution distribution_of(const gpulab::Problem& p) {
  using D = model::KeyDistribution;
  switch (p.param("input", dist)) {
    case 1: return D::pow2_max;
    case 2: return D::all_zero;
    case 3: return D::all_one;
    case 4: return D::high_bits;
    case 5: return D::low_bits;
    case 6: return D::mixed_sign;
    case 7: return D::int_extremes;
    case 8: return D::float_specials;
    case 9: return D::entropy_reduced;
    default: break;
  }
  switch (p.distribution) {
    case gpulab::Distribution::small_range: return D::small_range;
    case gpulab::Distribution::all_equal: return D::all_equal;
    case gpulab::Distribution::sorted: return D::sorted;
    case gpulab::Distribution::reverse: return D::reverse;
    case gpulab::Distribution::few_unique: return D::few_unique;
    default: return D::uniform;  // uniform, full-range: every 32-bit pattern
  }
}

namespace {
struct KeysTag {};
struct BitsTag {};
KeyType key_type(const gpulab::Problem& p) { return static_cast<KeyType>(p.param("key", 0)); }
}  // namespace

std::shared_ptr<const std::vector<std::uint32_t>> keys_of(const gpulab::Problem& p) {
  return gpulab::problem_data<std::vector<std::uint32_t>, KeysTag>(p.only({"key", "input"}), [&] {
    return model::make_keys(distribution_of(p), p.n, p.seed, key_type(p));
  });
}

int data_bits_of(const gpulab::Problem& p) {
  return *gpulab::problem_data<int, BitsTag>(
      p.only({"key", "input"}), [&] { return model::key_bits(*keys_of(p), key_type(p)); }, 256);
}

SortConfig config_for(const gpulab::Problem& p) {
  SortConfig c;
  c.key = key_type(p);
  c.end_bit = static_cast<int>(p.param("end_bit", 32));
  c.block = static_cast<int>(p.param("block", c.block));
  c.radix_bits = static_cast<int>(p.param("bits", c.radix_bits));
  c.counters = static_cast<CounterLayout>(p.param("counters", 0));
  return c;
}

model::Problem model_problem(const gpulab::Problem& p, bool with_data_bits) {
  const SortConfig c = config_for(p);
  model::Problem m;
  m.n = p.n;
  m.key = c.key;
  m.end_bit = c.end_bit;
  m.data_bits = with_data_bits ? data_bits_of(p) : 32;
  m.pairs = p.param("pairs", 0) != 0;
  m.radix_bits = c.radix_bits;
  m.block = c.block;
  m.counters = c.counters;
  m.multiprocessors = gpulab::gpu_available() ? std::max(1, gpulab::multiprocessors()) : 132;
  return m;
}

}  // namespace radix_sort::lab

namespace gpulab {

namespace {

using namespace radix_sort;
namespace rm = radix_sort::model;
namespace rl = radix_sort::lab;
using u32 = std::uint32_t;

// ---- the problem: the keys (and values = original indices), the oracle's output ------------------

struct SortData {
  std::shared_ptr<const std::vector<u32>> keys_ptr;  // shared with every stage of the problem (lab::keys_of)
  std::span<const u32> keys;
  std::vector<u32> values;  // empty: keys only
  std::vector<u32> expected;      // radix_sort_model's layout: keys, then values at values_offset(n)
  SortConfig config;
};

std::shared_ptr<const SortData> sort_data(const Problem& p) {
  return problem_data<SortData>(p.only({"key", "input", "pairs", "end_bit"}), [&] {
    SortData d;
    d.keys_ptr = rl::keys_of(p);
    d.keys = *d.keys_ptr;
    if (p.param("pairs", 0)) d.values = rm::index_values(d.keys.size());
    d.config = rl::config_for(p);
    std::uint32_t gap;
    std::memset(&gap, kPoisonByte, sizeof gap);  // the words between keys and values are never written
    d.expected = rm::expected_output(d.keys, d.values, d.config.key, d.config.end_bit, gap);
    return d;
  });
}

// Every sort's output: one array of 32-bit words. GB/s counts the keys (and values) read once and
// written once: 8n (16n) bytes.
ArrayOutput<u32, SortData> sort_output() {
  return {sort_data, [](const SortData& d) { return std::span<const u32>(d.expected); },
          [](const SortData& d) { return (d.values.empty() ? 8.0 : 16.0) * static_cast<double>(d.keys.size()); },
          [](const SortData& d, std::span<const u32> got) {
            return rm::judge_sort(d.keys, d.values, d.config.key, d.config.end_bit, d.expected, got);
          },
          [](const SortData& d) { return std::optional<double>(static_cast<double>(d.keys.size())); },
          [](const SortData& d) {  // the expected layout (its gap's poison kept), the input in place
            std::vector<u32> copy(d.expected);
            std::copy(d.keys.begin(), d.keys.end(), copy.begin());
            if (!d.values.empty()) std::copy(d.values.begin(), d.values.end(), copy.begin() + rm::values_offset(d.keys.size()));
            return copy;
          }};
}

struct SpanData {
  std::shared_ptr<const std::vector<u32>> keys_ptr;
  std::span<const u32> keys;
  BitSpan span{};
  std::vector<u32> expected;  // the four words of the BitSpan
};

ArrayOutput<u32, SpanData> span_output() {
  return {[](const Problem& p) {
            return problem_data<SpanData>(p.only({"key", "input"}), [&] {
              SpanData d;
              d.keys_ptr = rl::keys_of(p);
              d.keys = *d.keys_ptr;
              d.span = rm::reference_span(d.keys, rl::config_for(p).key);
              d.expected = {d.span.or_all, d.span.and_all, d.span.bits, d.span.reserved};
              return d;
            });
          },
          [](const SpanData& d) { return std::span<const u32>(d.expected); },
          [](const SpanData& d) { return 4.0 * static_cast<double>(d.keys.size()) + sizeof(BitSpan); },  // read n, write 16 B
          [](const SpanData& d, std::span<const u32> got) { return rm::judge_span(d.span, got); },
          [](const SpanData& d) { return std::optional<double>(static_cast<double>(d.keys.size())); }};
}

// ---- the stages' code ---------------------------------------------------------------------------------

using SortFn = void (*)(const u32*, u32*, const u32*, u32*, std::size_t, SortWorkspace&);
using CpuSortFn = void (*)(const u32*, u32*, const u32*, u32*, std::size_t, const SortConfig&);

// What a timed run of a sort gets: the input on the device, the output's two parts.
struct DeviceInput {
  std::shared_ptr<DeviceBuffer<u32>> keys;  // rewritten by the replay guard's draws
  std::shared_ptr<const DeviceBuffer<u32>> values;  // null: keys only; the positions, never redrawn
  std::size_t n = 0;
  const u32* values_in() const { return values ? values->data() : nullptr; }
  u32* values_out(u32* out) const { return values ? out + rm::values_offset(n) : nullptr; }
};

DeviceInput device_input(const SortData& d) {
  DeviceInput in;
  in.keys = upload_input(d.keys);
  if (!d.values.empty()) in.values = upload(d.values);
  in.n = d.keys.size();
  return in;
}

// The order a sort's output must have on the device: the ordered key's bits [0, end_bit).
struct SortedBits {
  KeyType key;
  u32 mask;
  __device__ u32 operator()(u32 bits) const { return to_ordered(bits, key) & mask; }
};

// The replay guard (StageInstance::redraw) for a sort: each timed run sorts keys drawn like the
// problem's (lab::keys_of's generator, another seed; the values stay the positions) and its output
// is judged on the device (gpulab/fresh_input.cuh): sorted on the stage's bits, stable with values.
DeviceRun<u32> guarded_sort(std::function<void(u32*)> run, const DeviceInput& in, const Problem& p) {
  const rm::KeyDistribution dist = rl::distribution_of(p);
  const SortConfig c = rl::config_for(p);
  const SortedBits order{c.key, c.end_bit >= 32 ? ~0u : (1u << c.end_bit) - 1u};
  return sort_with_fresh_keys<u32>(
      std::move(run), in.keys, [dist, c, n = in.n](std::uint64_t seed) { return rm::make_keys(dist, n, seed, c.key); },
      order, 0, in.values ? std::optional<std::size_t>(rm::values_offset(in.n)) : std::nullopt);
}

Stage::Code gpu_sort(SortFn fn) {
  return device_stage<u32, SortData>(sort_output(), [fn](const std::shared_ptr<const SortData>& d, const Problem& p) {
    const DeviceInput in = device_input(*d);
    auto ws = scratch<SortWorkspace>(sort_workspace_bytes(in.n), [&](SortWorkspace& w) {
      w.config = rl::config_for(p);
      w.multiprocessors = multiprocessors();
    });
    return guarded_sort([fn, in, ws](u32* out) { fn(in.keys->data(), out, in.values_in(), in.values_out(out), in.n, ws->fresh()); },
                        in, p);
  });
}

Stage::Code cpu_sort(CpuSortFn fn) {
  return host_stage<u32, SortData>(sort_output(), [fn](const SortData& d, u32* out) {
    const std::size_t n = d.keys.size();
    fn(d.keys.data(), out, d.values.empty() ? nullptr : d.values.data(),
       d.values.empty() ? nullptr : out + rm::values_offset(n), n, d.config);
  });
}

// The harness's own oracle as a stage (the "cpu-reference" baseline).
void reference_cpu(const u32* keys, u32* keys_out, const u32* values, u32* values_out, std::size_t n,
                   const SortConfig& config) {
  std::vector<u32> k, v;
  rm::reference_sort(std::span<const u32>(keys, n), std::span<const u32>(values, values ? n : 0), config.key,
                     config.end_bit, k, v);
  std::copy(k.begin(), k.end(), keys_out);
  if (values) std::copy(v.begin(), v.end(), values_out);
}

// find-max's replay guard: the span of each draw is computed on the host as the draw is made (O(n)).
Stage::Code find_max() {
  return device_stage<u32, SpanData>(span_output(), [](const std::shared_ptr<const SpanData>& d, const Problem& p) {
    auto keys = upload_input(d->keys);
    const std::size_t n = d->keys.size();
    auto ws = scratch<SortWorkspace>(8 * n + (std::size_t{1} << 20), [&](SortWorkspace& w) {
      w.config = rl::config_for(p);
      w.multiprocessors = multiprocessors();
    });
    auto drawn = std::make_shared<BitSpan>();
    const rm::KeyDistribution dist = rl::distribution_of(p);
    const KeyType type = rl::config_for(p).key;
    return DeviceRun<u32>{
        [keys, n, ws](u32* out) { find_key_bits(keys->data(), n, reinterpret_cast<BitSpan*>(out), ws->fresh()); },
        [keys, drawn, dist, type, n](std::uint64_t seed) {
          const auto fresh = rm::make_keys(dist, n, seed, type);
          keys->upload(fresh);
          *drawn = rm::reference_span(fresh, type);
        },
        [drawn](const u32* out) {
          std::vector<u32> got(4);
          GPULAB_CUDA_CHECK(cudaMemcpy(got.data(), out, 4 * sizeof(u32), cudaMemcpyDeviceToHost));
          return rm::judge_span(*drawn, got);
        }};
  });
}

// ---- digit4-count: digit4's round 1 on its own (digit4_count, once per pass) --------------------------
// Graded for correctness and conflict-free counting, never timed (no performance points): no replay
// guard. Every pass counts the *input* keys at shift 4 q (the counts do not depend on the order the
// earlier passes leave), over the contract's tiling (G = min(SMs x kDigit4BlocksPerSm, chunks)); the
// output is the P x 16 x G count words, judged against the CPU's (radix_sort_model.hpp).

struct CountData {
  std::shared_ptr<const std::vector<u32>> keys_ptr;
  std::span<const u32> keys;
  std::size_t tile_size = 0, tiles = 0;
  int end_bit = 32;
  std::vector<u32> expected;  // digit4_tile_counts
};

ArrayOutput<u32, CountData> count_output() {
  return {[](const Problem& p) {
            return problem_data<CountData>(p.only({"key", "input", "end_bit"}), [&] {
              CountData d;
              d.keys_ptr = rl::keys_of(p);
              d.keys = *d.keys_ptr;
              const rm::Problem m = rl::model_problem(p, false);
              d.tile_size = rm::digit4_tile_size(m);
              d.tiles = rm::digit4_tiles(m);
              d.end_bit = m.end_bit;
              d.expected = rm::digit4_tile_counts(d.keys, m.key, m.end_bit, d.tile_size, d.tiles);
              return d;
            });
          },
          [](const CountData& d) { return std::span<const u32>(d.expected); },
          [](const CountData& d) {  // per pass: read the keys, write 16 G counts
            return static_cast<double>(pass_count(d.end_bit, kDigit4RadixBits)) *
                   (4.0 * static_cast<double>(d.keys.size()) + 4.0 * kDigit4Digits * static_cast<double>(d.tiles));
          },
          [](const CountData& d, std::span<const u32> got) { return rm::judge_tile_counts(d.expected, got, d.tiles); },
          [](const CountData& d) { return std::optional<double>(static_cast<double>(d.keys.size())); }};
}

Stage::Code digit4_counts() {
  return device_stage<u32, CountData>(count_output(), [](const std::shared_ptr<const CountData>& d, const Problem& p) {
    auto keys = upload(d->keys);
    const SortConfig c = rl::config_for(p);
    const int passes = pass_count(c.end_bit, kDigit4RadixBits);
    return [keys, d, c, passes](u32* out) {
      const std::size_t n = d->keys.size(), words = static_cast<std::size_t>(kDigit4Digits) * d->tiles;
      for (int q = 0; q < passes; ++q)
        digit4_count(keys->data(), n, d->tile_size, d->tiles, q * kDigit4RadixBits,
                     pass_bits(c.end_bit, kDigit4RadixBits, q), out + q * words, c);
    };
  });
}

// The library baselines: temporary storage allocated here, when the stage is prepared (untimed).
enum class Library { cub_radix, thrust, cub_merge };

Stage::Code library_sort(Library lib) {
  return device_stage<u32, SortData>(sort_output(), [lib](const std::shared_ptr<const SortData>& d, const Problem& p) {
    const DeviceInput in = device_input(*d);
    const SortConfig c = d->config;
    const bool pairs = in.values != nullptr;
    std::size_t bytes = 0;
    if (lib == Library::cub_radix) bytes = rl::cub_sort_bytes(in.n, c.key, c.end_bit, pairs);
    if (lib == Library::cub_merge) bytes = rl::merge_sort_bytes(in.n, pairs);
    auto temp = std::make_shared<DeviceBuffer<unsigned char>>(std::max<std::size_t>(bytes, 1));
    return guarded_sort([lib, in, c, temp, bytes](u32* out) {
      switch (lib) {
        case Library::cub_radix:
          rl::cub_sort(temp->data(), bytes, in.keys->data(), out, in.values_in(), in.values_out(out), in.n, c.key, c.end_bit);
          break;
        case Library::thrust: rl::thrust_sort(in.keys->data(), out, in.values_in(), in.values_out(out), in.n, c.key); break;
        case Library::cub_merge:
          rl::merge_sort(temp->data(), bytes, in.keys->data(), out, in.values_in(), in.values_out(out), in.n, c.key,
                         c.end_bit);
          break;
      }
    }, in, p);
  });
}

// The model (radix_sort_model.hpp): launches R(n) and the paths a problem reaches. split-global's
// passes depend on the data (find-max's K), so its model reads the keys.
LaunchModel launches(rm::Stage s) {
  return [s](const Problem& p) -> std::optional<long> {
    return rm::launches(s, rl::model_problem(p, s == rm::Stage::split_global));
  };
}
PathModel paths(rm::Stage s) {
  return [s](const Problem& p) { return rm::paths(s, rl::model_problem(p, s == rm::Stage::split_global)); };
}

void check_knob_names(const Lab& lab, const char* key, const std::vector<std::string>& names) {
  const Knob* k = lab.find_knob(key);
  if (!k || k->values != names)
    throw std::logic_error(std::string("labs/radix-sort/lab.toml: knob ") + key +
                           " must list its values in the order of radix_sort_lab.hpp / radix_sort.cuh");
}

}  // namespace

Lab make_lab() {
  Lab lab = lab_from_manifest();
  using S = rm::Stage;
  auto student = [&](S s, Stage::Code code) -> Stage& {
    return lab.bind(rm::to_string(s), std::move(code)).launches(launches(s)).reaches(paths(s));
  };
  lab.bind("cpu", cpu_sort(sort_cpu));
  lab.bind("cpu-lsd", cpu_sort(sort_cpu_lsd));
  student(S::find_max, find_max());
  student(S::split_global, gpu_sort(sort_split_global));
  student(S::split_scan_fused, gpu_sort(sort_split_scan_fused));
  student(S::split_onepass, gpu_sort(sort_split_onepass));
  student(S::digit4, gpu_sort(sort_digit4));
  student(S::digit4_count, digit4_counts());
  student(S::onesweep, gpu_sort(sort_onesweep));
  lab.bind("cpu-reference", cpu_sort(reference_cpu));
  // The libraries' launch counts are theirs (no model).
  lab.bind("cub-sort", library_sort(Library::cub_radix));
  lab.bind("thrust-sort", library_sort(Library::thrust));
  lab.bind("cub-merge-sort", library_sort(Library::cub_merge));
  lab.experiments = radix_sort::make_experiments();
  check_knob_names(lab, "key", {"u32", "i32", "f32"});
  check_knob_names(lab, "counters", {"lane", "thread"});
  check_knob_names(lab, "input", std::vector<std::string>(std::begin(rl::kInputs), std::end(rl::kInputs)));
  return lab;
}

}  // namespace gpulab
