// An enum's command-line ids as one table, written once per enum: its values in table order, the
// id of a value and the value of an id. The labs' models keep their stage and input ids this way
// (e.g. reduction_model.cpp's kStageIds).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace gpulab {

template <class E, std::size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

// The table's values, in its order.
template <class E, std::size_t N>
std::vector<E> values_of(const NameTable<E, N>& table) {
  std::vector<E> out;
  out.reserve(N);
  for (const auto& entry : table) out.push_back(entry.first);
  return out;
}

// The id of `value`; "?" for a value the table does not list.
template <class E, std::size_t N>
std::string_view name_of(const NameTable<E, N>& table, E value) {
  for (const auto& [v, id] : table)
    if (v == value) return id;
  return "?";
}

// The value whose id is `id`; nullopt for an id the table does not list.
template <class E, std::size_t N>
std::optional<E> parse_name(const NameTable<E, N>& table, std::string_view id) {
  for (const auto& [v, name] : table)
    if (name == id) return v;
  return std::nullopt;
}

}  // namespace gpulab
