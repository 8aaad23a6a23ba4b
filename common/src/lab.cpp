#include "gpulab/lab.hpp"

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

const Stage* Lab::find_stage(std::string_view id) const {
  for (const auto& stage : stages)
    if (stage.id == id) return &stage;
  return nullptr;
}

}  // namespace gpulab
