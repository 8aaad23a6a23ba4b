// The two kernels the runner launches around each GPU stage's checked run (runner.cpp). Nsight
// Compute profiles every kernel of a graded run; a kernel launched between a begin and an end marker
// without the stage's NVTX range "gpulab:<stage>" on its stack escaped that range (student code
// popped it around the launch, or launched from another thread), and the grader's library rule and
// timing cross-check, which read the range, would not see it (autograder/gpulab/tools/ncu/parse.py,
// parse_profiled_run). They do nothing and take no arguments: a launch costs a few microseconds.
#include <cuda_runtime_api.h>

#include "stage_marker.hpp"

namespace gpulab::detail {

__global__ void stage_begin_marker() {}
__global__ void stage_end_marker() {}

// No cudaGetLastError here: a launch error the stage left behind must still reach the runner's own
// check after the run (a successful launch does not clear it); a failed marker launch reports the
// same broken context there.
StageMarkers::StageMarkers(bool on) : on_(on) {
  if (on_) stage_begin_marker<<<1, 1>>>();
}

StageMarkers::~StageMarkers() {
  if (on_) stage_end_marker<<<1, 1>>>();
}

}  // namespace gpulab::detail
