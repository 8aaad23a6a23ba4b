// Marker kernels around a stage's checked run (stage_marker.cu says why). Internal to common/.
#pragma once

namespace gpulab::detail {

// Launches the begin marker when made and the end marker when destroyed (also when the stage throws),
// on the default stream of the calling thread; `on` false (a CPU stage) launches nothing.
class StageMarkers {
 public:
  explicit StageMarkers(bool on);
  ~StageMarkers();
  StageMarkers(const StageMarkers&) = delete;
  StageMarkers& operator=(const StageMarkers&) = delete;

 private:
  bool on_;
};

}  // namespace gpulab::detail
