// Helpers for a lab's experiments.cu: time a stage of the context's lab, the standard result
// columns (status, median ms, GB/s, % of the copy roof), progress lines, and the sweep every lab
// runs: stages x one knob.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/lab.hpp"
#include "gpulab/runner.hpp"
#include "gpulab/table.hpp"

namespace gpulab {

// One timed run of a stage of ctx.lab on p; failures and TODOs come back with their status, and
// percent_of_copy is filled in for GPU stages.
StageResult time_stage(const ExperimentContext& ctx, const std::string& stage_id, const Problem& p);

// The columns status, median_ms, gbps, percent_of_copy and their cells for one result.
std::vector<Column> result_columns();
std::vector<Cell> result_cells(const StageResult& r);
Cell cell(const std::optional<double>& v);

// "2^24" for powers of two, the number otherwise.
std::string size_name(std::size_t n);
// One line on stderr: "size-sweep: n = 2^20".
void progress(const std::string& experiment, const std::string& what);

struct Sweep {
  std::string experiment;            // for the progress lines
  std::string title;                 // the table's title
  std::vector<std::string> stages;   // stage ids, each timed at every value
  std::string knob;                  // the --param key swept ("block"), or "n" for the size
  std::vector<long long> values;
  std::optional<std::size_t> n;      // the size at every point (default: the context's)
  // Extra columns after the standard ones, and their cells for (stage, value, result).
  std::vector<Column> extra_columns = {};
  std::function<std::vector<Cell>(const std::string&, long long, const StageResult&)> extra = {};
};
// The table: stage, <knob>, n, status, median_ms, gbps, percent_of_copy, extra columns.
Table sweep(const ExperimentContext& ctx, const Sweep& s);

}  // namespace gpulab
