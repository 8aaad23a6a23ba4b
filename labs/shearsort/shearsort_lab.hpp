// The ShearSort lab's knobs in code, shared by the stage table (lab.cu), the experiments and the
// tests; their names, ranges and defaults are lab.toml's. Part of the harness: do not edit.
#pragma once
#include "gpulab/lab.hpp"
#include "shearsort.cuh"
#include "shearsort_model.hpp"

namespace shearsort::lab {

// --param input, in lab.toml's order of its names (make_lab checks the two agree).
enum InputKnob { dist = 0, zero_one = 1, final_phase = 2, column_sorted = 3, extremes = 4 };
// --param base, in lab.toml's order: TileVariant's order.
inline constexpr const char* kBaseNames[] = {"bitonic", "naive", "transpose", "registers", "padded"};

// The keys of a problem (its --dist and --param input).
model::Input input_of(const gpulab::Problem& p);
// The merge stages' configuration: d, base, chunk (a UsageError for a chunk that is not 0 or a
// power of two >= 32).
ShearConfig config_for(const gpulab::Problem& p);
// The model's shape of a run: the problem's knobs, the device's SM count (132 without a GPU).
model::Shape shape_for(const gpulab::Problem& p);

}  // namespace shearsort::lab
