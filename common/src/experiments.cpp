#include "gpulab/experiments.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>

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
  options.fresh_inputs = false;
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

namespace {

Cell launches_cell(const std::optional<long>& v) { return v ? Cell(static_cast<std::int64_t>(*v)) : Cell(std::string("-")); }

}  // namespace

Table sweep(const ExperimentContext& ctx, const Sweep& s) {
  std::vector<Column> columns{{"stage", "stage"}, {s.knob, s.knob}};
  if (s.knob != "n") columns.push_back({"n", "n"});
  for (auto& c : result_columns()) columns.push_back(c);
  if (s.elements_per_s) columns.push_back({"elements_per_s", "elem/s", 0});
  if (s.launches) {
    columns.push_back({"launches", "launches"});
    columns.push_back({"model_launches", "model"});
  }
  // Peers may share a column (scan: one "vs CUB", DeviceScan for the scans and DeviceSelect for
  // the compactions): a row takes the first peer of the column that applies to it.
  std::vector<std::string> peer_columns;
  for (const auto& peer : s.peers)
    if (std::find(peer_columns.begin(), peer_columns.end(), peer.column) == peer_columns.end()) {
      peer_columns.push_back(peer.column);
      columns.push_back({peer.column, peer.label, 3});
    }
  for (const auto& c : s.extra_columns) columns.push_back(c);
  Table t(columns, s.title);
  const Knob* named = ctx.lab ? ctx.lab->find_knob(s.knob) : nullptr;
  auto point = [&](long long v) {
    Problem p = ctx.base;
    if (s.n) p.n = *s.n;
    if (s.knob == "n") p.n = static_cast<std::size_t>(v);
    else p.params[s.knob] = v;
    return p;
  };
  auto row = [&](const std::string& id, long long v, const Problem& p, const StageResult& r,
                 const std::map<std::string, std::optional<double>>& peer_ms) {
    std::vector<Cell> cells{id, named && !named->values.empty() ? Cell(named->name_of(v)) : Cell(static_cast<std::int64_t>(v))};
    if (s.knob != "n") cells.push_back(static_cast<std::int64_t>(p.n));
    for (auto& c : result_cells(r)) cells.push_back(std::move(c));
    if (s.elements_per_s) cells.push_back(cell(r.elements_per_s));
    if (s.launches) {
      cells.push_back(launches_cell(r.launches));
      cells.push_back(launches_cell(r.predicted_launches));
    }
    for (const auto& column : peer_columns) {
      std::optional<double> ratio;
      for (const auto& peer : s.peers)
        if (peer.column == column && (!peer.applies || peer.applies(id))) {
          const auto& ms = peer_ms.at(peer.stage);
          if (ms && r.timing && r.timing->median_ms > 0) ratio = *ms / r.timing->median_ms;
          break;
        }
      cells.push_back(cell(ratio));
    }
    if (s.extra)
      for (auto& c : s.extra(id, v, r)) cells.push_back(std::move(c));
    t.add_row(std::move(cells));
  };
  if (s.peers.empty()) {
    for (const auto& id : s.stages) {
      progress(s.experiment, id);
      for (long long v : s.values) {
        const Problem p = point(v);
        row(id, v, p, time_stage(ctx, id, p), {});
      }
    }
    return t;
  }
  for (long long v : s.values) {
    const Problem p = point(v);
    progress(s.experiment, s.knob + " = " + (s.knob == "n" ? size_name(p.n) : named ? named->name_of(v) : std::to_string(v)));
    std::map<std::string, std::optional<double>> peer_ms;
    std::map<std::string, StageResult> peer_results;
    for (const auto& peer : s.peers) {
      peer_results[peer.stage] = time_stage(ctx, peer.stage, p);
      const auto& r = peer_results[peer.stage];
      peer_ms[peer.stage] = r.timing ? std::optional<double>(r.timing->median_ms) : std::nullopt;
    }
    for (const auto& peer : s.peers) row(peer.stage, v, p, peer_results[peer.stage], peer_ms);
    for (const auto& id : s.stages)
      if (!peer_results.count(id)) row(id, v, p, time_stage(ctx, id, p), peer_ms);
  }
  return t;
}

std::vector<Column> bank_columns() {
  return {{"requests", "requests"}, {"wavefronts", "wavefronts"}, {"ideal", "ideal"},
          {"excess", "excess"},     {"worst_excess", "worst/request"}, {"max_way", "max way"}};
}

std::vector<Cell> bank_cells(const RequestSummary& s) {
  return {static_cast<std::int64_t>(s.requests), static_cast<std::int64_t>(s.wavefronts),
          static_cast<std::int64_t>(s.ideal_wavefronts), static_cast<std::int64_t>(s.excess()),
          static_cast<std::int64_t>(s.worst_excess), static_cast<std::int64_t>(s.max_way)};
}

void add_drawing(Table& t, const std::string& what, const WarpAccess& access) {
  t.add_note("");
  t.add_note(what + ":");
  std::istringstream lines(draw_bank_matrix(access, 8));
  for (std::string line; std::getline(lines, line);) t.add_note(line);
}

}  // namespace gpulab
