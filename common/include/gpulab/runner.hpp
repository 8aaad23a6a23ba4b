// Runs a lab's stages: check first (poisoned output, launch count), then time the passing ones.
#pragma once
#include <optional>
#include <span>
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
};

struct RunOptions {
  Problem problem;
  MeasureOptions measure;
  bool time = true;         // false: check only (sanitizers, profilers)
  std::string save_output;  // folder: write each checked stage's raw output to <stage>.bin
};

// Runs one stage once and checks it: poison, run, synchronise, check. Throws nothing:
// NotImplemented becomes todo, a CUDA error becomes error with the message. With `save_folder`,
// the raw output is also written to <save_folder>/<stage>.bin for an out-of-process check.
StageResult check_stage(const Stage& stage, const Problem& problem, const std::string& save_folder = {});

// Judges raw output bytes (from another process's --save-output) against this binary's harness:
// the grader's verdict, computed where student code never runs.
StageResult verify_stage_output(const Stage& stage, const Problem& problem, std::span<const unsigned char> bytes);

// check_stage, then (if it passed and options.time) measure it.
StageResult run_stage(const Lab& lab, const Stage& stage, const RunOptions& options);

// The command-line program behind gpulab-<lab>-<impl>: list, run, experiment.
int runner_main(int argc, char** argv);

}  // namespace gpulab
