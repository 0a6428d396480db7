// The option table's parser, JSON mapping and help text (see option_table.h).
#include "common/option_table.h"

#include <cassert>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "common/units.h"

namespace iorelay::cli {
namespace {

constexpr size_t kHelpColumn = 30;

// The row of the table's own --config option; applied before the others.
const std::string kConfigName = "config";

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("--config: cannot read " + path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("--config: " + path + " is not JSON");
  return j;
}

// A JSON value as the text the command line would have given; an object stands for its JSON
// text (a scheduler spec may be JSON).
Result<std::string> ScalarText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
  if (v.is_number() || v.is_object()) return v.dump();
  return Status::InvalidArgument("wants a string or a number");
}

void AppendEntry(std::string& out, const std::string& left, const std::string& help) {
  out += "  " + left;
  size_t col = 2 + left.size();
  std::istringstream lines(help);
  std::string line;
  bool first = true;
  while (std::getline(lines, line)) {
    if (first && col + 2 <= kHelpColumn) {
      out.append(kHelpColumn - col, ' ');
    } else {
      out += '\n';
      out.append(kHelpColumn, ' ');
    }
    out += line;
    first = false;
  }
  out += '\n';
}

template <typename T>
Option IntegerRow(std::string name, std::string metavar, T* field, int64_t min, int64_t max,
                  std::string help) {
  Option o{std::move(name), std::move(metavar), std::move(help), Arity::kValue, nullptr, nullptr,
           nullptr};
  o.set = [field, min, max](const std::string& text) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v < min || v > max) {
      return Status::InvalidArgument("wants an integer in [" + std::to_string(min) + ", " +
                                     std::to_string(max) + "], got '" + text + "'");
    }
    *field = static_cast<T>(v);
    return Status::Ok();
  };
  o.get = [field]() -> nlohmann::json { return *field; };
  return o;
}

}  // namespace

OptionTable::OptionTable(std::string usage, std::string epilog)
    : usage_(std::move(usage)), epilog_(std::move(epilog)) {}

OptionTable& OptionTable::Add(Option option) {
  assert(by_name_.count(option.name) == 0 && option.set);
  by_name_[option.name] = rows_.size();
  rows_.push_back(std::move(option));
  return *this;
}

const Option* OptionTable::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &rows_[it->second];
}

Status OptionTable::Apply(const Option& option, const std::string& value) const {
  Status s = option.set(value);
  if (s.ok()) return s;
  return Status::InvalidArgument("--" + option.name + ": " + s.message());
}

Status OptionTable::ApplyJson(const Option& option, const nlohmann::json& v) const {
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument("config key '" + option.name + "' " + what);
  };
  auto apply_text = [&](const Result<std::string>& text) -> Status {
    if (!text.ok()) return bad(text.status().message());
    Status s = option.set(*text);
    return s.ok() ? s : bad(s.message());
  };
  switch (option.arity) {
    case Arity::kFlag:
      if (!v.is_boolean()) return bad("wants true or false");
      return apply_text(std::string(v.get<bool>() ? "true" : "false"));
    case Arity::kValue:
      return apply_text(ScalarText(v));
    case Arity::kList:
      if (!v.is_array()) return bad("wants an array");
      option.clear();
      for (const nlohmann::json& e : v) IORELAY_RETURN_IF_ERROR(apply_text(ScalarText(e)));
      return Status::Ok();
    case Arity::kMap:
      if (!v.is_object()) return bad("wants an object");
      option.clear();
      for (const auto& [key, e] : v.items()) {
        Result<std::string> text = ScalarText(e);
        if (!text.ok()) return bad(text.status().message());
        IORELAY_RETURN_IF_ERROR(apply_text(key + "=" + *text));
      }
      return Status::Ok();
  }
  return Status::Ok();
}

Status OptionTable::FromJson(const nlohmann::json& j) const {
  if (!j.is_object()) return Status::InvalidArgument("configuration must be a JSON object");
  for (const auto& [key, v] : j.items()) {
    const Option* option = Find(key);
    if (!option || !option->get || option->get().is_null()) {
      return Status::InvalidArgument("unknown config key '" + key + "'");
    }
    IORELAY_RETURN_IF_ERROR(ApplyJson(*option, v));
  }
  return Status::Ok();
}

nlohmann::json OptionTable::ToJson() const {
  nlohmann::json j = nlohmann::json::object();
  for (const Option& o : rows_) {
    if (!o.get) continue;
    nlohmann::json v = o.get();
    if (!v.is_null()) j[o.name] = std::move(v);
  }
  return j;
}

Result<ParseOutcome> OptionTable::Parse(int argc, const char* const* argv,
                                        size_t max_positionals) const {
  return Parse(std::vector<std::string>(argv + (argc > 0 ? 1 : 0), argv + argc), max_positionals);
}

Result<ParseOutcome> OptionTable::Parse(const std::vector<std::string>& args,
                                        size_t max_positionals) const {
  // Splits "--name=value" and "--name value"; `i` moves past a consumed value.
  struct Arg {
    std::string name;
    std::optional<std::string> inline_value;
  };
  auto split = [](const std::string& a) {
    size_t eq = a.find('=');
    if (eq == std::string::npos) return Arg{a.substr(2), std::nullopt};
    return Arg{a.substr(2, eq - 2), a.substr(eq + 1)};
  };
  auto value_of = [&](const Arg& arg, size_t& i) -> Result<std::string> {
    if (arg.inline_value) return *arg.inline_value;
    if (i + 1 >= args.size()) return Status::InvalidArgument("--" + arg.name + " needs a value");
    return args[++i];
  };
  // --config first, wherever it is.
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i].rfind("--", 0) != 0) continue;
    Arg arg = split(args[i]);
    if (arg.name != kConfigName) continue;
    Result<std::string> path = value_of(arg, i);
    if (!path.ok()) return path.status();
    Result<nlohmann::json> j = ReadJsonFile(*path);
    if (!j.ok()) return j.status();
    Status s = FromJson(*j);
    if (!s.ok()) return Status::InvalidArgument("--config " + *path + ": " + s.message());
  }
  ParseOutcome out;
  std::set<std::string> replaced;  // lists and maps the command line has started to replace
  bool options_end = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_end || a.rfind("--", 0) != 0 || a == "--") {
      if (a == "--" && !options_end) {
        options_end = true;
        continue;
      }
      if (a == "-h") {
        out.help = true;
        continue;
      }
      if (!options_end && a.size() > 1 && a[0] == '-') {
        return Status::InvalidArgument("unknown option '" + a + "'");
      }
      if (out.positionals.size() >= max_positionals) {
        return Status::InvalidArgument("unexpected argument '" + a + "'");
      }
      out.positionals.push_back(a);
      continue;
    }
    Arg arg = split(a);
    if (arg.name == "help" || arg.name == "print-config") {
      if (arg.inline_value) return Status::InvalidArgument("--" + arg.name + " takes no value");
      (arg.name == "help" ? out.help : out.print_config) = true;
      continue;
    }
    if (arg.name == kConfigName) {
      Result<std::string> skipped = value_of(arg, i);  // applied above
      if (!skipped.ok()) return skipped.status();
      continue;
    }
    const Option* option = Find(arg.name);
    if (!option) return Status::InvalidArgument("unknown option '--" + arg.name + "'");
    if (option->arity == Arity::kFlag) {
      if (arg.inline_value) return Status::InvalidArgument("--" + arg.name + " takes no value");
      IORELAY_RETURN_IF_ERROR(Apply(*option, "true"));
      continue;
    }
    Result<std::string> value = value_of(arg, i);
    if (!value.ok()) return value.status();
    if ((option->arity == Arity::kList || option->arity == Arity::kMap) &&
        replaced.insert(option->name).second) {
      option->clear();
    }
    IORELAY_RETURN_IF_ERROR(Apply(*option, *value));
  }
  return out;
}

std::string OptionTable::Help() const {
  std::string out = usage_;
  if (!out.empty() && out.back() != '\n') out += '\n';
  for (const Option& o : rows_) {
    std::string left = "--" + o.name + (o.metavar.empty() ? "" : " " + o.metavar);
    std::string help = o.help;
    if (o.arity == Arity::kList || o.arity == Arity::kMap) help += " (repeatable)";
    AppendEntry(out, left, help);
  }
  AppendEntry(out, "--config FILE.json", "the same keys as JSON (those of --print-config)");
  AppendEntry(out, "--print-config", "print the effective configuration as JSON and exit");
  AppendEntry(out, "--help, -h", "this text");
  AppendEntry(out, "--version", "print the version and exit");
  if (!epilog_.empty()) {
    out += epilog_;
    if (out.back() != '\n') out += '\n';
  }
  return out;
}

Option Flag(std::string name, bool* field, std::string help) {
  Option o{std::move(name), "", std::move(help), Arity::kFlag, nullptr, nullptr, nullptr};
  o.set = [field](const std::string& v) {
    *field = v == "true";
    return Status::Ok();
  };
  o.get = [field]() -> nlohmann::json { return *field; };
  return o;
}

Option Text(std::string name, std::string metavar, std::string* field, std::string help) {
  Option o{std::move(name), std::move(metavar), std::move(help), Arity::kValue, nullptr, nullptr,
           nullptr};
  o.set = [field](const std::string& v) {
    *field = v;
    return Status::Ok();
  };
  o.get = [field]() -> nlohmann::json { return *field; };
  return o;
}

Option Integer(std::string name, std::string metavar, int64_t* field, int64_t min, int64_t max,
               std::string help) {
  return IntegerRow(std::move(name), std::move(metavar), field, min, max, std::move(help));
}

Option Integer(std::string name, std::string metavar, int* field, int min, int max,
               std::string help) {
  return IntegerRow(std::move(name), std::move(metavar), field, min, max, std::move(help));
}

Option Integer(std::string name, std::string metavar, uint32_t* field, uint32_t min, uint32_t max,
               std::string help) {
  return IntegerRow(std::move(name), std::move(metavar), field, min, max, std::move(help));
}

Option Integer(std::string name, std::string metavar, uint64_t* field, uint64_t min, int64_t max,
               std::string help) {
  return IntegerRow(std::move(name), std::move(metavar), field, static_cast<int64_t>(min), max,
                    std::move(help));
}

Option Bytes(std::string name, std::string metavar, uint64_t* field, std::string help) {
  Option o{std::move(name), std::move(metavar), std::move(help), Arity::kValue, nullptr, nullptr,
           nullptr};
  o.set = [field](const std::string& v) {
    Result<uint64_t> n = units::ParseBytes(v);
    if (!n.ok()) return n.status();
    *field = *n;
    return Status::Ok();
  };
  o.get = [field]() -> nlohmann::json { return *field; };
  return o;
}

Option Seconds(std::string name, std::string metavar, double* field, std::string help) {
  Option o{std::move(name), std::move(metavar), std::move(help), Arity::kValue, nullptr, nullptr,
           nullptr};
  o.set = [field](const std::string& text) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || errno != 0 || *end != '\0' || !(v >= 0)) {
      return Status::InvalidArgument("wants a number of seconds >= 0, got '" + text + "'");
    }
    *field = v;
    return Status::Ok();
  };
  o.get = [field]() -> nlohmann::json { return *field; };
  return o;
}

Option TextList(std::string name, std::string metavar, std::vector<std::string>* field,
                std::function<Status(const std::string&)> check, std::string help) {
  Option o{std::move(name), std::move(metavar), std::move(help), Arity::kList, nullptr, nullptr,
           nullptr};
  o.set = [field, check](const std::string& v) {
    if (check) IORELAY_RETURN_IF_ERROR(check(v));
    field->push_back(v);
    return Status::Ok();
  };
  o.get = [field]() -> nlohmann::json { return *field; };
  o.clear = [field] { field->clear(); };
  return o;
}

Result<std::pair<std::string, std::string>> SplitKeyValue(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::InvalidArgument("wants A=B, got '" + text + "'");
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

}  // namespace iorelay::cli
