// Results as an aligned console table, CSV or JSON: one Table, three renderings.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gpulab {

enum class OutputFormat { table, csv, json };
std::optional<OutputFormat> parse_output_format(std::string_view name);

// A cell: empty (shown "-" in a table, empty in CSV, null in JSON), text, integer or number.
using Cell = std::variant<std::monostate, std::string, std::int64_t, double>;

struct Column {
  std::string key;    // CSV header and JSON key
  std::string title;  // console header
  int precision = 3;  // digits after the point for doubles in the console table
};

class Table {
 public:
  explicit Table(std::vector<Column> columns, std::string title = {});
  void add_row(std::vector<Cell> row);  // must have one cell per column
  void add_note(std::string note);      // printed under the console table; "notes" in JSON
  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<std::vector<Cell>>& rows() const { return rows_; }
  const std::string& title() const { return title_; }

  void print(std::ostream& out, OutputFormat format) const;
  void print_table(std::ostream& out) const;
  void print_csv(std::ostream& out) const;
  std::string to_json() const;  // {"title":..., "rows":[{key: value}...], "notes":[...]}

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
  std::vector<std::string> notes_;
  std::string title_;
};

}  // namespace gpulab
