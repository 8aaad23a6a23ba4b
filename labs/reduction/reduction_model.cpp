// The reduction lab's CPU side (reduction_model.hpp).
#include "reduction_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "gpulab/math.hpp"
#include "gpulab/names.hpp"

namespace reduction::model {

namespace {

constexpr int b = kWarp;
constexpr int kLog2b = 5;

constexpr gpulab::NameTable<Stage, 9> kStageIds{{
    {Stage::cpu, "cpu"},
    {Stage::global_tree, "global-tree"},
    {Stage::tree_interleaved, "tree-interleaved"},
    {Stage::tree, "tree"},
    {Stage::cascading, "cascading"},
    {Stage::pipeline_heap, "pipeline-heap"},
    {Stage::pipeline, "pipeline"},
    {Stage::matrix, "matrix"},
    {Stage::ordered_registers, "ordered-registers"},
}};

bool one_pass(Stage s) {
  return s == Stage::cascading || s == Stage::pipeline_heap || s == Stage::pipeline || s == Stage::matrix ||
         s == Stage::ordered_registers;
}
bool block_tree(Stage s) { return s == Stage::tree || s == Stage::tree_interleaved; }

int ceil_log2(std::size_t n) {
  int k = 0;
  while ((std::size_t{1} << k) < n) ++k;
  return k;
}

void check_shape(const Shape& shape) {
  const int t = shape.block;
  if (t < 64 || t > 1024 || (t & (t - 1)) != 0)
    throw std::invalid_argument("model: block must be a power of two in [64, 1024], got " + std::to_string(t));
  if (shape.max_grid < 1) throw std::invalid_argument("model: max_grid must be >= 1");
  if (shape.element_bytes != 4 && shape.element_bytes != 8 && shape.element_bytes != 16)
    throw std::invalid_argument("model: element_bytes must be 4, 8 or 16");
}

template <class IndexOfLane>
Request words(std::string step, IndexOfLane index, int active = b) {
  return Request{std::move(step), gpulab::WarpAccess::words(index, active)};
}

// Global-tree level d >= 1: threads that combine (level 1: every pair, lone last element copied).
std::size_t global_tree_nodes(std::size_t n, int d) {
  if (d == 1) return ceil_div(n, 2);
  const std::size_t half = std::size_t{1} << (d - 1);
  return n > half ? ceil_div(n - half, 2 * half) : 0;
}

// Blocks of every launch of a block tree.
std::size_t tree_blocks_total(std::size_t n, int block) {
  std::size_t total = 0;
  const auto sizes = tree_level_sizes(n, block);
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) total += sizes[i + 1];
  return total;
}

std::vector<std::uint32_t> uint32s(gpulab::Distribution d, std::size_t count, std::uint64_t seed) {
  return gpulab::generate_uint32(d, count, seed);
}

}  // namespace

// ---- stages ---------------------------------------------------------------------------------------------------

std::vector<Stage> all_stages() { return gpulab::values_of(kStageIds); }

std::string_view to_string(Stage s) { return gpulab::name_of(kStageIds, s); }

std::optional<Stage> parse_stage(std::string_view id) { return gpulab::parse_name(kStageIds, id); }

bool keeps_order(Stage s) { return s != Stage::tree && s != Stage::cascading; }

// ---- inputs ------------------------------------------------------------------------------------------------------

template <>
std::vector<std::int32_t> make_input<SumOp>(gpulab::Distribution d, std::size_t n, std::uint64_t seed) {
  return gpulab::generate_int32(d, n, seed);
}
template <>
std::vector<std::int32_t> make_input<MaxOp>(gpulab::Distribution d, std::size_t n, std::uint64_t seed) {
  return gpulab::generate_int32(d, n, seed);
}
template <>
std::vector<Interval> make_input<IntervalOp>(gpulab::Distribution, std::size_t n, std::uint64_t) {
  if (n >= IntervalOp::kInvalid) throw std::invalid_argument("interval input: n must stay below 2^32 - 2");
  std::vector<Interval> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = IntervalOp::element(static_cast<std::uint32_t>(i));
  return v;
}
template <>
std::vector<Affine> make_input<AffineOp>(gpulab::Distribution d, std::size_t n, std::uint64_t seed) {
  const auto u = uint32s(d, 2 * n, seed);
  std::vector<Affine> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = {2 * u[2 * i] + 1, u[2 * i + 1]};
  return v;
}
template <>
std::vector<Mat2> make_input<Mat2Op>(gpulab::Distribution d, std::size_t n, std::uint64_t seed) {
  const auto u = uint32s(d, 4 * n, seed);
  std::vector<Mat2> v(n);
  // Odd diagonal, even m01: the determinant is odd, so every element is invertible mod 2^32 and no
  // product of them is the zero matrix. Plain random matrices multiply to 0 within a few hundred
  // factors, and a 0 result would pass a stage that combines them in any order.
  for (std::size_t i = 0; i < n; ++i) v[i] = {u[4 * i] | 1u, u[4 * i + 1] & ~1u, u[4 * i + 2], u[4 * i + 3] | 1u};
  return v;
}

std::vector<std::int32_t> all_negative_input(std::size_t n, std::uint64_t seed) {
  return gpulab::generate_int32(gpulab::Distribution::uniform, n, seed, -1000, -1);
}

// ---- shape -------------------------------------------------------------------------------------------------------

std::size_t unit_elements(Stage s, int e) {
  const std::size_t vec = 16 / static_cast<std::size_t>(e);
  switch (s) {
    case Stage::cascading: return std::size_t{b} * kCascadeVectors * vec;
    case Stage::ordered_registers: return std::size_t{b} * kOrderedVectors * vec;
    case Stage::pipeline_heap:
    case Stage::pipeline: return std::size_t{b} * vec;
    case Stage::matrix: return std::size_t{b} * b;
    default: return 0;
  }
}

int first_round_blocks(Stage s, std::size_t n, const Shape& shape) {
  check_shape(shape);
  if (!one_pass(s) || n == 0) return 0;
  return first_round_grid(ceil_div(n, unit_elements(s, shape.element_bytes)), shape.block / b, shape.max_grid);
}

// ---- launches ------------------------------------------------------------------------------------------------------

std::vector<std::size_t> tree_level_sizes(std::size_t n, int block) {
  std::vector<std::size_t> sizes{n};
  if (n == 0) return sizes;
  const std::size_t per = 2 * static_cast<std::size_t>(block);
  do sizes.push_back(ceil_div(sizes.back(), per));
  while (sizes.back() > 1);
  return sizes;
}

long launches(Stage s, std::size_t n, const Shape& shape) {
  check_shape(shape);
  if (s == Stage::cpu) return 0;
  if (n == 0) return 1;
  if (s == Stage::global_tree) return std::max(1, ceil_log2(n));
  if (block_tree(s)) return static_cast<long>(tree_level_sizes(n, shape.block).size()) - 1;
  return first_round_blocks(s, n, shape) > 1 ? 2 : 1;
}

// ---- paths -----------------------------------------------------------------------------------------------------------

std::vector<std::string> paths(Stage s, std::size_t n, const Shape& shape) {
  check_shape(shape);
  if (s == Stage::cpu) return {};
  std::vector<std::string> out{std::to_string(shape.element_bytes) + "-byte elements"};
  if (n == 0) {
    out.push_back("n = 0: the identity written");
    return out;
  }
  if (s == Stage::global_tree) {
    out.push_back(n <= 2 ? "one launch" : "a launch per level");
    if (!gpulab::is_pow2(n)) out.push_back("a level with an odd node");
    return out;
  }
  if (block_tree(s)) {
    out.push_back(tree_level_sizes(n, shape.block).size() > 2 ? "several levels" : "one level");
    if (n % (2 * static_cast<std::size_t>(shape.block)) != 0) out.push_back("a partial block");
    return out;
  }
  const std::size_t unit = unit_elements(s, shape.element_bytes);
  const std::size_t units = ceil_div(n, unit);
  const int grid = first_round_blocks(s, n, shape);
  out.push_back(grid > 1 ? "a second round combines the partials" : "one block writes the result");
  if (n % unit != 0) out.push_back("a partial unit");
  if (units < static_cast<std::size_t>(grid) * static_cast<std::size_t>(shape.block / b)) out.push_back("a warp with no units");
  return out;
}

// ---- traffic -------------------------------------------------------------------------------------------------------

Traffic traffic(Stage s, std::size_t n, const Shape& shape) {
  check_shape(shape);
  const double e = shape.element_bytes;
  Traffic t;
  if (s == Stage::cpu || n == 0) {
    t.bytes = s == Stage::cpu ? n * e : e;
    t.agpu_ios = s == Stage::cpu ? 0 : 1;
    return t;
  }
  if (s == Stage::global_tree) {
    // Scattered accesses cost whole 32-byte sectors: a level reads min(all sectors, 2 per node)
    // and writes min(all sectors, 1 per node); the last level writes one element.
    const double sectors = std::ceil(n * e / 32.0);
    const int levels = std::max(1, ceil_log2(n));
    for (int d = 1; d <= levels; ++d) {
      const double nodes = static_cast<double>(global_tree_nodes(n, d));
      const double reads = d == 1 ? sectors : std::min(sectors, 2 * nodes);
      const double writes = d == levels ? 1 : std::min(sectors, nodes);
      t.bytes += 32.0 * (reads + writes);
      // AGPU: a warp's access covers min(2^d, b) blocks' worth of scattered words.
      t.agpu_ios += 3.0 * std::ceil(nodes * std::min<double>(std::ldexp(1.0, d), b) / b);
    }
    return t;
  }
  if (block_tree(s)) {
    const auto sizes = tree_level_sizes(n, shape.block);
    for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
      t.bytes += (sizes[i] + sizes[i + 1]) * e;
      t.agpu_ios += std::ceil(static_cast<double>(sizes[i]) / b) + static_cast<double>(sizes[i + 1]);
    }
    return t;
  }
  const int g = first_round_blocks(s, n, shape);
  t.bytes = n * e + (g > 1 ? 2.0 * g * e : 0.0) + e;
  t.agpu_ios = std::ceil(static_cast<double>(n) / b) + (g > 1 ? g + std::ceil(g / double(b)) : 0.0) + 1;
  return t;
}

// ---- time ------------------------------------------------------------------------------------------------------------

double agpu_time(Stage s, std::size_t n, const Shape& shape) {
  check_shape(shape);
  if (s == Stage::cpu || n == 0) return 0;
  const double k_max = static_cast<double>(shape.max_grid) * shape.block / b;
  if (s == Stage::global_tree) {
    double t = 0;
    for (int d = 1; d <= std::max(1, ceil_log2(n)); ++d) t += std::ceil(global_tree_nodes(n, d) / (k_max * b));
    return t;
  }
  if (block_tree(s)) {
    // Algorithm 1's loop: d <- ceil(d / 2b) per level, ceil(d / 2kb) serial rounds of log2 b steps.
    double t = 0;
    for (std::size_t d = n; d > 1; d = ceil_div(d, 2 * b)) t += std::ceil(d / (2.0 * k_max * b)) * kLog2b;
    return t;
  }
  const double k = static_cast<double>(first_round_blocks(s, n, shape)) * shape.block / b;
  const double per_core = std::ceil(n / (k * b));
  switch (s) {
    case Stage::matrix: return std::ceil(n / (k * b * b)) * (2 * b + kLog2b);
    default: return per_core + kLog2b;  // cascading, ordered-registers, pipeline(-heap): rows + log2 b
  }
}

double predicted_ms(Stage s, std::size_t n, const Shape& shape, double sigma_us, double gbps) {
  return launches(s, n, shape) * sigma_us / 1000.0 + traffic(s, n, shape).bytes / (gbps * 1e6);
}

// ---- shared memory -------------------------------------------------------------------------------------------------

int resident_warps(int smem_per_sm, int bytes_per_block, int warps_per_block, int reserved_per_block) {
  if (warps_per_block < 1 || warps_per_block > 32) throw std::invalid_argument("resident_warps: 1..32 warps per block");
  int blocks = std::min(32, 64 / warps_per_block);
  if (bytes_per_block > 0) blocks = std::min(blocks, smem_per_sm / (bytes_per_block + reserved_per_block));
  return blocks * warps_per_block;
}

SharedUse shared_use(Stage s, const Shape& shape, int smem_per_sm, int w) {
  check_shape(shape);
  const int wpb = shape.block / b;
  const int partials = b * 4 * w;  // block_reduce_ordered's 32 warp partials
  SharedUse u;
  switch (s) {
    case Stage::cpu:
    case Stage::global_tree: u.bytes_per_block = 0; break;
    case Stage::tree:
    case Stage::tree_interleaved: u.bytes_per_block = shape.block * 4 * w; break;
    case Stage::cascading: u.bytes_per_block = partials; break;
    // The reference's double-buffered ring of warp-tile values: 2 x kOrderedRing rounds x 32 warps.
    case Stage::ordered_registers: u.bytes_per_block = 2 * kOrderedRing * b * 4 * w; break;
    case Stage::pipeline_heap:
    case Stage::pipeline: u.bytes_per_block = wpb * 2 * b * 4 * w + partials; break;
    case Stage::matrix: u.bytes_per_block = wpb * b * (b + 1) * 4 * w + partials; break;
  }
  u.words_per_warp = u.bytes_per_block / 4 / wpb;
  u.resident_warps = s == Stage::cpu ? 0 : resident_warps(smem_per_sm, u.bytes_per_block, wpb);
  u.occupancy = u.resident_warps / 64.0;
  u.words_per_sm = static_cast<long>(u.resident_warps / wpb) * (u.bytes_per_block / 4);
  u.multiplicity = u.words_per_warp > 0 ? (smem_per_sm / 4.0) / u.words_per_warp : 0;
  return u;
}

// ---- bank model ------------------------------------------------------------------------------------------------------

std::vector<Request> tree_interleaved_requests(int block) {
  check_shape(Shape{block});
  std::vector<Request> out;
  for (int w = 0; w < block / b; ++w) out.push_back(words("leaf store", [&](int l) { return b * w + l; }));
  for (int s = 1; s < block; s *= 2) {
    const int active = ceil_div(block, 2 * s);  // threads t with 2 s t < T
    for (int w = 0; w * b < active; ++w) {
      const int lanes = std::min(b, active - b * w);
      auto k = [&](int l) { return 2 * s * (b * w + l); };
      const std::string at = " s=" + std::to_string(s) + " warp " + std::to_string(w);
      out.push_back(words("load x[2st]" + at, k, lanes));
      out.push_back(words("load x[2st+s]" + at, [&](int l) { return k(l) + s; }, lanes));
      out.push_back(words("store x[2st]" + at, k, lanes));
    }
  }
  out.push_back(words("result load", [](int) { return 0; }, 1));
  return out;
}

int tree_interleaved_degree(int block, int stride) {
  const int a = std::min(b, block / (2 * stride));
  return static_cast<int>(ceil_div(static_cast<std::size_t>(a) * std::gcd(2 * stride, b), b));
}

std::vector<Request> tree_requests(int block) {
  check_shape(Shape{block});
  std::vector<Request> out;
  for (int w = 0; w < block / b; ++w) out.push_back(words("leaf store", [&](int l) { return b * w + l; }));
  for (int s = block / 2; s > 0; s /= 2) {
    for (int w = 0; w * b < s; ++w) {
      const int lanes = std::min(b, s - b * w);
      const std::string at = " s=" + std::to_string(s) + " warp " + std::to_string(w);
      out.push_back(words("load x[t]" + at, [&](int l) { return b * w + l; }, lanes));
      out.push_back(words("load x[t+s]" + at, [&](int l) { return b * w + l + s; }, lanes));
      out.push_back(words("store x[t]" + at, [&](int l) { return b * w + l; }, lanes));
    }
  }
  out.push_back(words("result load", [](int) { return 0; }, 1));
  return out;
}

int pipeline_node_word(PipelineLayout layout, int node) {
  if (node < 0 || node >= 2 * b) throw std::invalid_argument("pipeline_node_word: node must be in [0, 64)");
  if (layout == PipelineLayout::heap) return node;
  return node % 2 == 0 ? node / 2 : b + ((node - 1) / 2 + b / 2) % b;
}

std::vector<Request> pipeline_step_requests(PipelineLayout layout, bool fused_operands) {
  auto at = [&](auto node_of_lane) { return [=](int l) { return pipeline_node_word(layout, node_of_lane(l)); }; };
  if (fused_operands) {
    if (layout != PipelineLayout::heap)
      throw std::invalid_argument("pipeline_step_requests: only the heap layout has adjacent operands to fuse");
    return {words("leaf store (node e)", at([](int e) { return e; })),
            Request{"operand load, 64-bit (nodes 2e, 2e+1)", gpulab::WarpAccess::words([](int e) { return e; }, b, 8)},
            words("result store (node b+e)", at([](int e) { return b + e; }))};
  }
  return {words("leaf store (node e)", at([](int e) { return e; })),
          words("operand load (node 2e)", at([](int e) { return 2 * e; })),
          words("operand load (node 2e+1)", at([](int e) { return 2 * e + 1; })),
          words("result store (node b+e)", at([](int e) { return b + e; }))};
}

Alg5Indices algorithm5_indices(int e) {
  Alg5Indices x{};
  if (e % 2 != 0) {
    x.i_s = e / 2 + 3 * b / 2;
    x.i_r = e / 2 + b;
  } else {
    x.i_s = e / 2;
    x.i_r = e / 2 + b / 2;
  }
  x.i_1 = e;
  x.i_2 = e < b / 2 ? e + 3 * b / 2 : e + b / 2;
  return x;
}

std::vector<Request> matrix_tile_requests() {
  std::vector<Request> out;
  for (int r = 0; r < b; ++r)
    out.push_back(words("row store r=" + std::to_string(r), [&](int l) { return r * (b + 1) + l; }));
  for (int i = 0; i < b; ++i)
    out.push_back(words("row walk i=" + std::to_string(i), [&](int c) { return c * (b + 1) + i; }));
  return out;
}

std::vector<std::size_t> pipeline_rows_per_warp(std::size_t n, const Shape& shape) {
  const int g = first_round_blocks(Stage::pipeline, n, shape);
  if (g == 0) return {};
  const std::size_t warps = static_cast<std::size_t>(g) * (shape.block / b);
  const std::size_t rows = ceil_div(n, unit_elements(Stage::pipeline, shape.element_bytes));
  std::vector<std::size_t> out(warps);
  for (std::size_t w = 0; w < warps; ++w) out[w] = warp_share_begin(rows, warps, w + 1) - warp_share_begin(rows, warps, w);
  return out;
}

long predicted_excess_wavefronts(Stage s, std::size_t n, const Shape& shape, int w) {
  check_shape(shape);
  if (n == 0) return 0;
  switch (s) {
    case Stage::tree_interleaved:
      return static_cast<long>(tree_blocks_total(n, shape.block)) * summarize(tree_interleaved_requests(shape.block)).excess() * w;
    case Stage::tree:
      return static_cast<long>(tree_blocks_total(n, shape.block)) * summarize(tree_requests(shape.block)).excess() * w;
    case Stage::pipeline_heap:
    case Stage::pipeline: {
      const long per_step =
          summarize(pipeline_step_requests(s == Stage::pipeline ? PipelineLayout::two_b : PipelineLayout::heap)).excess();
      long total = 0;
      for (std::size_t r : pipeline_rows_per_warp(n, shape))
        if (r > 0) total += static_cast<long>(r + kLog2b) * per_step;
      return total * w;
    }
    case Stage::matrix: return static_cast<long>(ceil_div(n, b * b)) * summarize(matrix_tile_requests()).excess() * w;
    default: return 0;  // no shared-memory structure besides conflict-free warp partials
  }
}

}  // namespace reduction::model
