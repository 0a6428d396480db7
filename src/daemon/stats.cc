// Recording and JSON rendering of the daemon's counters.
#include "daemon/stats.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <vector>

namespace iorelay::daemon {
namespace {

constexpr const char* kFamilyNames[kFamilies] = {"read", "write", "metadata", "lock"};

struct Sum {
  uint64_t requests = 0, errors = 0, existence_answers = 0, queue_ns = 0, service_ns = 0;
};

double Mean(uint64_t requests, uint64_t dispatches) {
  return dispatches == 0 ? 0.0 : static_cast<double>(requests) / static_cast<double>(dispatches);
}

struct DataSum {
  uint64_t dispatches = 0, dispatched_requests = 0;
  uint64_t queue[Log2Histogram::kBuckets] = {}, service[Log2Histogram::kBuckets] = {};
  void Add(const AppStats& a) {
    dispatches += a.dispatches.load();
    dispatched_requests += a.dispatched_requests.load();
    for (int b = 0; b < Log2Histogram::kBuckets; ++b) {
      queue[b] += a.queue_hist.bucket[b].load();
      service[b] += a.service_hist.bucket[b].load();
    }
  }
  void Render(nlohmann::json* j) const {
    (*j)["dispatches"] = dispatches;
    (*j)["mean_requests_per_dispatch"] = Mean(dispatched_requests, dispatches);
    (*j)["queue_time_p50_ns"] = Log2Histogram::Quantile(queue, 0.50);
    (*j)["queue_time_p99_ns"] = Log2Histogram::Quantile(queue, 0.99);
    (*j)["service_time_p50_ns"] = Log2Histogram::Quantile(service, 0.50);
    (*j)["service_time_p99_ns"] = Log2Histogram::Quantile(service, 0.99);
  }
};

nlohmann::json Render(const Sum (&fam)[kFamilies], uint64_t bytes_read, uint64_t bytes_written) {
  nlohmann::json j;
  Sum all;
  nlohmann::json by = nlohmann::json::object();
  for (int f = 0; f < kFamilies; ++f) {
    all.requests += fam[f].requests;
    all.errors += fam[f].errors;
    all.existence_answers += fam[f].existence_answers;
    all.queue_ns += fam[f].queue_ns;
    all.service_ns += fam[f].service_ns;
    by[kFamilyNames[f]] = {{"requests", fam[f].requests},
                           {"errors", fam[f].errors},
                           {"existence_answers", fam[f].existence_answers},
                           {"queue_time_ns", fam[f].queue_ns},
                           {"service_time_ns", fam[f].service_ns}};
  }
  j["requests"] = all.requests;
  j["errors"] = all.errors;
  j["existence_answers"] = all.existence_answers;
  j["bytes_read"] = bytes_read;
  j["bytes_written"] = bytes_written;
  j["queue_time_ns"] = all.queue_ns;
  j["service_time_ns"] = all.service_ns;
  j["by_family"] = by;
  return j;
}

// One application's counters, rendered, and added to `fam`, `r`, `w` (zeroed by the caller).
nlohmann::json RenderApp(const AppStats& a, Sum (&fam)[kFamilies], uint64_t* r, uint64_t* w) {
  for (int f = 0; f < kFamilies; ++f) {
    fam[f].requests = a.family[f].requests.load();
    fam[f].errors = a.family[f].errors.load();
    fam[f].existence_answers = a.family[f].existence_answers.load();
    fam[f].queue_ns = a.family[f].queue_ns.load();
    fam[f].service_ns = a.family[f].service_ns.load();
  }
  *r = a.bytes_read.load();
  *w = a.bytes_written.load();
  nlohmann::json j = Render(fam, *r, *w);
  DataSum data;
  data.Add(a);
  data.Render(&j);
  j["inflight_bytes"] = a.inflight.bytes();
  j["inflight_bytes_peak"] = a.inflight.peak();
  j["paused_connections"] = a.inflight.parked();
  return j;
}

}  // namespace

void Log2Histogram::Add(int64_t ns) {
  uint64_t v = ns > 0 ? static_cast<uint64_t>(ns) : 0;
  int b = std::min(static_cast<int>(std::bit_width(v)), kBuckets - 1);
  bucket[b].fetch_add(1, std::memory_order_relaxed);
}

uint64_t Log2Histogram::Quantile(const uint64_t (&counts)[kBuckets], double q) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  if (total == 0) return 0;
  auto rank = static_cast<uint64_t>(q * static_cast<double>(total - 1)) + 1;
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts[b];
    if (seen >= rank) return b == 0 ? 0 : (b >= 63 ? UINT64_MAX : (uint64_t{1} << b) - 1);
  }
  return UINT64_MAX;
}

Stats::Stats(const std::vector<std::string>& app_names) {
  for (size_t i = 0; i < app_names.size(); ++i) {
    apps_[static_cast<uint32_t>(i)] = Entry{std::make_shared<AppStats>(app_names[i])};
  }
}

AppStats* Stats::app(size_t index) {
  MutexLock lock(apps_mu_);
  auto it = apps_.find(static_cast<uint32_t>(index));
  return it == apps_.end() ? nullptr : it->second.stats.get();
}

std::shared_ptr<AppStats> Stats::AddApp(uint32_t app, const std::string& name) {
  auto a = std::make_shared<AppStats>(name);
  MutexLock lock(apps_mu_);
  apps_[app] = Entry{a};
  return a;
}

void Stats::DepartApp(uint32_t app) {
  MutexLock lock(apps_mu_);
  auto it = apps_.find(app);
  if (it != apps_.end()) it->second.departed = true;
}

void Stats::Record(AppStats* app, Family family, int error, uint64_t bytes_read,
                   uint64_t bytes_written, int64_t queue_ns, int64_t service_ns) {
  FamilyCounters& c = app->family[static_cast<int>(family)];
  constexpr auto kRelaxed = std::memory_order_relaxed;
  c.requests.fetch_add(1, kRelaxed);
  if (family == Family::kMetadata && (error == ENOENT || error == EEXIST)) {
    c.existence_answers.fetch_add(1, kRelaxed);
  } else if (error != 0) {
    c.errors.fetch_add(1, kRelaxed);
  }
  if (queue_ns > 0) c.queue_ns.fetch_add(static_cast<uint64_t>(queue_ns), kRelaxed);
  if (service_ns > 0) c.service_ns.fetch_add(static_cast<uint64_t>(service_ns), kRelaxed);
  if (bytes_read) app->bytes_read.fetch_add(bytes_read, kRelaxed);
  if (bytes_written) app->bytes_written.fetch_add(bytes_written, kRelaxed);
  if (family == Family::kRead || family == Family::kWrite) {
    app->queue_hist.Add(queue_ns);
    app->service_hist.Add(service_ns);
  }
}

void Stats::RecordAppDispatch(AppStats* app, uint64_t requests) {
  app->dispatches.fetch_add(1, std::memory_order_relaxed);
  app->dispatched_requests.fetch_add(requests, std::memory_order_relaxed);
}

void Stats::RecordFileDispatch(uint64_t dev, uint64_t ino, uint64_t requests, uint64_t bytes) {
  MutexLock lock(files_mu_);
  auto it = files_.find({dev, ino});
  if (it == files_.end() && files_.size() < kMaxFileCounters) {
    it = files_.emplace(std::make_pair(dev, ino), FileCounters{}).first;
  }
  FileCounters& f = it != files_.end() ? it->second : files_other_;
  f.requests += requests;
  f.bytes += bytes;
  ++f.dispatches;
}

nlohmann::json Stats::ToJson() const {
  Sum total[kFamilies];
  uint64_t total_read = 0, total_written = 0;
  DataSum total_data;
  nlohmann::json apps = nlohmann::json::object();
  MutexLock apps_lock(apps_mu_);
  for (int f = 0; f < kFamilies; ++f) {
    total[f].requests += gone_requests_[f];
    total[f].errors += gone_errors_[f];
  }
  total_read += gone_read_;
  total_written += gone_written_;
  for (auto it = apps_.begin(); it != apps_.end();) {
    const AppStats* a = it->second.stats.get();
    Sum fam[kFamilies];
    uint64_t r = 0, w = 0;
    apps[a->name] = RenderApp(*a, fam, &r, &w);
    for (int f = 0; f < kFamilies; ++f) {
      total[f].requests += fam[f].requests;
      total[f].errors += fam[f].errors;
      total[f].existence_answers += fam[f].existence_answers;
      total[f].queue_ns += fam[f].queue_ns;
      total[f].service_ns += fam[f].service_ns;
    }
    total_read += r;
    total_written += w;
    total_data.Add(*a);
    if (!it->second.departed) {
      ++it;
      continue;
    }
    // Listed once more, final; then only its share of the total remains.
    apps[a->name]["departed"] = true;
    for (int f = 0; f < kFamilies; ++f) {
      gone_requests_[f] += fam[f].requests;
      gone_errors_[f] += fam[f].errors;
    }
    gone_read_ += r;
    gone_written_ += w;
    ++gone_apps_;
    it = apps_.erase(it);
  }
  const uint64_t departed_apps = gone_apps_;
  apps_lock.Unlock();
  nlohmann::json total_json = Render(total, total_read, total_written);
  nlohmann::json by_op = nlohmann::json::object();
  for (int op = 0; op < 256; ++op) {
    const uint64_t n = by_op_[op].load(std::memory_order_relaxed);
    if (n != 0) by_op[proto::OpName(static_cast<proto::Op>(op))] = n;
  }
  total_json["by_op"] = std::move(by_op);
  total_json["departed_apps"] = departed_apps;
  total_data.Render(&total_json);
  // Copied under the lock, rendered after it: dispatches record into it meanwhile.
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, FileCounters>> copied;
  FileCounters other;
  {
    MutexLock lock(files_mu_);
    copied.assign(files_.begin(), files_.end());
    other = files_other_;
  }
  auto render = [](const FileCounters& f) {
    return nlohmann::json{{"requests", f.requests},
                          {"bytes", f.bytes},
                          {"dispatches", f.dispatches},
                          {"mean_requests_per_dispatch", Mean(f.requests, f.dispatches)}};
  };
  // A dispatch may carry several applications' requests: the total counts it once.
  nlohmann::json files = nlohmann::json::object();
  uint64_t dispatches = other.dispatches, requests = other.requests;
  for (const auto& [key, f] : copied) {
    dispatches += f.dispatches;
    requests += f.requests;
    files[std::to_string(key.first) + ":" + std::to_string(key.second)] = render(f);
  }
  total_json["dispatches"] = dispatches;
  total_json["mean_requests_per_dispatch"] = Mean(requests, dispatches);
  nlohmann::json files_other;
  if (other.dispatches > 0) files_other = render(other);
  nlohmann::json j{{"total", total_json}, {"apps", apps}, {"files", files}};
  if (!files_other.is_null()) j["files_other"] = std::move(files_other);
#define IORELAY_CONN_COUNTER_JSON(member, key, meaning) j[key] = conn.member.load();
  IORELAY_CONN_COUNTERS(IORELAY_CONN_COUNTER_JSON)
#undef IORELAY_CONN_COUNTER_JSON
#define IORELAY_CONN_GAUGE_JSON(member, key, meaning) \
  j[key] = conn.member.now();                         \
  j[key "_peak"] = conn.member.peak();
  IORELAY_CONN_GAUGES(IORELAY_CONN_GAUGE_JSON)
#undef IORELAY_CONN_GAUGE_JSON
  return j;
}

nlohmann::json Stats::ToJsonOf(uint32_t app) const {
  nlohmann::json apps = nlohmann::json::object();
  nlohmann::json total;
  MutexLock lock(apps_mu_);
  auto it = apps_.find(app);
  if (it != apps_.end()) {
    Sum fam[kFamilies];
    uint64_t r = 0, w = 0;
    total = RenderApp(*it->second.stats, fam, &r, &w);
    apps[it->second.stats->name] = total;
  } else {
    Sum none[kFamilies];
    total = Render(none, 0, 0);
  }
  return nlohmann::json{{"total", total}, {"apps", apps}};
}

}  // namespace iorelay::daemon
