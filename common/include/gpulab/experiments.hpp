// Helpers for a lab's experiments.cu: time a stage of the context's lab, the standard result
// columns (status, median ms, GB/s, % of the copy roof), progress lines, the sweep every lab runs
// (stages x one knob, beside library peers), and the bank model's columns and drawings.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/bank_model.hpp"
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

// A library peer a sweep compares stages with: column `column` ("vs_cub") of a stage's row is the
// peer's time / the stage's time at the same point (> 1: the stage is faster), for the stages
// `applies` accepts (unset: all).
struct Peer {
  std::string stage;   // "cub"
  std::string column;  // "vs_cub"
  std::string label;   // "vs CUB"
  std::function<bool(const std::string&)> applies = {};
};

struct Sweep {
  std::string experiment;            // for the progress lines
  std::string title;                 // the table's title
  std::vector<std::string> stages;   // stage ids, each timed at every value
  std::string knob;                  // the --param key swept ("block"), or "n" for the size
  std::vector<long long> values;     // a knob with names (lab.toml) shows them ("affine"), not numbers
  std::optional<std::size_t> n;      // the size at every point (default: the context's)
  // Extra columns after the standard ones, and their cells for (stage, value, result).
  std::vector<Column> extra_columns = {};
  std::function<std::vector<Cell>(const std::string&, long long, const StageResult&)> extra = {};
  std::vector<Peer> peers = {};      // timed first at every point; their rows are in the table too
  bool launches = false;             // columns launches (CUPTI) and model (the stage's launch model)
  bool elements_per_s = false;       // column elements_per_s
};
// The table: stage, <knob>, n, status, median_ms, gbps, percent_of_copy, [elements_per_s],
// [launches, model], one column per peer, extra columns. Rows go point by point when there are
// peers (each point's peers first), else stage by stage.
Table sweep(const ExperimentContext& ctx, const Sweep& s);

// The bank model's summary of a list of requests (gpulab/bank_model.hpp) as table columns:
// requests, wavefronts, ideal, excess, worst_excess (one request), max_way.
std::vector<Column> bank_columns();
std::vector<Cell> bank_cells(const RequestSummary& summary);
// One warp request drawn as the bank matrix, below the table (a lab's `--param draw=1`).
void add_drawing(Table& t, const std::string& what, const WarpAccess& access);

}  // namespace gpulab
