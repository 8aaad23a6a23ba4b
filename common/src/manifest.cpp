// lab_from_manifest(): the JSON of labs/<lab>/lab.toml (written by autograder/gpulab/manifest.py,
// which checked it strictly) as a Lab with every fact and no code.
#include "gpulab/manifest.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace gpulab {

namespace {

Knob knob_of(const nlohmann::json& j) {
  Knob k;
  k.key = j.at("key").get<std::string>();
  k.help = j.value("help", "");
  k.default_value = j.at("default").get<long long>();
  if (!j.at("min").is_null()) k.min = j.at("min").get<long long>();
  if (!j.at("max").is_null()) k.max = j.at("max").get<long long>();
  k.power_of_two = j.value("power_of_two", false);
  k.values = j.value("values", std::vector<std::string>{});
  return k;
}

Stage stage_of(const nlohmann::json& j, const std::vector<Knob>& knobs) {
  Stage s;
  s.id = j.at("id").get<std::string>();
  s.title = j.at("title").get<std::string>();
  s.where = j.at("where").get<std::string>() == "cpu" ? Where::cpu : Where::gpu;
  s.role = j.at("role").get<std::string>() == "student" ? Role::student : Role::baseline;
  s.file = j.value("file", "");
  s.source = j.value("source", "");
  const std::string banks = j.value("banks", "");
  s.must_be_conflict_free = banks == "conflict-free";
  s.expect_conflicts = banks == "conflicts";
  s.knobs = j.value("knobs", std::vector<std::string>{});
  // The lab's default of every knob the stage reads, then the stage's own: Stage::with_defaults
  // fills them in, so lab code reads p.param(key) and never writes a default again.
  for (const auto& key : s.knobs)
    for (const auto& k : knobs)
      if (k.key == key) s.defaults[key] = k.default_value;
  for (const auto& k : knobs) {
    s.lab_defaults[k.key] = k.default_value;  // a knob the stage does not list
    if (std::find(s.knobs.begin(), s.knobs.end(), k.key) != s.knobs.end()) s.knob_specs.push_back(k);
  }
  // Named, not iterated in place: items() of the temporary that value() returns would dangle.
  const auto defaults = j.value("defaults", nlohmann::json::object());
  for (const auto& [key, value] : defaults.items()) s.defaults[key] = value.get<long long>();
  const auto accepts = j.value("accepts", nlohmann::json::object());
  for (const auto& [key, values] : accepts.items()) {
    Accepts a;
    a.knob = key;
    a.values = values.get<std::vector<long long>>();
    for (const auto& k : knobs)
      if (k.key == key) {
        for (long long v : a.values) a.names.push_back(k.name_of(v));
        a.knob_names = k.values;
      }
    s.accepts.push_back(std::move(a));
  }
  s.refusal = j.value("refusal", "");
  return s;
}

}  // namespace

Lab lab_from_manifest(std::string_view json) {
  const auto doc = nlohmann::json::parse(json);
  Lab lab;
  lab.id = doc.at("id").get<std::string>();
  lab.title = doc.at("title").get<std::string>();
  lab.student_files = doc.at("student_files").get<std::vector<std::string>>();
  lab.default_n = doc.at("default_n").get<std::size_t>();
  lab.default_rows = doc.at("default_rows").get<std::size_t>();
  lab.default_cols = doc.at("default_cols").get<std::size_t>();
  lab.baseline_cpu_stage = doc.value("cpu_baseline", "");
  for (const auto& k : doc.at("knobs")) lab.knobs.push_back(knob_of(k));
  for (const auto& s : doc.at("stages")) lab.stages.push_back(stage_of(s, lab.knobs));
  return lab;
}

}  // namespace gpulab
