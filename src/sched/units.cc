// Unit parsing: one table of suffixes, no locale, no exceptions.
#include "sched/units.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace iorelay::units {
namespace {

struct Suffix {
  std::string_view text;
  double factor;
};

// Splits "12.5MiB" into 12.5 and "MiB". Fails when there is no leading number.
bool SplitNumber(std::string_view text, double* value, std::string_view* suffix) {
  std::string s(text);
  const char* begin = s.c_str();
  char* end = nullptr;
  *value = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(*value) || *value < 0) return false;
  *suffix = text.substr(static_cast<size_t>(end - begin));
  while (!suffix->empty() && suffix->front() == ' ') suffix->remove_prefix(1);
  return true;
}

bool Lookup(std::string_view suffix, const Suffix* table, size_t n, double* factor) {
  for (size_t i = 0; i < n; ++i) {
    if (table[i].text == suffix) {
      *factor = table[i].factor;
      return true;
    }
  }
  return false;
}

constexpr Suffix kByteSuffixes[] = {{"", 1},
                                    {"B", 1},
                                    {"K", 1e3},
                                    {"KB", 1e3},
                                    {"k", 1e3},
                                    {"kB", 1e3},
                                    {"KiB", 1024.0},
                                    {"M", 1e6},
                                    {"MB", 1e6},
                                    {"MiB", 1048576.0},
                                    {"G", 1e9},
                                    {"GB", 1e9},
                                    {"GiB", 1073741824.0},
                                    {"T", 1e12},
                                    {"TB", 1e12},
                                    {"TiB", 1099511627776.0}};
constexpr Suffix kTimeSuffixes[] = {{"", 1}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};

Result<double> ParseScaled(std::string_view text, const Suffix* table, size_t n, const char* what) {
  double value = 0;
  double factor = 0;
  std::string_view suffix;
  if (!SplitNumber(text, &value, &suffix) || !Lookup(suffix, table, n, &factor)) {
    return Status::InvalidArgument("bad " + std::string(what) + " '" + std::string(text) + "'");
  }
  return value * factor;
}

}  // namespace

Result<uint64_t> ParseBytes(std::string_view text) {
  auto v = ParseScaled(text, kByteSuffixes, std::size(kByteSuffixes), "size");
  if (!v.ok()) return v.status();
  if (*v >= 1.8e19) return Status::InvalidArgument("size out of range '" + std::string(text) + "'");
  return static_cast<uint64_t>(std::llround(*v));
}

Result<int64_t> ParseDurationNs(std::string_view text) {
  auto v = ParseScaled(text, kTimeSuffixes, std::size(kTimeSuffixes), "duration");
  if (!v.ok()) return v.status();
  if (*v >= 9.2e18)
    return Status::InvalidArgument("duration out of range '" + std::string(text) + "'");
  return static_cast<int64_t>(std::llround(*v));
}

Result<double> ParseBytesPerSecond(std::string_view text) {
  std::string_view s = text;
  if (s.ends_with("/s")) {
    s.remove_suffix(2);
  } else if (s.ends_with("ps")) {
    s.remove_suffix(2);
  }
  auto v = ParseScaled(s, kByteSuffixes, std::size(kByteSuffixes), "bandwidth");
  if (!v.ok() || *v <= 0) {
    return Status::InvalidArgument("bad bandwidth '" + std::string(text) + "'");
  }
  return *v;
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr std::pair<uint64_t, const char*> kUnits[] = {
      {1ull << 40, "TiB"}, {1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (const auto& [unit, name] : kUnits) {
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + name;
  }
  return std::to_string(bytes) + "B";
}

std::string FormatDurationNs(int64_t ns) {
  static constexpr std::pair<int64_t, const char*> kUnits[] = {
      {1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}};
  for (const auto& [unit, name] : kUnits) {
    if (ns != 0 && ns % unit == 0) return std::to_string(ns / unit) + name;
  }
  return std::to_string(ns) + "ns";
}

}  // namespace iorelay::units
