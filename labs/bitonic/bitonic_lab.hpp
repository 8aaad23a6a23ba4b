// The bitonic lab's knobs in code, shared by the stage table (lab.cu), the experiments and the
// tests; their names, ranges and defaults are lab.toml's. Part of the harness: do not edit.
#pragma once
#include "bitonic.cuh"
#include "bitonic_model.hpp"
#include "gpulab/lab.hpp"

namespace bitonic::lab {

// --param input and --param pad, in lab.toml's order of their names (make_lab checks the two agree).
enum InputKnob { dist = 0, organ_pipe = 1, int_max = 2, negative = 3 };
enum PadKnob { sentinel = 0, virtual_pad = 1 };
inline constexpr const char* kInputNames[] = {"dist", "organ-pipe", "int-max", "negative"};
inline constexpr const char* kPadNames[] = {"sentinel", "virtual"};

// The keys of a problem (its --dist and --param input).
model::Input input_of(const gpulab::Problem& p);
// The stages' configuration: block (512 where a stage does not read it) and pad.
SortConfig config_for(const gpulab::Problem& p);
// The model's shape of a run: the problem's knobs and phase5-fused's design (bitonic.cuh).
model::Shape shape_for(const gpulab::Problem& p);

}  // namespace bitonic::lab
