// Parameter parsing for schedulers: spec strings, JSON, and the typed reader.
#include "sched/params.h"

#include <charconv>

#include "common/units.h"

namespace iorelay::sched {
namespace {

std::string JsonValueText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

Result<SchedulerSpec> ParseJsonSpec(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("name") || !j["name"].is_string()) {
    return Status::InvalidArgument("scheduler JSON must be an object with a string \"name\"");
  }
  SchedulerSpec spec;
  for (const auto& [key, value] : j.items()) {
    if (key == "name") {
      spec.name = value.get<std::string>();
    } else if (key == "state") {
      continue;  // run-time state shown by EffectiveConfig(), not a parameter
    } else if (key == "weights" && value.is_object()) {
      for (const auto& [app, w] : value.items()) spec.params["weight." + app] = JsonValueText(w);
    } else if (value.is_object() || value.is_array() || value.is_null()) {
      return Status::InvalidArgument("scheduler parameter '" + key + "' must be a scalar");
    } else {
      spec.params[key] = JsonValueText(value);
    }
  }
  return spec;
}

}  // namespace

nlohmann::json WeightsJson(const std::map<uint32_t, uint32_t>& weights) {
  nlohmann::json shown = nlohmann::json::object();
  for (const auto& [app, w] : weights) shown[std::to_string(app)] = w;
  return shown;
}

Result<SchedulerSpec> ParseSchedulerSpec(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (!text.empty() && text.front() == '{') return ParseJsonSpec(text);
  SchedulerSpec spec;
  size_t colon = text.find(':');
  spec.name = std::string(text.substr(0, colon));
  if (spec.name.empty()) return Status::InvalidArgument("empty scheduler name");
  if (colon == std::string_view::npos) return spec;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Status::InvalidArgument("scheduler parameter '" + std::string(item) +
                                     "' is not key=value");
    }
    std::string key(item.substr(0, eq));
    if (!spec.params.emplace(key, std::string(item.substr(eq + 1))).second) {
      return Status::InvalidArgument("scheduler parameter '" + key + "' given twice");
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return spec;
}

ParamReader::ParamReader(std::string name, const SchedulerParams& params)
    : name_(std::move(name)), params_(params), effective_(nlohmann::json::object()) {
  effective_["name"] = name_;
}

const std::string* ParamReader::Find(const std::string& key) {
  auto it = params_.find(key);
  if (it == params_.end()) return nullptr;
  used_[key] = true;
  return &it->second;
}

void ParamReader::Fail(const std::string& key, const std::string& why) {
  errors_ += (errors_.empty() ? "" : "; ") + key + ": " + why;
}

uint64_t ParamReader::Bytes(const std::string& key, uint64_t def) {
  uint64_t v = def;
  if (const std::string* text = Find(key)) {
    auto r = units::ParseBytes(*text);
    if (r.ok())
      v = *r;
    else
      Fail(key, r.status().message());
  }
  effective_[key] = units::FormatBytes(v);
  return v;
}

int64_t ParamReader::DurationNs(const std::string& key, int64_t def) {
  int64_t v = def;
  if (const std::string* text = Find(key)) {
    auto r = units::ParseDurationNs(*text);
    if (r.ok())
      v = *r;
    else
      Fail(key, r.status().message());
  }
  effective_[key] = units::FormatDurationNs(v);
  return v;
}

uint64_t ParamReader::Count(const std::string& key, uint64_t def) {
  uint64_t v = def;
  if (const std::string* text = Find(key)) {
    auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc() || p != text->data() + text->size()) {
      Fail(key, "not a non-negative integer '" + *text + "'");
      v = def;
    }
  }
  effective_[key] = v;
  return v;
}

double ParamReader::Number(const std::string& key, double def) {
  double v = def;
  if (const std::string* text = Find(key)) {
    char* end = nullptr;
    v = std::strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || !std::isfinite(v)) {
      Fail(key, "not a number '" + *text + "'");
      v = def;
    }
  }
  effective_[key] = v;
  return v;
}

bool ParamReader::Flag(const std::string& key, bool def) {
  bool v = def;
  if (const std::string* text = Find(key)) {
    if (*text == "true" || *text == "1" || *text == "yes") {
      v = true;
    } else if (*text == "false" || *text == "0" || *text == "no") {
      v = false;
    } else {
      Fail(key, "not a boolean '" + *text + "'");
    }
  }
  effective_[key] = v;
  return v;
}

std::string ParamReader::Text(const std::string& key, const std::string& def) {
  std::string v = def;
  if (const std::string* text = Find(key)) v = *text;
  effective_[key] = v;
  return v;
}

std::map<uint32_t, uint32_t> ParamReader::Weights() {
  std::map<uint32_t, uint32_t> weights;
  for (const auto& [key, value] : params_) {
    if (!key.starts_with("weight.")) continue;
    used_[key] = true;
    uint32_t app = 0;
    uint32_t w = 0;
    std::string_view a = std::string_view(key).substr(7);
    auto ra = std::from_chars(a.data(), a.data() + a.size(), app);
    auto rw = std::from_chars(value.data(), value.data() + value.size(), w);
    if (ra.ec != std::errc() || ra.ptr != a.data() + a.size() || rw.ec != std::errc() ||
        rw.ptr != value.data() + value.size() || w == 0) {
      Fail(key, "want weight.<app>=<integer >= 1>");
      continue;
    }
    weights[app] = w;
  }
  effective_["weights"] = WeightsJson(weights);
  return weights;
}

Status ParamReader::Finish() const {
  std::string errors = errors_;
  for (const auto& [key, value] : params_) {
    if (!used_.count(key)) errors += (errors.empty() ? "" : "; ") + key + ": unknown parameter";
  }
  if (errors.empty()) return Status::Ok();
  return Status::InvalidArgument("scheduler '" + name_ + "': " + errors);
}

}  // namespace iorelay::sched
