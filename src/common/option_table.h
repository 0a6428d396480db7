// One option table per command-line tool: each row names an option once, and the table drives
// parsing, validation, --help, --print-config and the JSON configuration keys from it.
//
// A row binds an option to a field of the tool's own options struct. The JSON key of an option
// is its long name without the dashes, so `tool --print-config > f.json` and
// `tool --config f.json` round-trip. Every table also answers --help (-h), --config FILE and
// --print-config itself; --version is left to common/version_flag.h (answered before anything
// else is parsed).
//
// Order of application: --config FILE is read first wherever it stands; options on the command
// line then override its values, and a list or map option given on the command line replaces
// the file's list. No exceptions: every error is EINVAL with a message naming the option.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace iorelay::cli {

enum class Arity {
  kFlag,   // --name; JSON true/false
  kValue,  // --name VALUE; JSON scalar
  kList,   // --name VALUE, repeatable; JSON array
  kMap,    // --name KEY=VALUE, repeatable; JSON object
};

struct Option {
  std::string name;     // long name without dashes; also the JSON key
  std::string metavar;  // shown in --help ("N", "SIZE", "PREFIX=ROOT"); empty for flags
  std::string help;     // one or more lines; wrapped lines are indented in --help
  Arity arity = Arity::kValue;
  // Takes one value as text (flags: "true" or "false"; maps: "KEY=VALUE"). The message of a
  // failure is prefixed with the option's name.
  std::function<Status(const std::string&)> set;
  // The current value as JSON, for --print-config. Null for input-only options (such as a
  // shorthand that sets another option), which then have no JSON key.
  std::function<nlohmann::json()> get;
  // Lists and maps: empties the value before the command line replaces it.
  std::function<void()> clear;
};

// What a parse found besides the options it set.
struct ParseOutcome {
  bool help = false;
  bool print_config = false;
  std::vector<std::string> positionals;  // arguments that are not options, in order
};

class OptionTable {
 public:
  // `usage` is the first line(s) of --help ("usage: iorelayd [options]"); `epilog`, if any,
  // comes after the option list.
  explicit OptionTable(std::string usage, std::string epilog = {});

  // Adds a row; the name must be new (checked in debug builds by assert).
  OptionTable& Add(Option option);

  // Parses argv[1..argc). Positionals are allowed only when `max_positionals` > 0.
  Result<ParseOutcome> Parse(int argc, const char* const* argv, size_t max_positionals = 0) const;
  Result<ParseOutcome> Parse(const std::vector<std::string>& args,
                             size_t max_positionals = 0) const;

  // Applies a JSON object of option values (the --print-config form); unknown keys, wrong
  // types and bad values are EINVAL naming the key.
  Status FromJson(const nlohmann::json& j) const;
  // Every option that has a JSON form, with its current value.
  nlohmann::json ToJson() const;
  // The --help text: usage, one entry per row (and the table's own options), epilog.
  std::string Help() const;

 private:
  const Option* Find(const std::string& name) const;
  Status Apply(const Option& option, const std::string& value) const;
  Status ApplyJson(const Option& option, const nlohmann::json& value) const;

  std::string usage_;
  std::string epilog_;
  std::vector<Option> rows_;
  std::map<std::string, size_t> by_name_;
};

// Row builders for the common field types. `help` may name the default; the builders add
// nothing to it.
Option Flag(std::string name, bool* field, std::string help);
Option Text(std::string name, std::string metavar, std::string* field, std::string help);
Option Integer(std::string name, std::string metavar, int64_t* field, int64_t min, int64_t max,
               std::string help);
Option Integer(std::string name, std::string metavar, int* field, int min, int max,
               std::string help);
Option Integer(std::string name, std::string metavar, uint32_t* field, uint32_t min, uint32_t max,
               std::string help);
Option Integer(std::string name, std::string metavar, uint64_t* field, uint64_t min, int64_t max,
               std::string help);
// Sizes in the units rule of common/units.h ("64K" = 65,536, "64kB" = 64,000); JSON holds bytes.
Option Bytes(std::string name, std::string metavar, uint64_t* field, std::string help);
// Seconds as a plain non-negative decimal number.
Option Seconds(std::string name, std::string metavar, double* field, std::string help);
// One of `choices`, stored as the chosen value of type T.
template <typename T>
Option Choice(std::string name, T* field, std::vector<std::pair<std::string, T>> choices,
              std::string help) {
  std::string metavar;
  for (const auto& [text, value] : choices) metavar += (metavar.empty() ? "" : "|") + text;
  Option o{std::move(name), metavar, std::move(help), Arity::kValue, nullptr, nullptr, nullptr};
  o.set = [field, choices, metavar](const std::string& v) {
    for (const auto& [text, value] : choices) {
      if (text == v) {
        *field = value;
        return Status::Ok();
      }
    }
    return Status::InvalidArgument("wants " + metavar + ", got '" + v + "'");
  };
  o.get = [field, choices]() -> nlohmann::json {
    for (const auto& [text, value] : choices) {
      if (value == *field) return text;
    }
    return nullptr;
  };
  return o;
}
// A repeatable option whose values are checked by `check` (may be null) and kept in order.
Option TextList(std::string name, std::string metavar, std::vector<std::string>* field,
                std::function<Status(const std::string&)> check, std::string help);

// "A=B" with both sides non-empty, split at the first '='.
Result<std::pair<std::string, std::string>> SplitKeyValue(const std::string& text);

}  // namespace iorelay::cli
