// Runs a lab's stages: check first (poisoned output, launch count), then time the passing ones.
#pragma once
#include <optional>
#include <span>
#include <variant>
#include <string>
#include <vector>

#include "gpulab/lab.hpp"

namespace gpulab {

enum class StageStatus { pass, fail, todo, skipped, error };
std::string_view to_string(StageStatus s);

struct StageResult {
  std::string stage;
  StageStatus status = StageStatus::skipped;
  std::string message;  // why it failed / was skipped; the check's first-mismatch report
  std::optional<TimingStats> timing;
  std::optional<double> gbps, elements_per_s, percent_of_copy, speedup_vs_cpu;
  std::optional<long> launches, predicted_launches;
  std::optional<std::size_t> host_copy_bytes;  // cudaMemcpy host<->device inside run()
  // Allocated memory (device, managed, pinned) the timed runs kept, per run: a cudaMalloc in run()
  // with no cudaFree. nullopt: not timed, or allocations not tracked (under a profiler).
  std::optional<std::size_t> bytes_kept_per_run;
  bool fresh_inputs = false;  // timed on a fresh input per run, each run checked (the replay guard)
  std::optional<bool> input_is_answer;  // `verify` of a pass: a copy of the input passes too
};

// Where a checked stage's raw output goes: <folder>/<stage>.bin, a header line naming the lab and
// the stage, then the bytes (judged later by `verify` in another process).
struct SaveOutput {
  std::string folder;
  std::string lab;
};

struct RunOptions {
  Problem problem;
  MeasureOptions measure;
  bool time = true;  // false: check only (sanitizers, profilers)
  // The replay guard (StageInstance::redraw): every timed run, warm-ups included, on a fresh draw of
  // the input, each run's output checked. Experiments turn it off (one input: their sweeps at 2^28
  // would spend most of their time drawing keys on the host); `run`, and so the grader, keep it.
  bool fresh_inputs = true;
  std::optional<SaveOutput> save_output;
};

// Runs one stage once and checks it: poison, run, synchronise, check. Throws nothing:
// NotImplemented becomes todo, a CUDA error becomes error with the message. With `save`, the raw
// output is also written for an out-of-process check.
StageResult check_stage(const Stage& stage, const Problem& problem, const SaveOutput* save = nullptr);

// Judges raw output bytes (from another process's --save-output) against this binary's harness:
// the grader's verdict, computed where student code never runs.
StageResult verify_stage_output(const Stage& stage, const Problem& problem, std::span<const unsigned char> bytes);

// The bytes of <path> saved by run --save-output for lab/stage, or why they cannot be judged.
std::variant<std::vector<unsigned char>, std::string> load_saved_output(const std::string& path, const std::string& lab_id,
                                                                        const std::string& stage_id);

// check_stage, then (if it passed and options.time) measure it: a run that is wrong on its fresh
// input (options.fresh_inputs) fails the stage, with the run named.
StageResult run_stage(const Lab& lab, const Stage& stage, const RunOptions& options);

// percent_of_copy = GB/s against the device's measured copy roof (GPU stages with a timing).
void add_percent_of_copy(StageResult& r);

// The command-line program behind gpulab-<lab>-<impl>: list, run, experiment.
int runner_main(int argc, char** argv);

}  // namespace gpulab
