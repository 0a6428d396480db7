// Dynamic selection (armed bandit) over the other algorithms: every period the bandwidth
// of the current one is measured from Release durations; unmeasured (or expired)
// candidates are tried first, then one is drawn with probability proportional to its
// bandwidth share, with a floor. The random source is injected (seeded), never global.
#include <absl/container/flat_hash_map.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "common/units.h"
#include "sched/algorithms.h"
#include "sched/run_queue.h"

namespace iorelay::sched {
namespace {

struct Arm {
  std::string name;
  std::unique_ptr<Scheduler> s;
  bool measured = false;
  double bytes_per_s = 0;
  int64_t measured_at_ns = 0;
  uint64_t period_bytes = 0;  // completed dispatches of this arm in the current period
  int64_t period_busy_ns = 0;
};

struct DynamicConfig {
  int64_t period_ns = 1'000'000'000;
  int64_t validity_ns = 30'000'000'000;
  double floor = 0.05;
};

class DynamicScheduler final : public Scheduler {
 public:
  DynamicScheduler(std::vector<Arm> arms, DynamicConfig c, std::function<double()> uniform01,
                   nlohmann::json config)
      : arms_(std::move(arms)),
        c_(c),
        uniform01_(std::move(uniform01)),
        config_(std::move(config)) {
    c_.floor = std::clamp(c_.floor, 0.0, 1.0 / static_cast<double>(arms_.size()));
  }
  const char* name() const override { return "dynamic"; }
  void Add(const Request& r) override {
    arms_[current_].s->Add(r);
    ++queued_;
  }
  Decision Next(int64_t now_ns, Dispatch* out) override;
  void Release(uint64_t id, int result, int64_t duration_ns) override;
  size_t queued() const override { return queued_; }
  nlohmann::json EffectiveConfig() const override;
  void SetAppWeight(uint32_t app, uint32_t weight) override {
    for (Arm& a : arms_) a.s->SetAppWeight(app, weight);
  }
  void RemoveApp(uint32_t app) override {
    for (Arm& a : arms_) a.s->RemoveApp(app);
  }
  std::vector<uint32_t> AppsHeld() const override {
    std::set<uint32_t> held;
    for (const Arm& a : arms_) {
      for (uint32_t app : a.s->AppsHeld()) held.insert(app);
    }
    return {held.begin(), held.end()};
  }

 private:
  struct InFlight {
    size_t arm;
    uint64_t bytes;
    uint32_t left;
    int64_t max_duration_ns;
  };
  void EndPeriod(int64_t now_ns);

  std::vector<Arm> arms_;
  DynamicConfig c_;
  std::function<double()> uniform01_;
  nlohmann::json config_;
  size_t current_ = 0;
  bool started_ = false;
  int64_t period_end_ns_ = 0;
  // Only dispatched requests are tracked (the arm that holds one is its dispatch's arm).
  absl::flat_hash_map<uint64_t, uint64_t> dispatch_of_;  // request id -> dispatch number
  absl::flat_hash_map<uint64_t, InFlight> in_flight_;    // dispatch number -> progress
  uint64_t next_dispatch_ = 1;
  size_t queued_ = 0;
};

void DynamicScheduler::EndPeriod(int64_t now_ns) {
  Arm& cur = arms_[current_];
  if (cur.period_busy_ns > 0) {
    cur.bytes_per_s =
        static_cast<double>(cur.period_bytes) * 1e9 / static_cast<double>(cur.period_busy_ns);
    cur.measured = true;
    cur.measured_at_ns = now_ns;
  }
  for (Arm& a : arms_) a.period_bytes = 0, a.period_busy_ns = 0;
  for (size_t k = 1; k <= arms_.size(); ++k) {  // try unmeasured or expired ones first
    size_t i = (current_ + k) % arms_.size();
    if (!arms_[i].measured || now_ns - arms_[i].measured_at_ns > c_.validity_ns) {
      current_ = i;
      return;
    }
  }
  double total = 0;
  for (const Arm& a : arms_) total += a.bytes_per_s;
  const double n = static_cast<double>(arms_.size());
  double x = uniform01_();
  for (size_t i = 0; i < arms_.size(); ++i) {
    double share = total > 0 ? arms_[i].bytes_per_s / total : 1.0 / n;
    x -= c_.floor + (1.0 - n * c_.floor) * share;
    if (x < 0 || i + 1 == arms_.size()) {
      current_ = i;
      return;
    }
  }
}

Decision DynamicScheduler::Next(int64_t now_ns, Dispatch* out) {
  if (!started_) {
    started_ = true;
    period_end_ns_ = now_ns + c_.period_ns;
  } else if (now_ns >= period_end_ns_) {
    EndPeriod(now_ns);
    period_end_ns_ = now_ns + c_.period_ns;
  }
  int64_t wake = INT64_MAX;
  // Arms chosen earlier hold older requests: drain them before the current one.
  for (size_t k = 1; k <= arms_.size(); ++k) {
    const size_t i = (current_ + k) % arms_.size();
    if (arms_[i].s->queued() == 0) continue;
    Decision d = arms_[i].s->Next(now_ns, out);
    if (d.kind == Decision::Kind::kSleepUntil) wake = std::min(wake, d.wake_ns);
    if (d.kind != Decision::Kind::kDispatch) continue;
    const uint64_t no = next_dispatch_++;
    in_flight_[no] = InFlight{i, out->length, static_cast<uint32_t>(out->request_ids.size()), 0};
    for (uint64_t id : out->request_ids) dispatch_of_[id] = no;
    queued_ -= out->request_ids.size();
    return d;
  }
  if (wake != INT64_MAX) return Decision{Decision::Kind::kSleepUntil, wake};
  return Decision{Decision::Kind::kIdle, 0};
}

void DynamicScheduler::Release(uint64_t id, int result, int64_t duration_ns) {
  auto d = dispatch_of_.find(id);
  if (d == dispatch_of_.end()) return;  // never dispatched (or unknown): not ours to release
  auto f = in_flight_.find(d->second);
  dispatch_of_.erase(d);
  InFlight& r = f->second;
  arms_[r.arm].s->Release(id, result, duration_ns);
  r.max_duration_ns = std::max(r.max_duration_ns, duration_ns);
  if (--r.left == 0) {
    arms_[r.arm].period_bytes += r.bytes;
    arms_[r.arm].period_busy_ns += std::max<int64_t>(1, r.max_duration_ns);
    in_flight_.erase(f);
  }
}

nlohmann::json DynamicScheduler::EffectiveConfig() const {
  nlohmann::json j = config_;
  nlohmann::json state = nlohmann::json::object();
  state["current"] = arms_[current_].name;
  for (const Arm& a : arms_) {
    if (a.measured) state["bytes_per_s"][a.name] = a.bytes_per_s;
    nlohmann::json arm = a.s->EffectiveConfig();
    arm.erase("state");
    state["candidates"][a.name] = arm;
  }
  j["state"] = state;
  return j;
}

using MakeFn = SchedulerResult (*)(const SchedulerParams&);
struct Candidate {
  const char* name;
  MakeFn make;
};
constexpr Candidate kCandidates[] = {
    {"fifo", MakeFifo},   {"to-agg", MakeToAgg}, {"sjf", MakeSjf},
    {"aioli", MakeAioli}, {"mlf", MakeMlf},      {"sw", MakeSw},
    {"twins", MakeTwins}, {"wfq", MakeWfq},      {"hbrr", MakeHbrr}};

// Splits "fifo+aioli(quantum=128KiB;wait=0)+sjf" at the '+' outside parentheses.
Result<std::vector<std::string>> SplitCandidates(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  int depth = 0;
  for (char ch : text) {
    if (ch == '(') ++depth;
    if (ch == ')' && --depth < 0) break;
    if (ch == '+' && depth == 0) {
      items.push_back(std::move(item));
      item.clear();
    } else {
      item += ch;
    }
  }
  if (depth != 0) return Status::InvalidArgument("dynamic: unbalanced '(' in candidates");
  items.push_back(std::move(item));
  return items;
}

// "aioli(quantum=128KiB;wait=0)" -> name "aioli", params {quantum, wait}; "sjf" -> "sjf".
Result<SchedulerSpec> ParseCandidate(const std::string& item) {
  const size_t open = item.find('(');
  if (open == std::string::npos) return SchedulerSpec{item, {}};
  if (item.back() != ')' || open == 0) {
    return Status::InvalidArgument("dynamic: candidate '" + item + "' is not name(key=value;...)");
  }
  std::string inner = item.substr(open + 1, item.size() - open - 2);
  for (char& ch : inner) ch = ch == ';' ? ',' : ch;
  auto spec = ParseSchedulerSpec(item.substr(0, open) + (inner.empty() ? "" : ":" + inner));
  if (!spec.ok()) return Status::InvalidArgument("dynamic: " + spec.status().message());
  return spec;
}

}  // namespace

SchedulerResult MakeDynamic(const SchedulerParams& params) {
  ParamReader reader("dynamic", params);
  DynamicConfig c;
  std::string names = reader.Text("candidates", "fifo+to-agg+sjf+aioli+mlf+sw+twins+wfq+hbrr");
  c.period_ns = reader.DurationNs("period", c.period_ns);
  c.validity_ns = reader.DurationNs("validity", c.validity_ns);
  c.floor = reader.Number("floor", c.floor);
  uint64_t seed = reader.Count("seed", 1);
  DispatchLimits limits = ReadLimits(&reader);
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  if (c.period_ns <= 0) return Status::InvalidArgument("dynamic: period must be > 0");
  SchedulerParams shared{{"max_dispatch_bytes", std::to_string(limits.max_bytes)},
                         {"max_dispatch_requests", std::to_string(limits.max_requests)}};
  auto items = SplitCandidates(names);
  if (!items.ok()) return items.status();
  std::vector<Arm> arms;
  for (const std::string& item : *items) {
    auto spec = ParseCandidate(item);
    if (!spec.ok()) return spec.status();
    const std::string& n = spec->name;
    const Candidate* found = nullptr;
    for (const Candidate& k : kCandidates) found = n == k.name ? &k : found;
    if (!found) return Status::InvalidArgument("dynamic: unknown candidate '" + n + "'");
    // The shared caps, then the candidate's own parameters (which win).
    SchedulerParams params = n == "fifo" ? SchedulerParams{} : shared;
    for (const auto& [key, value] : spec->params) params[key] = value;
    auto s = found->make(params);
    if (!s.ok()) return s.status();
    arms.push_back(Arm{item, std::move(*s)});
  }
  auto rng = std::make_shared<std::mt19937_64>(seed);
  auto uniform01 = [rng] { return std::uniform_real_distribution<double>(0.0, 1.0)(*rng); };
  return std::unique_ptr<Scheduler>(
      std::make_unique<DynamicScheduler>(std::move(arms), c, uniform01, reader.effective()));
}

}  // namespace iorelay::sched
