// The reduction lab's knobs, shared by the stage table (lab.cu), the experiments and the tests.
// Part of the harness: do not edit.
//   --param op=N        the operator: 0 sum, 1 max, 2 interval, 3 affine, 4 mat2 (the runner's
//                       knobs are integers); tree, cascading and cub-sum refuse 2..4
//   --param block=T     threads per block, a power of two in 64..1024 (default 256)
//   --param blocks_per_sm=B  first-round grid = SMs x B (0: as many as fit)
//   --param negative=1  sum/max input all in [-1000, -1] (max's identity pitfall)
#pragma once
#include <array>
#include <string>

#include "gpulab/lab.hpp"
#include "reduction.cuh"
#include "reduction_model.hpp"

namespace reduction::lab {

inline constexpr int kOps = 5;
enum Op { sum = 0, max = 1, interval = 2, affine = 3, mat2 = 4 };
extern const std::array<const char*, kOps> kOpNames;
std::string op_list();                       // "0 sum, 1 max, 2 interval, 3 affine, 4 mat2"
int op_of(const gpulab::Problem& p);         // --param op, refused unless 0..4
ReduceConfig config_for(const gpulab::Problem& p);
// The model's shape of a run: the problem's block, the device's SM count (132 without a GPU).
model::Shape shape_for(const gpulab::Problem& p, int element_bytes);

}  // namespace reduction::lab
