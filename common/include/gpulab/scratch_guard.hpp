// Guards between the regions of a scratch arena (issue 24, item 4): every take lies in one
// allocation, so a stage that writes past its region corrupts a neighbour and compute-sanitizer's
// memcheck, which sees one allocation, stays clean. The harness's arenas leave kScratchGuardBytes
// after each region (Scratch's guard gap), hold kScratchGuardByte there before every run, and the
// stage's check fails when a guard byte changed. Host-only C++ (the kit's logic, tested on the
// host in common/tests/test_kit.cpp); stages.hpp wires it to device memory and to the check.
#pragma once
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/scratch.hpp"

namespace gpulab {

// After every region: a write of up to 32 int4 stores past the end (one warp, one element each)
// lands in it.
inline constexpr std::size_t kScratchGuardBytes = 256;
// Apart from the output poison (0xA5): a stage that copies an unwritten output past its region
// still changes the guard.
inline constexpr unsigned char kScratchGuardByte = 0x5C;
// What an arena gets on top of the lab's size, so that the sizes the labs request still fit with
// guards: a guard and the worst 256-byte alignment for each of this many takes.
inline constexpr std::size_t kScratchGuardedTakes = 64;
inline constexpr std::size_t kScratchGuardReserve = kScratchGuardedTakes * (kScratchGuardBytes + 256);

// "take<int>(1024)": the call that made the region, with the element type demangled.
std::string describe_take(const ScratchRegion& region);

// Thrown by a look at the output of a run that wrote past a scratch region (ArrayStage::download):
// a lab check that overrides check() reports it too.
class ScratchOverrun : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How the kit reaches an arena's bytes: device memory in ScratchOwner (stages.hpp), host memory in
// the tests.
class ScratchMemory {
 public:
  virtual void fill(std::size_t offset, std::size_t bytes, unsigned char value) = 0;
  virtual void read(std::size_t offset, std::size_t bytes, unsigned char* out) = 0;

 protected:
  ~ScratchMemory() = default;
};

// Which guards hold the pattern, and the check of them after a run. Only a guard known to hold it
// is checked: the first run's (the arena was filled whole when it was allocated) and those that
// rearm() filled before this run (the last run's layout; a run that takes differently leaves its
// other guards unchecked rather than blaming a region for an earlier run's data).
class ScratchGuards {
 public:
  // A run begins (ScratchOwner::fresh(), timed: a counter only).
  void run_started() { ++runs_; }
  // Before a run, untimed: the pattern back into the guards the last run recorded.
  void rearm(const Scratch& scratch, ScratchMemory& memory);
  // After a run: what the first region whose guard changed was, and where; nullopt when intact.
  std::optional<std::string> overrun(const Scratch& scratch, ScratchMemory& memory) const;

 private:
  struct Span {
    std::size_t offset, bytes;
    bool operator==(const Span&) const = default;
  };
  bool armed(const Span& guard) const;

  std::size_t runs_ = 0;
  std::size_t armed_run_ = 1;    // the run whose guards hold the pattern: the first, by the fill
  bool whole_arena_ = true;      // ... all of them (the fill); else only `spans_`
  std::vector<Span> spans_;
};

// The check's message: "the stage wrote past scratch region #2 (take<int>(1024), 4096 bytes): ...".
std::string describe_overrun(std::size_t index, const ScratchRegion& region, std::size_t first_changed,
                             bool has_next);

class StageScratch;

// An arena a stage instance checks after its runs (ScratchOwner). fresh() joins the instance
// whose reset_output() ran last on this thread: the runner's order is reset_output, run, check, so
// every lab's stages get the guard check without saying which arenas they own.
class GuardedScratch {
 public:
  virtual void rearm_guards() = 0;
  virtual std::optional<std::string> overrun() = 0;

 protected:
  GuardedScratch() = default;
  GuardedScratch(const GuardedScratch&) = delete;
  GuardedScratch& operator=(const GuardedScratch&) = delete;
  ~GuardedScratch();
  // From fresh(), inside the timed run: a thread-local read and a compare once joined.
  void join_running_stage();

 private:
  friend class StageScratch;
  StageScratch* stage_ = nullptr;
};

// The arenas one stage instance's runs took scratch from (a member of ArrayStage).
class StageScratch {
 public:
  StageScratch() = default;
  StageScratch(const StageScratch&) = delete;
  StageScratch& operator=(const StageScratch&) = delete;
  ~StageScratch();
  // Before a run (reset_output, untimed): rearm every member's guards, and let the run's fresh()
  // calls join this instance.
  void before_run();
  // After a run: the first member's overrun.
  std::optional<std::string> overrun() const;

 private:
  friend class GuardedScratch;
  std::vector<GuardedScratch*> members_;
};

}  // namespace gpulab
