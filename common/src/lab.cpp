#include "gpulab/lab.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace gpulab {

std::string Problem::describe() const {
  std::ostringstream s;
  if (rows || cols) s << "n=" << rows << "x" << cols;
  else s << "n=" << n;
  s << " seed=" << seed << " dist=" << to_string(distribution);
  for (const auto& [key, value] : params) s << " " << key << "=" << value;
  return s.str();
}

int Problem::param_in(const std::string& key, long long fallback, long long lo, long long hi) const {
  const long long v = param(key, fallback);
  if (v < lo || v > hi)
    throw UsageError("--param " + key + "=" + std::to_string(v) + ": out of range, use " + std::to_string(lo) + ".." +
                     std::to_string(hi));
  return static_cast<int>(v);
}

Problem Problem::only(std::initializer_list<std::string_view> keys) const {
  Problem p = *this;
  std::erase_if(p.params, [&](const auto& kv) { return std::find(keys.begin(), keys.end(), kv.first) == keys.end(); });
  return p;
}

Stage make_stage(std::string id, std::string title, Where where, std::string source,
                 std::function<std::unique_ptr<StageInstance>(const Problem&)> prepare, Role role) {
  Stage s;
  s.id = std::move(id);
  s.title = std::move(title);
  s.where = where;
  s.role = role;
  s.source = std::move(source);
  s.prepare = std::move(prepare);
  return s;
}

bool Stage::takes_knob(std::string_view key) const {
  return std::find(knobs.begin(), knobs.end(), key) != knobs.end() || defaults.count(std::string(key)) != 0;
}

Problem Stage::with_defaults(const Problem& p) const {
  Problem q = p;
  for (const auto& [key, value] : defaults) q.params.emplace(key, value);  // emplace: the command line wins
  return q;
}

const Stage* Lab::find_stage(std::string_view id) const {
  for (const auto& stage : stages)
    if (stage.id == id) return &stage;
  return nullptr;
}

std::string Lab::student_files_text() const {
  std::string text;
  for (const auto& f : student_files) text += (text.empty() ? "labs/" : ", labs/") + id + "/" + f;
  return text;
}

std::string Lab::path_of(const Stage& stage) const { return stage.file.empty() ? "" : "labs/" + id + "/" + stage.file; }

std::vector<std::string> Lab::all_knobs() const {
  std::set<std::string> keys;
  for (const auto& s : stages) {
    keys.insert(s.knobs.begin(), s.knobs.end());
    for (const auto& kv : s.defaults) keys.insert(kv.first);
  }
  for (const auto& e : experiments) keys.insert(e.knobs.begin(), e.knobs.end());
  return {keys.begin(), keys.end()};
}

namespace {
std::string joined(const std::vector<std::string>& keys) {
  std::string text;
  for (const auto& k : keys) text += (text.empty() ? "" : ", ") + k;
  return text.empty() ? "none" : text;
}
}  // namespace

void Lab::check_knobs(const Problem& p, const std::vector<const Stage*>& selected, const Experiment* experiment) const {
  const auto known = all_knobs();
  for (const auto& [key, value] : p.params) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string what;
    if (experiment) {
      what = "experiment " + experiment->id + " takes: " + joined(experiment->knobs);
    } else {
      std::set<std::string> mine;
      for (const auto* s : selected) {
        mine.insert(s->knobs.begin(), s->knobs.end());
        for (const auto& kv : s->defaults) mine.insert(kv.first);
      }
      what = (selected.size() == 1 ? "stage " + selected.front()->id + " takes: " : std::string("the selected stages take: ")) +
             joined({mine.begin(), mine.end()});
    }
    throw UsageError("--param " + key + "=" + std::to_string(value) + ": unknown knob; " + what +
                     " (every knob of lab " + id + ": " + joined(known) + ")");
  }
}

}  // namespace gpulab
