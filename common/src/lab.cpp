#include "gpulab/lab.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>
#include <stdexcept>

namespace gpulab {

std::string Problem::describe() const {
  std::ostringstream s;
  if (rows || cols) s << "n=" << rows << "x" << cols;
  else s << "n=" << n;
  s << " seed=" << seed << " dist=" << to_string(distribution);
  for (const auto& [key, value] : params) s << " " << key << "=" << value;
  return s.str();
}

long long Problem::knob(const std::string& key) const {
  auto it = params.find(key);
  if (it == params.end())
    throw std::logic_error("a stage reads --param " + key + ", which its entry in lab.toml does not list in `knobs`");
  return it->second;
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
  for (const auto& [key, value] : lab_defaults) q.params.emplace(key, value);
  for (const auto& k : knob_specs) k.check(q.params.at(k.key));
  for (const auto& a : accepts) {
    const long long v = q.param(a.knob, a.values.empty() ? 0 : a.values.front());
    if (std::find(a.values.begin(), a.values.end(), v) != a.values.end()) continue;
    std::string runs;
    for (const auto& name : a.names) runs += (runs.empty() ? "" : ", ") + name;
    const bool named = v >= 0 && static_cast<std::size_t>(v) < a.knob_names.size();
    const std::string given = named ? a.knob_names[static_cast<std::size_t>(v)] : std::to_string(v);
    throw UsageError("stage " + id + " runs " + a.knob + " = " + runs + " only, not --param " + a.knob + "=" + given +
                     (refusal.empty() ? std::string() : ": " + refusal));
  }
  return q;
}

std::string Knob::name_of(long long value) const {
  if (value >= 0 && static_cast<std::size_t>(value) < values.size()) return values[static_cast<std::size_t>(value)];
  return std::to_string(value);
}

std::string Knob::allowed() const {
  std::string text;
  if (!values.empty()) {
    for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + values[i] + " (" + std::to_string(i) + ")";
    return text;
  }
  text = (min ? std::to_string(*min) : std::string("...")) + ".." + (max ? std::to_string(*max) : std::string("..."));
  return power_of_two ? text + ", a power of two" : text;
}

long long Knob::parse(const std::string& text) const {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] == text) return static_cast<long long>(i);
  long long value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw UsageError("--param " + key + "=" + text + ": use " + allowed() + (help.empty() ? "" : " (" + help + ")"));
  return value;
}

void Knob::check(long long value) const {
  const long long lo = values.empty() ? min.value_or(value) : 0;
  const long long hi = values.empty() ? max.value_or(value) : static_cast<long long>(values.size()) - 1;
  const bool pow2_ok = !power_of_two || (value > 0 && (value & (value - 1)) == 0);
  if (value < lo || value > hi || !pow2_ok)
    throw UsageError("--param " + key + "=" + std::to_string(value) + ": use " + allowed() +
                     (help.empty() ? "" : " (" + help + ")"));
}

const Stage* Lab::find_stage(std::string_view id) const {
  for (const auto& stage : stages)
    if (stage.id == id) return &stage;
  return nullptr;
}

const Knob* Lab::find_knob(std::string_view key) const {
  for (const auto& k : knobs)
    if (k.key == key) return &k;
  return nullptr;
}

Stage& Lab::bind(std::string_view stage_id, Stage::Code code) {
  for (auto& stage : stages)
    if (stage.id == stage_id) {
      stage.prepare = std::move(code.prepare);
      stage.check_on_host = std::move(code.check_on_host);
      return stage;
    }
  throw std::logic_error("lab " + id + ": lab.cu gives code to stage " + std::string(stage_id) +
                         ", which labs/" + id + "/lab.toml does not list");
}

void Lab::check_complete() const {
  std::string missing;
  for (const auto& stage : stages)
    if (!stage.prepare) missing += (missing.empty() ? "" : ", ") + stage.id;
  if (!missing.empty())
    throw std::logic_error("lab " + id + ": labs/" + id + "/lab.toml lists stages that lab.cu gives no code (Lab::bind): " +
                           missing);
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
    if (const Knob* knob = find_knob(key)) knob->check(value);
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
