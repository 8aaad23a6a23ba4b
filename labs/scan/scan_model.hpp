// The harness's CPU side of the scan lab (scan_model.cpp): the inputs, the CPU references every
// stage is checked against, and the bank-conflict model of the shared-memory access patterns the
// handout discusses. Part of the harness: do not edit. Host code only (no CUDA needed).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/bank_model.hpp"
#include "gpulab/check.hpp"
#include "gpulab/data.hpp"
#include "scan.cuh"

namespace scan::model {

// ---- inputs ---------------------------------------------------------------------------------------

// Scan input: gpulab::generate_int32(d, n, seed) in [-1000, 1000] (full-range: any int32).
std::vector<int> scan_input(gpulab::Distribution d, std::size_t n, std::uint64_t seed);
// Colored input: the scan input as values, and colors uniform in [0, colors) drawn from a stream
// of the seed of its own (so changing the number of colors does not change the values).
std::vector<std::uint8_t> color_input(std::size_t n, std::uint64_t seed, int colors);
// Compaction input: values in [1, 1000] (full-range: any non-zero int32) where each element is
// then zero with probability zero_percent / 100, decided by a hash of (seed, i).
std::vector<int> compaction_input(gpulab::Distribution d, std::size_t n, std::uint64_t seed, int zero_percent);

// ---- CPU references -------------------------------------------------------------------------------

// out[i] = in[0] + ... + in[i-1], modulo 2^32.
std::vector<int> exclusive_scan_reference(std::span<const int> in);
// out[i] = sum of values[j] over j < i with colors[j] == colors[i], modulo 2^32.
std::vector<int> colored_scan_reference(std::span<const int> values, std::span<const std::uint8_t> colors);
// The non-zero elements of in, in order.
std::vector<int> compact_reference(std::span<const int> in);
// A compaction's verdict: `count` kept elements at the front of `out` must be `expected`.
gpulab::CheckResult check_compaction(const std::vector<int>& expected, long long count, std::span<const int> out);

// ---- paths: the kernels and branches a problem reaches (Stage::paths) ----------------------------

// Per stage, by the contracts in scan.cuh and the reference's tiling (a tile of B threads x 16 ints
// for the tiled scans, a page of 1024 for the colored ones): "one block" / "several blocks",
// "n not a power of two" (the work-efficient scans pad), "one level" / "two levels" / "three levels
// or more" of the shared recursion, "a partial block", "one tile" / "several tiles", "a partial
// vector" (n not a multiple of 4: the 128-bit loads' tail), "keeps none" / "keeps every element"
// (compaction at 100 % / 0 % zeros), "alpha divides 32" or not. The grader's sanitizer shapes and
// the visible cases must reach every path a hidden case reaches (autograder/tests/test_case_paths.py).
std::vector<std::string> paths(std::string_view stage, std::size_t n, const ScanConfig& config, int zero_percent);

// ---- the bank-conflict model ----------------------------------------------------------------------

// One warp request of a kernel's shared-memory access pattern and their sum (common/'s bank model).
using Request = gpulab::NamedRequest;
using gpulab::RequestSummary;
using gpulab::summarize;

// Shared-memory scan (stages 4 and 5): where tree index i lives in shared memory.
enum class TreeLayout {
  plain,          // i
  padded,         // i + i/32: one pad word per 32 words, the lecture's padding (your stage must also
                  // be conflict-free at 1024 threads: check your own offset, README "Stages, in order")
  seed003_macro,  // seed 003's CONFLICT_FREE_OFFSET as its precedence parses it (see below)
};
std::string to_string(TreeLayout layout);
std::uint32_t tree_slot(std::uint32_t i, TreeLayout layout);
// Seed 003 writes ((n) >> NUM_BANKS + (n) >> (2 * LOG_NUM_BANKS)). '+' binds tighter than '>>',
// so it reads (n >> (32 + n)) >> 10: a shift by 32 or more bits, undefined in C++; PTX's shr
// clamps the count, so on the GPU the offset is 0 for every n >= 0 and the "padded" scan is the
// plain one.
std::uint32_t seed003_offset_as_parsed(std::uint32_t n);

// Every warp request of one block of the shared-memory Blelloch scan with `block` threads
// (2 * block elements): the two loads, each up-sweep and down-sweep level, the two stores.
std::vector<Request> tree_scan_requests(int block, TreeLayout layout);

// Colored prefix sums (stage 8), one page of one warp: the offset step's requests for d colors.
//   direct:        lane c < d walks counts[c * 32 + j], j = 0..31
//   conflict-free: transpose counts into trans[t * 17 + c], walk trans[j * 17 + c], transpose back
std::vector<Request> colored_offset_requests(int colors, bool conflict_free);
// The direct walk as nvcc compiles colored.cu (SASS LDS.128 / STS.128): lane c < d moves its row
// of 32 counts 16 bytes at a time, 8 loads and 8 stores per page. A 128-bit request is served a
// quarter-warp (8 lanes) per phase, so lanes 8..15 are a phase of their own: d wavefronts where
// ceil(d / 8) would do. This is the model Nsight Compute's count matches (README, Results).
std::vector<Request> colored_direct_walk_128bit_requests(int colors);
// The per-page requests both colored versions share (staging the page, the per-thread color
// sums): conflict-free by construction, see colored.cu.
std::vector<Request> colored_page_requests();

// alpha-matrix (stage 7): the warp requests that place alpha rows of b = 32 elements into the
// alpha x (b + 1) matrix, element e = 32 j + lane at row e % alpha, column e / alpha.
std::vector<Request> alpha_load_requests(int alpha);
// Seed 004's bound on their conflict degree: min(ceil(b / alpha), alpha).
int alpha_conflict_bound(int alpha);

}  // namespace scan::model
