// Recording and JSON rendering of the daemon's counters.
#include "daemon/stats.h"

namespace iorelay::daemon {
namespace {

constexpr const char* kFamilyNames[kFamilies] = {"read", "write", "metadata", "lock"};

struct Sum {
  uint64_t requests = 0, errors = 0, queue_ns = 0, service_ns = 0;
};

nlohmann::json Render(const Sum (&fam)[kFamilies], uint64_t bytes_read, uint64_t bytes_written) {
  nlohmann::json j;
  Sum all;
  nlohmann::json by = nlohmann::json::object();
  for (int f = 0; f < kFamilies; ++f) {
    all.requests += fam[f].requests;
    all.errors += fam[f].errors;
    all.queue_ns += fam[f].queue_ns;
    all.service_ns += fam[f].service_ns;
    by[kFamilyNames[f]] = {{"requests", fam[f].requests},
                           {"errors", fam[f].errors},
                           {"queue_time_ns", fam[f].queue_ns},
                           {"service_time_ns", fam[f].service_ns}};
  }
  j["requests"] = all.requests;
  j["errors"] = all.errors;
  j["bytes_read"] = bytes_read;
  j["bytes_written"] = bytes_written;
  j["queue_time_ns"] = all.queue_ns;
  j["service_time_ns"] = all.service_ns;
  j["by_family"] = by;
  return j;
}

}  // namespace

Family FamilyOf(proto::Op op) {
  switch (op) {
    case proto::Op::kPread:
    case proto::Op::kRead:
      return Family::kRead;
    case proto::Op::kPwrite:
    case proto::Op::kWrite:
      return Family::kWrite;
    case proto::Op::kLock:
    case proto::Op::kUnlockAll:
      return Family::kLock;
    default:
      return Family::kMetadata;
  }
}

Stats::Stats(const std::vector<std::string>& app_names) {
  for (const std::string& n : app_names) apps_.push_back(std::make_unique<AppStats>(n));
}

void Stats::Record(AppStats* app, Family family, int error, uint64_t bytes_read,
                   uint64_t bytes_written, int64_t queue_ns, int64_t service_ns) {
  FamilyCounters& c = app->family[static_cast<int>(family)];
  constexpr auto kRelaxed = std::memory_order_relaxed;
  c.requests.fetch_add(1, kRelaxed);
  if (error != 0) c.errors.fetch_add(1, kRelaxed);
  if (queue_ns > 0) c.queue_ns.fetch_add(static_cast<uint64_t>(queue_ns), kRelaxed);
  if (service_ns > 0) c.service_ns.fetch_add(static_cast<uint64_t>(service_ns), kRelaxed);
  if (bytes_read) app->bytes_read.fetch_add(bytes_read, kRelaxed);
  if (bytes_written) app->bytes_written.fetch_add(bytes_written, kRelaxed);
}

nlohmann::json Stats::ToJson() const {
  Sum total[kFamilies];
  uint64_t total_read = 0, total_written = 0;
  nlohmann::json apps = nlohmann::json::object();
  for (const auto& a : apps_) {
    Sum fam[kFamilies];
    for (int f = 0; f < kFamilies; ++f) {
      fam[f].requests = a->family[f].requests.load();
      fam[f].errors = a->family[f].errors.load();
      fam[f].queue_ns = a->family[f].queue_ns.load();
      fam[f].service_ns = a->family[f].service_ns.load();
      total[f].requests += fam[f].requests;
      total[f].errors += fam[f].errors;
      total[f].queue_ns += fam[f].queue_ns;
      total[f].service_ns += fam[f].service_ns;
    }
    uint64_t r = a->bytes_read.load(), w = a->bytes_written.load();
    total_read += r;
    total_written += w;
    apps[a->name] = Render(fam, r, w);
  }
  return nlohmann::json{{"total", Render(total, total_read, total_written)}, {"apps", apps}};
}

}  // namespace iorelay::daemon
