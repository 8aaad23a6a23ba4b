// The scan lab's CPU side: inputs, references, and the bank-conflict model (scan_model.hpp).
#include "scan_model.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "gpulab/math.hpp"
#include "gpulab/splitmix64.hpp"

#include "scan.cuh"

namespace scan::model {

namespace {

// A stateless 64-bit mix (splitmix64's finaliser): element i's coin does not depend on n.
std::uint64_t mix(std::uint64_t z) { return gpulab::SplitMix64{z}.next(); }

template <class IndexOfLane>
Request words(std::string step, IndexOfLane index, int active = gpulab::kWarpSize, int width_bytes = 4) {
  return Request{std::move(step), gpulab::WarpAccess::words(index, active, width_bytes)};
}

void check_colors(int colors, const char* who) {
  if (colors < 1 || colors > kMaxColors) throw std::invalid_argument(std::string(who) + ": colors must be 1..16");
}

}  // namespace

std::vector<int> scan_input(gpulab::Distribution d, std::size_t n, std::uint64_t seed) {
  return gpulab::generate_int32(d, n, seed);
}

std::vector<std::uint8_t> color_input(std::size_t n, std::uint64_t seed, int colors) {
  if (colors < 1 || colors > kMaxColors) throw std::invalid_argument("color_input: colors must be 1..16");
  std::vector<std::uint8_t> c(n);
  const std::uint64_t stream = mix(seed ^ 0xC010C010C010C010ull);
  for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<std::uint8_t>(mix(stream + i) % static_cast<unsigned>(colors));
  return c;
}

std::vector<int> compaction_input(gpulab::Distribution d, std::size_t n, std::uint64_t seed, int zero_percent) {
  if (zero_percent < 0 || zero_percent > 100) throw std::invalid_argument("compaction_input: zero_percent must be 0..100");
  std::vector<int> v = gpulab::generate_int32(d, n, seed, 1, 1000);
  const std::uint64_t stream = mix(seed ^ 0x2E50C0FFEEull);
  for (std::size_t i = 0; i < n; ++i) {
    if (v[i] == 0) v[i] = 1;  // full-range may draw a zero; zeros come only from the coin below
    if (static_cast<int>(mix(stream + i) % 100) < zero_percent) v[i] = 0;
  }
  return v;
}

std::vector<int> exclusive_scan_reference(std::span<const int> in) {
  std::vector<int> out(in.size());
  std::uint32_t running = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    out[i] = static_cast<int>(running);
    running += static_cast<std::uint32_t>(in[i]);
  }
  return out;
}

std::vector<int> colored_scan_reference(std::span<const int> values, std::span<const std::uint8_t> colors) {
  if (values.size() != colors.size()) throw std::invalid_argument("colored_scan_reference: sizes differ");
  std::vector<int> out(values.size());
  std::uint32_t running[256] = {};
  for (std::size_t i = 0; i < values.size(); ++i) {
    out[i] = static_cast<int>(running[colors[i]]);
    running[colors[i]] += static_cast<std::uint32_t>(values[i]);
  }
  return out;
}

std::vector<int> compact_reference(std::span<const int> in) {
  std::vector<int> out;
  for (int x : in)
    if (x != 0) out.push_back(x);
  return out;
}

std::string to_string(TreeLayout layout) {
  switch (layout) {
    case TreeLayout::plain: return "plain";
    case TreeLayout::padded: return "padded";
    case TreeLayout::seed003_macro: return "seed-003-macro";
  }
  return "?";
}

std::uint32_t seed003_offset_as_parsed(std::uint32_t n) {
  // (n >> (NUM_BANKS + n)) >> (2 * LOG_NUM_BANKS) with NUM_BANKS = 32, LOG_NUM_BANKS = 5.
  const std::uint64_t shift = 32ull + n;
  const std::uint32_t first = shift >= 32 ? 0u : n >> shift;  // PTX shr: counts >= 32 give 0
  return first >> 10;
}

std::uint32_t tree_slot(std::uint32_t i, TreeLayout layout) {
  switch (layout) {
    case TreeLayout::plain: return i;
    case TreeLayout::padded: return i + (i >> 5);
    case TreeLayout::seed003_macro: return i + seed003_offset_as_parsed(i);
  }
  return i;
}

std::vector<Request> tree_scan_requests(int block, TreeLayout layout) {
  if (block < 32 || block > 1024 || (block & (block - 1)) != 0)
    throw std::invalid_argument("tree_scan_requests: block must be a power of two in [32, 1024]");
  std::vector<Request> out;
  const int warps = block / 32;
  auto slot = [&](int i) { return tree_slot(static_cast<std::uint32_t>(i), layout); };
  for (int w = 0; w < warps; ++w) {
    out.push_back(words("load a warp " + std::to_string(w), [&](int lane) { return slot(32 * w + lane); }));
    out.push_back(words("load b warp " + std::to_string(w), [&](int lane) { return slot(block + 32 * w + lane); }));
  }
  // Level with `active` threads and stride s: thread t pairs left = s(2t+1)-1, right = s(2t+2)-1.
  // Each level reads left and right and writes right (up) or both (down): 3 or 4 requests, but
  // reads and writes of one index have the same banks, so the model lists each index once.
  auto level = [&](const std::string& phase, int active, int stride) {
    for (int w = 0; w * 32 < active; ++w) {
      const int lanes = std::min(32, active - 32 * w);
      for (int side = 1; side <= 2; ++side) {
        out.push_back(words(phase + " stride " + std::to_string(stride) + (side == 1 ? " left" : " right") +
                                " warp " + std::to_string(w),
                            [&](int lane) { return slot(stride * (2 * (32 * w + lane) + side) - 1); }, lanes));
      }
    }
  };
  int stride = 1;
  for (int active = block; active > 0; active >>= 1, stride <<= 1) level("up-sweep", active, stride);
  for (int active = 1; active < 2 * block; active <<= 1) {
    stride >>= 1;
    level("down-sweep", active, stride);
  }
  return out;
}

std::vector<Request> colored_offset_requests(int colors, bool conflict_free) {
  check_colors(colors, "colored_offset_requests");
  std::vector<Request> out;
  const int stride = kColoredTransposeStride;
  if (!conflict_free) {
    for (int j = 0; j < 32; ++j)
      out.push_back(words("walk counts j=" + std::to_string(j), [&](int c) { return c * 32 + j; }, colors));
    return out;
  }
  // trans lives after counts in the model's address space; only banks matter, so an offset of a
  // multiple of 32 words changes nothing.
  const int trans = kMaxColors * 32;
  for (int c = 0; c < colors; ++c) {
    out.push_back(words("transpose read c=" + std::to_string(c), [&](int t) { return c * 32 + t; }));
    out.push_back(words("transpose write c=" + std::to_string(c), [&](int t) { return trans + t * stride + c; }));
  }
  for (int j = 0; j < 32; ++j)
    out.push_back(words("walk trans j=" + std::to_string(j), [&](int c) { return trans + j * stride + c; }, colors));
  for (int c = 0; c < colors; ++c) {
    out.push_back(words("transpose back read c=" + std::to_string(c), [&](int t) { return trans + t * stride + c; }));
    out.push_back(words("transpose back write c=" + std::to_string(c), [&](int t) { return c * 32 + t; }));
  }
  return out;
}

std::vector<Request> colored_direct_walk_128bit_requests(int colors) {
  check_colors(colors, "colored_direct_walk_128bit_requests");
  // Index k of a 16-byte access: lane c's row starts at word 32 c, i.e. at 16-byte unit 8 c.
  std::vector<Request> out;
  for (const char* kind : {"load", "store"})
    for (int k = 0; k < 8; ++k)
      out.push_back(words(std::string("walk counts 128-bit ") + kind + " k=" + std::to_string(k),
                          [&](int c) { return 8 * c + k; }, colors, 16));
  return out;
}

std::vector<Request> colored_page_requests() {
  std::vector<Request> out;
  auto padded = [](int k) { return k + (k >> 5); };
  for (int q = 0; q < kColoredPage / 128; ++q) {
    for (int e = 0; e < 4; ++e)
      out.push_back(words("stage values q=" + std::to_string(q) + " e=" + std::to_string(e),
                          [&](int lane) { return padded(4 * (q * 32 + lane) + e); }));
    out.push_back(words("stage colors q=" + std::to_string(q), [&](int lane) { return padded(q * 32 + lane); }));
  }
  for (int q = 0; q < 8; ++q)
    out.push_back(words("thread reads its colors q=" + std::to_string(q), [&](int t) { return padded(8 * t + q); }));
  for (int j = 0; j < 32; ++j)
    out.push_back(words("thread reads its values j=" + std::to_string(j), [&](int t) { return padded(32 * t + j); }));
  // counts[c * 32 + t] for any colors c(t): bank t whatever the colors are.
  out.push_back(words("count (any colors)", [&](int t) { return ((t * 7) % kMaxColors) * 32 + t; }));
  return out;
}

std::vector<Request> alpha_load_requests(int alpha) {
  if (alpha < 1 || alpha > 64) throw std::invalid_argument("alpha_load_requests: alpha must be 1..64");
  std::vector<Request> out;
  for (int j = 0; j < alpha; ++j)
    out.push_back(words("row " + std::to_string(j), [&](int lane) {
      const int e = 32 * j + lane;
      return (e % alpha) * (kAlphaColumns + 1) + e / alpha;
    }));
  return out;
}

gpulab::CheckResult check_compaction(const std::vector<int>& expected, long long count, std::span<const int> out) {
  if (count < 0 || static_cast<std::size_t>(count) > out.size())
    return gpulab::CheckResult::fail("the count is " + std::to_string(count) + ", outside 0.." + std::to_string(out.size()) +
                             " (was it written?)");
  if (static_cast<std::size_t>(count) != expected.size())
    return gpulab::CheckResult::fail("compaction kept " + std::to_string(count) + " elements, expected " +
                             std::to_string(expected.size()) + " (the non-zero ones)");
  return gpulab::compare_exact<int>(expected, out.first(static_cast<std::size_t>(count)));
}

std::vector<std::string> paths(std::string_view stage, std::size_t n, const ScanConfig& config, int zero_percent) {
  if (stage == "cpu" || stage.starts_with("cpu-")) return {};
  if (n == 0) return {"n = 0: nothing to do"};
  const std::size_t block = static_cast<std::size_t>(config.block);
  std::vector<std::string> out;
  auto size_class = [&](std::size_t unit, const char* one, const char* several, const char* partial) {
    out.push_back(n <= unit ? one : several);
    if (n % unit != 0) out.push_back(partial);
  };
  if (stage == "naive" || stage.starts_with("work-efficient")) {
    size_class(block, "one block", "several blocks", "a partial block");
    if (!gpulab::is_pow2(n)) out.push_back("n not a power of two");
  } else if (stage.starts_with("shared")) {
    const std::size_t per_block = 2 * block;   // a block scans 2B elements and leaves one sum
    int levels = 1;
    for (std::size_t m = n; m > per_block; m = gpulab::ceil_div(m, per_block)) ++levels;
    out.push_back(levels == 1 ? "one level" : levels == 2 ? "two levels" : "three levels or more");
    if (n % per_block != 0) out.push_back("a partial block");
  } else if (stage == "three-round" || stage == "single-pass") {
    size_class(block * 16, "one tile", "several tiles", "a partial tile");
  } else if (stage == "alpha-matrix") {
    size_class(std::size_t{kAlphaWarpsPerBlock} * static_cast<std::size_t>(config.alpha) * kAlphaColumns, "one tile",
               "several tiles", "a partial tile");
    // A row of 32 elements lands in whole columns only when alpha divides 32 (scan.cuh).
    out.push_back(kAlphaColumns % config.alpha == 0 ? "alpha divides 32" : "alpha does not divide 32");
  } else if (stage.starts_with("colored")) {
    size_class(kColoredPage, "one page", "several pages", "a partial page");
  } else if (stage == "compact") {
    size_class(block, "one block", "several blocks", "a partial block");
    if (zero_percent == 100) out.push_back("keeps none");
    if (zero_percent == 0) out.push_back("keeps every element");
  }
  if (n % 4 != 0 && stage != "naive" && !stage.starts_with("work-efficient") && !stage.starts_with("shared"))
    out.push_back("a partial vector");
  return out;
}

int alpha_conflict_bound(int alpha) {
  const int columns_touched = (kAlphaColumns + alpha - 1) / alpha;
  return std::min(columns_touched, alpha);
}

}  // namespace scan::model
