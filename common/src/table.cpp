#include "gpulab/table.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace gpulab {

std::optional<OutputFormat> parse_output_format(std::string_view name) {
  if (name == "table") return OutputFormat::table;
  if (name == "csv") return OutputFormat::csv;
  if (name == "json") return OutputFormat::json;
  return std::nullopt;
}

Table::Table(std::vector<Column> columns, std::string title) : columns_(std::move(columns)), title_(std::move(title)) {}

void Table::add_row(std::vector<Cell> row) {
  if (row.size() != columns_.size())
    throw std::invalid_argument("Table::add_row: " + std::to_string(row.size()) + " cells for " +
                                std::to_string(columns_.size()) + " columns");
  rows_.push_back(std::move(row));
}

void Table::add_note(std::string note) { notes_.push_back(std::move(note)); }

namespace {

std::string console_text(const Cell& c, int precision) {
  if (std::holds_alternative<std::monostate>(c)) return "-";
  if (auto s = std::get_if<std::string>(&c)) return *s;
  if (auto i = std::get_if<std::int64_t>(&c)) return std::to_string(*i);
  const double d = std::get<double>(c);
  if (!std::isfinite(d)) return "-";
  std::ostringstream out;
  // Large values lose nothing by dropping decimals; tiny ones keep significant digits.
  if (std::fabs(d) >= 1e6) out << std::setprecision(3) << std::scientific << d;
  else if (d != 0 && std::fabs(d) < std::pow(10.0, -precision)) out << std::setprecision(2) << std::scientific << d;
  else out << std::fixed << std::setprecision(precision) << d;
  return out.str();
}

std::string csv_text(const Cell& c) {
  if (std::holds_alternative<std::monostate>(c)) return "";
  if (auto i = std::get_if<std::int64_t>(&c)) return std::to_string(*i);
  if (auto d = std::get_if<double>(&c)) {
    if (!std::isfinite(*d)) return "";
    std::ostringstream out;
    out << std::setprecision(10) << *d;
    return out.str();
  }
  const auto& s = std::get<std::string>(c);
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char ch : s) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

bool is_numeric(const Cell& c) { return std::holds_alternative<std::int64_t>(c) || std::holds_alternative<double>(c); }

}  // namespace

void Table::print_table(std::ostream& out) const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t j = 0; j < columns_.size(); ++j) width[j] = columns_[j].title.size();
  std::vector<std::vector<std::string>> text;
  for (const auto& row : rows_) {
    auto& line = text.emplace_back();
    for (std::size_t j = 0; j < row.size(); ++j) {
      line.push_back(console_text(row[j], columns_[j].precision));
      width[j] = std::max(width[j], line.back().size());
    }
  }
  if (!title_.empty()) out << title_ << "\n";
  std::size_t total = 0;
  for (std::size_t j = 0; j < columns_.size(); ++j) {
    out << (j ? "  " : "") << std::left << std::setw(static_cast<int>(width[j])) << columns_[j].title;
    total += width[j] + (j ? 2 : 0);
  }
  out << "\n" << std::string(total, '-') << "\n";
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    for (std::size_t j = 0; j < columns_.size(); ++j) {
      out << (j ? "  " : "");
      // Numbers right-aligned so that digits line up; text left-aligned.
      if (is_numeric(rows_[i][j])) out << std::right;
      else out << std::left;
      out << std::setw(static_cast<int>(width[j])) << text[i][j];
    }
    out << std::left << "\n";
  }
  for (const auto& note : notes_) out << note << "\n";
}

void Table::print_csv(std::ostream& out) const {
  for (std::size_t j = 0; j < columns_.size(); ++j) out << (j ? "," : "") << csv_text(Cell{columns_[j].key});
  out << "\n";
  for (const auto& row : rows_) {
    for (std::size_t j = 0; j < row.size(); ++j) out << (j ? "," : "") << csv_text(row[j]);
    out << "\n";
  }
}

std::string Table::to_json() const {
  nlohmann::ordered_json doc;
  doc["title"] = title_;
  doc["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : rows_) {
    nlohmann::ordered_json r = nlohmann::ordered_json::object();
    for (std::size_t j = 0; j < row.size(); ++j) {
      const auto& c = row[j];
      if (auto s = std::get_if<std::string>(&c)) r[columns_[j].key] = *s;
      else if (auto i = std::get_if<std::int64_t>(&c)) r[columns_[j].key] = *i;
      else if (auto d = std::get_if<double>(&c); d && std::isfinite(*d)) r[columns_[j].key] = *d;
      else r[columns_[j].key] = nullptr;
    }
    doc["rows"].push_back(std::move(r));
  }
  doc["notes"] = notes_;
  return doc.dump(2);
}

void Table::print(std::ostream& out, OutputFormat format) const {
  switch (format) {
    case OutputFormat::table: print_table(out); break;
    case OutputFormat::csv: print_csv(out); break;
    case OutputFormat::json: out << to_json() << "\n"; break;
  }
}

}  // namespace gpulab
