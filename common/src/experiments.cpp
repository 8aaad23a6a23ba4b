#include "gpulab/experiments.hpp"

#include <iostream>

#include "gpulab/device_info.hpp"
#include "gpulab/math.hpp"

namespace gpulab {

StageResult time_stage(const ExperimentContext& ctx, const std::string& stage_id, const Problem& p) {
  if (!ctx.lab) throw std::logic_error("ExperimentContext without a lab (the runner sets it)");
  const Stage* stage = ctx.lab->find_stage(stage_id);
  if (!stage) throw std::logic_error("experiment names stage '" + stage_id + "', which lab " + ctx.lab->id + " does not have");
  RunOptions options;
  options.problem = p;
  options.measure = ctx.measure;
  StageResult r = run_stage(*ctx.lab, *stage, options);
  if (stage->where == Where::gpu) add_percent_of_copy(r);
  return r;
}

Cell cell(const std::optional<double>& v) { return v ? Cell{*v} : Cell{}; }

std::vector<Column> result_columns() {
  return {{"status", "status"}, {"median_ms", "median ms", 4}, {"gbps", "GB/s", 1}, {"percent_of_copy", "% copy", 1}};
}

std::vector<Cell> result_cells(const StageResult& r) {
  return {std::string(to_string(r.status)), r.timing ? Cell{r.timing->median_ms} : Cell{}, cell(r.gbps),
          cell(r.percent_of_copy)};
}

std::string size_name(std::size_t n) {
  if (is_pow2(n)) return "2^" + std::to_string(ceil_log2(n));
  return std::to_string(n);
}

void progress(const std::string& experiment, const std::string& what) {
  std::cerr << experiment << ": " << what << "\n" << std::flush;
}

Table sweep(const ExperimentContext& ctx, const Sweep& s) {
  std::vector<Column> columns{{"stage", "stage"}, {s.knob, s.knob}};
  if (s.knob != "n") columns.push_back({"n", "n"});
  for (auto& c : result_columns()) columns.push_back(c);
  for (const auto& c : s.extra_columns) columns.push_back(c);
  Table t(columns, s.title);
  for (const auto& id : s.stages) {
    progress(s.experiment, id);
    for (long long v : s.values) {
      Problem p = ctx.base;
      if (s.n) p.n = *s.n;
      if (s.knob == "n") p.n = static_cast<std::size_t>(v);
      else p.params[s.knob] = v;
      const auto r = time_stage(ctx, id, p);
      std::vector<Cell> row{id, static_cast<std::int64_t>(v)};
      if (s.knob != "n") row.push_back(static_cast<std::int64_t>(p.n));
      for (auto& c : result_cells(r)) row.push_back(std::move(c));
      if (s.extra)
        for (auto& c : s.extra(id, v, r)) row.push_back(std::move(c));
      t.add_row(std::move(row));
    }
  }
  return t;
}

}  // namespace gpulab
