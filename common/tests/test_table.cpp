#include <nlohmann/json.hpp>
#include <sstream>

#include "gpulab/table.hpp"
#include "gpulab/testing.hpp"

namespace {
gpulab::Table sample() {
  gpulab::Table t({{"stage", "stage"}, {"ms", "median ms", 2}, {"launches", "launches"}}, "demo");
  t.add_row({std::string("naive"), 1.5, std::int64_t{20}});
  t.add_row({std::string("a,b \"q\""), gpulab::Cell{}, std::int64_t{1}});
  return t;
}
}  // namespace

TEST_CASE("table renders aligned columns with '-' for empty cells", "[cpu][table]") {
  std::ostringstream out;
  sample().print_table(out);
  const auto text = out.str();
  CHECK(text.find("median ms") != std::string::npos);
  CHECK(text.find("1.50") != std::string::npos);
  CHECK(text.find(" -") != std::string::npos);
}

TEST_CASE("table CSV quotes commas and quotes", "[cpu][table]") {
  std::ostringstream out;
  sample().print_csv(out);
  CHECK(out.str() == "stage,ms,launches\nnaive,1.5,20\n\"a,b \"\"q\"\"\",,1\n");
}

TEST_CASE("table JSON has typed values and null for empty cells", "[cpu][table]") {
  const auto doc = nlohmann::json::parse(sample().to_json());
  CHECK(doc["rows"][0]["ms"].get<double>() == 1.5);
  CHECK(doc["rows"][0]["launches"].get<int>() == 20);
  CHECK(doc["rows"][1]["ms"].is_null());
}

TEST_CASE("table refuses a row of the wrong width", "[cpu][table]") {
  gpulab::Table t(std::vector<gpulab::Column>{{"a", "a"}});
  CHECK_THROWS_AS(t.add_row({std::int64_t{1}, std::int64_t{2}}), std::invalid_argument);
}
