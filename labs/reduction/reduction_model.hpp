// The reduction lab's CPU side (reduction_model.cpp): inputs, the left fold every stage is checked
// against, and seed 004's model of each stage -- launches R(n), global I/O, time, shared words and
// multiplicity -- with the bank-conflict model of the shared-memory stages. Part of the harness:
// do not edit. Host code only.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gpulab/bank_model.hpp"
#include "gpulab/check.hpp"
#include "gpulab/data.hpp"
#include "gpulab/poison.hpp"
#include "reduction.cuh"

namespace reduction::model {

using gpulab::ceil_div;  // the model's shorthand (reduction.cuh keeps it out of namespace reduction)

// ---- the stages ------------------------------------------------------------------------------------------

enum class Stage { cpu, global_tree, tree_interleaved, tree, cascading, pipeline_heap, pipeline, matrix, ordered_registers };
std::vector<Stage> all_stages();
std::string_view to_string(Stage s);  // the stage id: "tree-interleaved"
std::optional<Stage> parse_stage(std::string_view id);
// False for tree and cascading (seed 004 §5.1: they use commutativity); they run sum and max only.
bool keeps_order(Stage s);

// ---- inputs and the oracle ---------------------------------------------------------------------------------

// The left fold: ((e (+) in[0]) (+) in[1]) ... -- the definition every stage is checked against.
template <class Op>
Value<Op> fold(std::span<const Value<Op>> in, Op op = {}) {
  Value<Op> acc = Op::identity();
  for (const auto& x : in) acc = op(acc, x);
  return acc;
}

// Seeded inputs per operator (deterministic in (d, n, seed), like gpulab::generate_*):
//   sum, max   gpulab::generate_int32(d, n, seed) (values in [-1000, 1000]; full-range: any int32)
//   interval   element i = (i, i) whatever d is: the order oracle
//   affine     a = 2 u + 1 (odd: never collapses to a constant map), c = v, u and v from
//              generate_uint32(d, 2n, seed)
//   mat2       four entries from generate_uint32(d, 4n, seed), m00 and m11 made odd and m01 even:
//              an odd determinant, so products wrap modulo 2^32 but never collapse to 0
template <class Op>
std::vector<Value<Op>> make_input(gpulab::Distribution d, std::size_t n, std::uint64_t seed);
template <>
std::vector<std::int32_t> make_input<SumOp>(gpulab::Distribution d, std::size_t n, std::uint64_t seed);
template <>
std::vector<std::int32_t> make_input<MaxOp>(gpulab::Distribution d, std::size_t n, std::uint64_t seed);
template <>
std::vector<Interval> make_input<IntervalOp>(gpulab::Distribution d, std::size_t n, std::uint64_t seed);
template <>
std::vector<Affine> make_input<AffineOp>(gpulab::Distribution d, std::size_t n, std::uint64_t seed);
template <>
std::vector<Mat2> make_input<Mat2Op>(gpulab::Distribution d, std::size_t n, std::uint64_t seed);
// max's pitfall: every element in [-1000, -1], so a 0 identity gives a wrong 0.
std::vector<std::int32_t> all_negative_input(std::size_t n, std::uint64_t seed);

// The verdict on a stage's result against the fold (`expected`, the fold's 32-bit words), and what a
// wrong one says: the poison recognised, the interval oracle decoded, max's 0 identity.
template <class Op>
gpulab::CheckResult check_fold(std::span<const std::uint32_t> expected, std::span<const std::uint32_t> got_words,
                               std::size_t n) {
  using gpulab::CheckResult;
  using T = Value<Op>;
  if (got_words.size() != expected.size())
    return CheckResult::fail("the result has " + std::to_string(got_words.size()) + " 32-bit words, expected " +
                             std::to_string(expected.size()) + " (one " + Op::name + " element)");
  if (std::equal(expected.begin(), expected.end(), got_words.begin())) return CheckResult::pass();
  T got, want;
  std::memcpy(&got, got_words.data(), sizeof(T));
  std::memcpy(&want, expected.data(), sizeof(T));
  std::ostringstream s;
  s << Op::name << " reduction of n=" << n << ": ";
  if (gpulab::all_poisoned(got_words)) {
    s << "d_out still holds the poison 0xA5A5A5A5: the result was never written";
  } else if constexpr (std::is_same_v<Op, IntervalOp>) {
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
    for (std::size_t i = 0; i < expected.size(); ++i) s << (i ? ", " : "") << expected[i];
    s << "} (" << kWords<T> << " uint32 words, row-major)";
  }
  return CheckResult::fail(s.str());
}


// ---- the model's shape of a run ---------------------------------------------------------------------------

struct Shape {
  int block = 256;          // threads per block (ReduceConfig::block)
  int max_grid = 132 * 8;   // SMs x resident blocks of the first-round kernel
  int element_bytes = 4;    // e
};

// The first-round grid of a one-pass stage (reduction.cuh, first_round_grid), 0 for the others.
int first_round_blocks(Stage s, std::size_t n, const Shape& shape);
// Elements one "unit" (a warp's step) holds, per the contracts in reduction.cuh.
std::size_t unit_elements(Stage s, int element_bytes);

// ---- launches R(n) ---------------------------------------------------------------------------------------------

// Level sizes d_0 = n, d_{i+1} = ceil(d_i / 2T) of the block trees, down to 1.
std::vector<std::size_t> tree_level_sizes(std::size_t n, int block);
// R(n): global-tree max(1, ceil(log2 n)); trees ceil(log_2T n) (1 for n <= 2T); one-pass stages 2,
// or 1 when one block does it all; n == 0: 1 (a kernel writes the identity); cpu: 0.
long launches(Stage s, std::size_t n, const Shape& shape);

// ---- paths: the kernels and branches a problem reaches (Stage::paths) --------------------------------

// "4-byte elements" (the element's width picks the vector and plane code), then per stage:
//   global-tree        "one launch" (n <= 2) / "a launch per level", "a level with an odd node"
//   trees              "one level" / "several levels", "a partial block" (n not a multiple of 2T)
//   one-pass stages    "one block writes the result" / "a second round combines the partials",
//                      "a partial unit" (n not a multiple of the unit), "a warp with no units"
//   n == 0             "n = 0: the identity written"
// The grader's sanitizer shapes and the visible cases must reach every path a hidden case reaches.
std::vector<std::string> paths(Stage s, std::size_t n, const Shape& shape);

// ---- global I/O ----------------------------------------------------------------------------------------------

struct Traffic {
  double bytes = 0;       // what DRAM moves (reads + writes), 32-byte-sector granular
  double agpu_ios = 0;    // seed 004's I/O: global access instructions of b = 32 words each
};
Traffic traffic(Stage s, std::size_t n, const Shape& shape);

// ---- time (seed 004 Table 1, with the constants below) -------------------------------------------

// k = AGPU multiprocessors = warps of the first-round grid (max_grid x block / 32), b = 32:
//   global-tree        sum over levels of ceil(nodes_d / (k b))
//   tree(-interleaved) sum over 004's levels (d <- ceil(d / 2b)) of ceil(d / (2 k b)) x log2 b
//   cascading, ordered-registers   ceil(n / (k b)) + log2 b
//   pipeline(-heap)    rows + log2 b with rows = ceil(n / (k b))
//   matrix             ceil(n / (k b^2)) x (2 b + log2 b)
double agpu_time(Stage s, std::size_t n, const Shape& shape);
// A wall-clock estimate: R sigma + bytes / bandwidth (sigma in us, bandwidth in GB/s).
double predicted_ms(Stage s, std::size_t n, const Shape& shape, double sigma_us, double gbps);

// ---- shared memory and multiplicity (seed 004 §3.3) ---------------------------------------------------------------

struct SharedUse {
  int words_per_warp = 0;       // m of one AGPU multiprocessor (a warp), 32-bit words, one plane
  int bytes_per_block = 0;      // dynamic + static shared bytes of the first-round kernel
  int resident_warps = 0;       // per SM, limited by shared memory, threads and blocks
  long words_per_sm = 0;        // shared words the resident warps use together (<= M)
  double occupancy = 0;         // resident_warps / 64
  double multiplicity = 0;      // M / m, M = shared words per SM
};
SharedUse shared_use(Stage s, const Shape& shape, int smem_per_sm_bytes, int words_per_element = 1);
// Warps resident on an SM when each block of `warps_per_block` warps takes `bytes_per_block` of
// shared memory plus `reserved_per_block` (1 KiB on sm_80+), at most 64 warps and 32 blocks.
int resident_warps(int smem_per_sm_bytes, int bytes_per_block, int warps_per_block, int reserved_per_block = 1024);

// ---- bank conflicts: one warp's shared-memory requests, instruction by instruction ------------------------------

using Request = gpulab::NamedRequest;  // common/'s bank model
using gpulab::RequestSummary;
using gpulab::summarize;

// One block of tree-interleaved (block threads): the leaf store, then per stride s the loads of
// x[2st], x[2st + s] and the store of x[2st] by every active warp.
std::vector<Request> tree_interleaved_requests(int block);
// Its degree per stride in closed form (the [cpu] tests hold it to the requests above).
int tree_interleaved_degree(int block, int stride);
// One block of tree (Algorithm 1, sequential addressing): x[t], x[t + s] for t < s.
std::vector<Request> tree_requests(int block);

// The pipeline's tree: where node L lives (word of the warp's 64), and one step's four requests
// (leaf store, operand loads 2e and 2e + 1, result store b + e).
enum class PipelineLayout { heap, two_b };
int pipeline_node_word(PipelineLayout layout, int node);
// fused_operands (heap only): the two operand loads as the one 64-bit load nvcc makes of them when
// it can see that nodes 2e and 2e + 1 are adjacent words (PTX ld.shared.v2.u32); a 64-bit request
// is served in half-warp phases, and 16 lanes x 8 bytes cover the 32 banks once: no conflict. The
// reference keeps the AGPU's one-word loads (reduce_pipeline.cu) so that the heap shows its 2-way
// conflicts; a student's heap may well compile to the fused load and measure 0.
std::vector<Request> pipeline_step_requests(PipelineLayout layout, bool fused_operands = false);
// Seed 004 Algorithm 5's indices, lines 3-15, for lane e (b = 32): {i_s, i_r, i_1, i_2}.
struct Alg5Indices {
  int i_s, i_r, i_1, i_2;
};
Alg5Indices algorithm5_indices(int lane);

// matrix: one tile's 32 row stores and 32 column-walk loads of the 32 x 33 staging matrix.
std::vector<Request> matrix_tile_requests();

// Rows per warp of the pipeline stages (warp_share_begin over the first-round grid).
std::vector<std::size_t> pipeline_rows_per_warp(std::size_t n, const Shape& shape);
// The excess shared wavefronts Nsight Compute should count over a whole run of the stage
// (every launch), for elements of words_per_element 32-bit words (one plane each):
//   tree-interleaved  sum over levels of blocks x (excess of one block)
//   pipeline-heap     sum over warps with r > 0 rows of 2 (r + 5)
//   tree, pipeline, matrix, cascading, ordered-registers, global-tree: 0
long predicted_excess_wavefronts(Stage s, std::size_t n, const Shape& shape, int words_per_element = 1);

// ---- the pipeline algorithm on the CPU (seed 004 Algorithm 5, step by step) ---------------------------------------

// Runs one warp's pipeline over `in` (rows of 32 elements, the last padded with the identity) on a
// 64-word array in `layout`, every step reading all operands before writing (the AGPU's SIMD step).
// Every lane computes y[i_r] = y[i_1] (+) y[i_2] exactly as Algorithm 5 line 19 prints it, the 64
// words start at the identity. Returns node 63 after the drain. A tool for question 3: run it with
// `interval` on one row and on several, and compare with the left fold.
template <class Op>
Value<Op> simulate_pipeline_warp(std::span<const Value<Op>> in, PipelineLayout layout, Op op = {}) {
  using T = Value<Op>;
  constexpr int b = kWarp;
  std::vector<T> y(2 * b, Op::identity());
  const std::size_t rows = ceil_div(in.size(), b);
  for (std::size_t step = 0; rows > 0 && step < rows + 5; ++step) {
    for (int e = 0; e < b; ++e) {
      const std::size_t i = step * b + e;
      y[pipeline_node_word(layout, e)] = step < rows && i < in.size() ? in[i] : Op::identity();
    }
    std::vector<T> result(b);
    for (int e = 0; e < b; ++e) {
      const T a = y[pipeline_node_word(layout, 2 * e)], c = y[pipeline_node_word(layout, 2 * e + 1)];
      result[e] = op(a, c);
    }
    for (int e = 0; e < b; ++e) y[pipeline_node_word(layout, b + e)] = result[e];
  }
  return y[pipeline_node_word(layout, 2 * b - 1)];
}

}  // namespace reduction::model
