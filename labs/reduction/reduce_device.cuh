// Your file, part 4 of 4 (optional): device helpers that more than one of your three files use --
// for example a 128-bit load of any element type, an order-preserving warp combine, or the
// one-block launch that combines the first round's partials (README.md, "Stages, in order" and
// "Stages 6-8"). It is graded with your other files; it may stay as it is.
// Keep everything in namespace reduction (or a namespace inside it) and mark device functions
// __device__ __forceinline__, templates over the operator like the stages.
#pragma once
#include <cuda_runtime.h>

#include "gpulab/cuda_check.hpp"
#include "reduction.cuh"

namespace reduction {}  // your helpers
