// The radix-sort lab's knobs in code and its library baselines, shared by the stage table (lab.cu),
// the experiments and the tests; the knobs' names, ranges and defaults are lab.toml's. Part of the
// harness: do not edit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpulab/lab.hpp"
#include "radix_sort.cuh"
#include "radix_sort_model.hpp"

namespace radix_sort::lab {

// --param input, in lab.toml's order of its names (make_lab checks the two agree): "dist" takes the
// keys from --dist, the others are the lab's special inputs (radix_sort_model.hpp's distributions).
inline constexpr const char* kInputs[] = {"dist",      "pow2-max",   "all-zero",     "all-one",        "high-bits",
                                          "low-bits",  "mixed-sign", "int-extremes", "float-specials", "entropy-reduced"};
enum Input { dist = 0 };
// --param key and --param counters: the values of KeyType and CounterLayout (u32 i32 f32; lane thread).

// The keys' distribution of a problem: --param input, else --dist (uniform and full-range: every
// 32-bit pattern; small-range: seed 003's values 0..49).
model::KeyDistribution distribution_of(const gpulab::Problem& p);
// The problem's keys (cached: every stage of a run shares them), and the bits they need (find-max's
// K: split-global sorts min(K, end_bit) bits).
std::shared_ptr<const std::vector<std::uint32_t>> keys_of(const gpulab::Problem& p);
int data_bits_of(const gpulab::Problem& p);
// The stages' SortConfig: key, end_bit, block, bits, counters (a knob the stage does not read keeps
// SortConfig's default).
SortConfig config_for(const gpulab::Problem& p);
// The model's view of a run: the knobs, the device's SM count (132 without a GPU), and for
// split-global the bits the data needs (find-max's K, computed from the keys).
model::Problem model_problem(const gpulab::Problem& p, bool with_data_bits);

// ---- the library baselines (radix_sort_cub.cu; device pointers; temporary storage from the caller,
// allocated outside the timed region) ----

// cub::DeviceRadixSort::SortKeys / SortPairs with begin_bit = 0, end_bit (the same bits as the
// stages sort), on u32 or i32 keys (CUB orders -0.0 and +0.0 as equal: no f32).
std::size_t cub_sort_bytes(std::size_t n, KeyType type, int end_bit, bool pairs);
void cub_sort(void* temp, std::size_t temp_bytes, const std::uint32_t* keys, std::uint32_t* keys_out,
              const std::uint32_t* values, std::uint32_t* values_out, std::size_t n, KeyType type, int end_bit);
// thrust::sort (keys) or thrust::stable_sort_by_key (pairs) on a copy of the input: the user's view
// (allocates inside); all 32 bits; u32 or i32.
void thrust_sort(const std::uint32_t* keys, std::uint32_t* keys_out, const std::uint32_t* values,
                 std::uint32_t* values_out, std::size_t n, KeyType type);
// cub::DeviceMergeSort::StableSortKeysCopy (keys) / StableSortPairs (pairs, on a copy) with the
// lab's order as the comparator: the comparison-sort roof; every key type and end_bit.
std::size_t merge_sort_bytes(std::size_t n, bool pairs);
void merge_sort(void* temp, std::size_t temp_bytes, const std::uint32_t* keys, std::uint32_t* keys_out,
                const std::uint32_t* values, std::uint32_t* values_out, std::size_t n, KeyType type, int end_bit);

}  // namespace radix_sort::lab
