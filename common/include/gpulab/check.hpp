// Exact checkers: every failure reports the first mismatching index, how many elements differ,
// and a window of expected/actual values around the first one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace gpulab {

struct CheckResult {
  bool ok = true;
  std::string message;          // one line: what is wrong, where
  std::string detail;           // the window of expected/actual values (may be empty)
  std::size_t first_mismatch = 0;
  std::size_t mismatch_count = 0;

  static CheckResult pass() { return {}; }
  static CheckResult fail(std::string message, std::string detail = {});
  explicit operator bool() const { return ok; }
  std::string to_string() const;  // message, then detail
};

// expected[i] == actual[i] for every i; sizes must agree.
template <class T>
CheckResult compare_exact(std::span<const T> expected, std::span<const T> actual, std::size_t window = 4);

// |expected - actual| <= abs_tol + rel_tol * |expected|; NaN never passes.
CheckResult compare_near(std::span<const float> expected, std::span<const float> actual, double rel_tol,
                         double abs_tol, std::size_t window = 4);

// Non-decreasing order.
template <class T>
CheckResult check_sorted(std::span<const T> values, std::size_t window = 4);

// Same multiset of values (a sort must not lose or invent elements).
template <class T>
CheckResult check_permutation(std::span<const T> original, std::span<const T> permuted);

// The raw bytes of an array (a stage's output_bytes()).
template <class T>
std::vector<unsigned char> to_bytes(std::span<const T> values) {
  std::vector<unsigned char> bytes(values.size_bytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// An array back from raw bytes; nullopt when the byte count is not a whole number of elements.
template <class T>
std::optional<std::vector<T>> from_bytes(std::span<const unsigned char> bytes) {
  if (bytes.size() % sizeof(T) != 0) return std::nullopt;
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// compare_exact on raw bytes from another process (a stage's check_output()).
template <class T>
CheckResult compare_exact_bytes(std::span<const T> expected, std::span<const unsigned char> actual_bytes,
                                std::size_t window = 4) {
  if (actual_bytes.size() != expected.size_bytes())
    return CheckResult::fail("output has " + std::to_string(actual_bytes.size()) + " bytes, expected " +
                             std::to_string(expected.size_bytes()) + " (" + std::to_string(expected.size()) +
                             " elements)");
  std::vector<T> actual(expected.size());
  if (!actual.empty()) std::memcpy(actual.data(), actual_bytes.data(), actual_bytes.size());
  return compare_exact<T>(expected, std::span<const T>(actual), window);
}

}  // namespace gpulab
