// The reduction lab's knobs in code, shared by the stage table (lab.cu), the experiments and the
// tests; their names, ranges and defaults are lab.toml's. Part of the harness: do not edit.
#pragma once
#include <array>
#include <string>

#include "gpulab/lab.hpp"
#include "reduction.cuh"
#include "reduction_model.hpp"

namespace reduction::lab {

// --param op, in lab.toml's order of its names (make_lab checks the two agree).
inline constexpr int kOps = 5;
enum Op { sum = 0, max = 1, interval = 2, affine = 3, mat2 = 4 };
ReduceConfig config_for(const gpulab::Problem& p);   // block and blocks_per_sm
// The model's shape of a run: the problem's block, the device's SM count (132 without a GPU).
model::Shape shape_for(const gpulab::Problem& p, int element_bytes);

}  // namespace reduction::lab
