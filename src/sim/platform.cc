// Platform files: strict parsing (every key known, every unit checked) so that a typo in a
// machine description fails loudly instead of silently simulating a default.
#include "sim/platform.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "common/units.h"

namespace iorelay::sim {
namespace {

using nlohmann::json;

// "calibration" records how `iorelay calibrate` fitted the file (seed, patterns, error).
bool IgnoredKey(const std::string& key) {
  return key == "comment" || key == "sources" || key == "calibration";
}

// One object of the document: checks its keys against the known ones and reads typed values.
// Each parser below declares its section's keys in one list next to the code that reads them;
// asking for a key that is not in the list is a bug in the parser (it would refuse the key as
// unknown in every file), so it stops the program on the first parse that reaches it.
class Section {
 public:
  Section(const json& doc, std::string path, std::initializer_list<const char*> keys)
      : doc_(doc), path_(std::move(path)), keys_(keys.begin(), keys.end()) {}

  Status CheckKeys() const {
    if (!doc_.is_object()) return Status::InvalidArgument(path_ + " must be an object");
    for (const auto& [key, value] : doc_.items()) {
      if (IgnoredKey(key) || keys_.count(key) > 0) continue;
      return Status::InvalidArgument(fmt::format("platform: unknown key '{}' in {} (valid: {})",
                                                 key, path_, fmt::join(keys_, ", ")));
    }
    return Status::Ok();
  }
  bool Has(const char* key) const {
    if (keys_.count(key) == 0) {
      std::fprintf(stderr, "platform parser bug: %s.%s is read but not in its key list\n",
                   path_.c_str(), key);
      std::abort();
    }
    return doc_.contains(key);
  }

  Result<std::string> String(const char* key) const {
    if (!Has(key)) return Missing(key);
    if (!doc_[key].is_string()) return Bad(key, "a string");
    return doc_[key].get<std::string>();
  }
  Result<double> Rate(const char* key) const { return Parse(key, units::ParseBytesPerSecond); }
  Result<int64_t> Duration(const char* key) const { return Parse(key, units::ParseDurationNs); }
  Result<uint64_t> Bytes(const char* key) const { return Parse(key, units::ParseBytes); }
  Result<double> Fraction(const char* key) const {
    if (!Has(key)) return Missing(key);
    if (!doc_[key].is_number() || doc_[key].get<double>() < 0 || doc_[key].get<double>() >= 1) {
      return Bad(key, "a number in [0, 1)");
    }
    return doc_[key].get<double>();
  }
  Result<double> NonNegative(const char* key) const {
    if (!Has(key)) return Missing(key);
    if (!doc_[key].is_number() || doc_[key].get<double>() < 0) {
      return Bad(key, "a number >= 0");
    }
    return doc_[key].get<double>();
  }
  Result<int64_t> Integer(const char* key, int64_t min) const {
    if (!Has(key)) return Missing(key);
    if (!doc_[key].is_number_integer() || doc_[key].get<int64_t>() < min) {
      return Bad(key, fmt::format("an integer >= {}", min));
    }
    return doc_[key].get<int64_t>();
  }
  // A string naming one of `choices` (the error lists them).
  template <typename T>
  Result<T> Choice(const char* key,
                   std::initializer_list<std::pair<std::string_view, T>> choices) const {
    auto value = String(key);
    if (!value.ok()) return value.status();
    std::vector<std::string_view> names;
    for (const auto& [name, v] : choices) {
      if (*value == name) return v;
      names.push_back(name);
    }
    return Status::InvalidArgument(fmt::format("platform: {}.{} '{}' unknown (valid: {})", path_,
                                               key, *value, fmt::join(names, ", ")));
  }
  const std::string& path() const { return path_; }

 private:
  template <typename F>
  auto Parse(const char* key, F parse) const -> decltype(parse(std::string_view())) {
    if (!Has(key)) return Missing(key);
    if (!doc_[key].is_string()) return Bad(key, "a string with a unit");
    auto r = parse(doc_[key].get<std::string>());
    if (!r.ok()) {
      return Status::InvalidArgument(
          fmt::format("platform: {}.{}: {}", path_, key, r.status().message()));
    }
    return r;
  }
  Status Missing(const char* key) const {
    return Status::InvalidArgument(fmt::format("platform: missing value {}.{}", path_, key));
  }
  Status Bad(const char* key, const std::string& what) const {
    return Status::InvalidArgument(fmt::format("platform: {}.{} must be {}", path_, key, what));
  }

  const json& doc_;
  std::string path_;
  std::set<std::string> keys_;
};

// Reads `key` into *out when present (optional values keep their default).
template <typename T, typename R>
Status Optional(const Section& s, const char* key, R (Section::*get)(const char*) const, T* out) {
  if (!s.Has(key)) return Status::Ok();
  auto r = (s.*get)(key);
  if (!r.ok()) return r.status();
  *out = static_cast<T>(*r);
  return Status::Ok();
}

// Reads integer `key` (at least `min`) into *out when present.
Status OptionalInteger(const Section& s, const char* key, int64_t min, int* out) {
  if (!s.Has(key)) return Status::Ok();
  auto n = s.Integer(key, min);
  if (!n.ok()) return n.status();
  *out = static_cast<int>(*n);
  return Status::Ok();
}

template <typename T, typename R>
Status Required(const Section& s, const char* key, R (Section::*get)(const char*) const, T* out) {
  auto r = (s.*get)(key);
  if (!r.ok()) return r.status();
  *out = static_cast<T>(*r);
  return Status::Ok();
}

Status ParseNetwork(const json& doc, NetworkParams* n) {
  const Section s(
      doc, "network",
      {"latency", "backbone", "topology", "link", "storage_gateways", "storage_gateway_nic"});
  IORELAY_RETURN_IF_ERROR(s.CheckKeys());
  IORELAY_RETURN_IF_ERROR(Required(s, "latency", &Section::Duration, &n->latency_s));
  n->latency_s *= 1e-9;
  IORELAY_RETURN_IF_ERROR(Optional(s, "backbone", &Section::Rate, &n->backbone_Bps));
  IORELAY_RETURN_IF_ERROR(Optional(s, "link", &Section::Rate, &n->link_Bps));
  if (n->link_Bps > 0 && !s.Has("topology")) {
    return Status::InvalidArgument("platform: network.link needs network.topology");
  }
  IORELAY_RETURN_IF_ERROR(Optional(s, "topology", &Section::String, &n->topology));
  if (!s.Has("storage_gateways")) {
    if (!s.Has("storage_gateway_nic")) return Status::Ok();
    return Status::InvalidArgument(
        "platform: network.storage_gateway_nic needs network.storage_gateways");
  }
  auto gateways = s.Integer("storage_gateways", 0);
  if (!gateways.ok()) return gateways.status();
  n->storage_gateways = static_cast<int>(*gateways);
  if (n->storage_gateways == 0) return Status::Ok();
  if (n->link_Bps == 0) {
    return Status::InvalidArgument(
        "platform: network.storage_gateways needs network.topology and network.link (the "
        "gateways are nodes of the topology)");
  }
  return Required(s, "storage_gateway_nic", &Section::Rate, &n->storage_gateway_nic_Bps);
}

Status ParseCompute(const json& doc, ComputeParams* c) {
  const Section s(doc, "compute", {"nic", "start_jitter"});
  IORELAY_RETURN_IF_ERROR(s.CheckKeys());
  IORELAY_RETURN_IF_ERROR(Required(s, "nic", &Section::Rate, &c->nic_Bps));
  return Optional(s, "start_jitter", &Section::Duration, &c->start_jitter_ns);
}

Status ParseIoNode(const json& doc, IoNodeParams* io) {
  const Section s(doc, "ionode", {"nic", "slots", "request_overhead", "layout", "bridge_link"});
  IORELAY_RETURN_IF_ERROR(s.CheckKeys());
  IORELAY_RETURN_IF_ERROR(Required(s, "nic", &Section::Rate, &io->nic_Bps));
  IORELAY_RETURN_IF_ERROR(OptionalInteger(s, "slots", 1, &io->slots));
  if (s.Has("layout")) {
    auto layout = s.Choice<IoLayoutKind>(
        "layout", {{"spread", IoLayoutKind::kSpread}, {"bgq", IoLayoutKind::kBgq}});
    if (!layout.ok()) return layout.status();
    io->layout = *layout;
  }
  IORELAY_RETURN_IF_ERROR(Optional(s, "bridge_link", &Section::Rate, &io->bridge_link_Bps));
  return Optional(s, "request_overhead", &Section::Duration, &io->request_overhead_ns);
}

Status ParseStorage(const json& doc, StorageParams* st) {
  const Section s(doc, "storage",
                  {"kind",
                   "targets",
                   "nic",
                   "stripe_size",
                   "stripe_count",
                   "device",
                   "noise",
                   "metadata_service",
                   "metadata_open",
                   "metadata_close",
                   "metadata_stat",
                   "metadata_remove",
                   "metadata_threads",
                   "metadata_servers",
                   "directory_stripes",
                   "directory_changes",
                   "token_handoff",
                   "range_token",
                   "file_writes_per_client",
                   "metanode_update",
                   "metanode_bw",
                   "metanode_share",
                   "channels",
                   "file_writes",
                   "stripe_object"});
  IORELAY_RETURN_IF_ERROR(s.CheckKeys());
  auto kind =
      s.Choice<StorageKind>("kind", {{"pfs", StorageKind::kPfs}, {"nfs", StorageKind::kNfs}});
  if (!kind.ok()) return kind.status();
  st->kind = *kind;
  IORELAY_RETURN_IF_ERROR(Required(s, "nic", &Section::Rate, &st->nic_Bps));
  auto device = s.String("device");
  if (!device.ok()) return device.status();
  auto profile = device::ParseDeviceProfile(*device);
  if (!profile.ok()) {
    return Status::InvalidArgument("platform: storage.device: " + profile.status().message());
  }
  st->device = *profile;
  IORELAY_RETURN_IF_ERROR(Optional(s, "noise", &Section::Fraction, &st->noise_cv));
  IORELAY_RETURN_IF_ERROR(
      Optional(s, "metadata_service", &Section::Duration, &st->metadata_service_ns));
  const auto needs_server = [&](const char* key) {
    return s.Has(key) && st->metadata_service_ns == 0
               ? Status::InvalidArgument(fmt::format(
                     "platform: storage.{} needs storage.metadata_service (the metadata server)",
                     key))
               : Status::Ok();
  };
  for (size_t op = 0; op < kMetadataOps; ++op) {
    if (kMetadataOpKeys[op] == nullptr) continue;
    IORELAY_RETURN_IF_ERROR(needs_server(kMetadataOpKeys[op]));
    IORELAY_RETURN_IF_ERROR(
        Optional(s, kMetadataOpKeys[op], &Section::Duration, &st->metadata_op_ns[op]));
  }
  IORELAY_RETURN_IF_ERROR(OptionalInteger(s, "metadata_threads", 1, &st->metadata_threads));
  IORELAY_RETURN_IF_ERROR(OptionalInteger(s, "metadata_servers", 1, &st->metadata_servers));
  IORELAY_RETURN_IF_ERROR(OptionalInteger(s, "directory_stripes", 1, &st->directory_stripes));
  if (st->directory_stripes > st->metadata_servers) {
    return Status::InvalidArgument(
        "platform: storage.directory_stripes exceeds storage.metadata_servers");
  }
  IORELAY_RETURN_IF_ERROR(OptionalInteger(s, "directory_changes", 0, &st->directory_changes));
  IORELAY_RETURN_IF_ERROR(Optional(s, "stripe_object", &Section::Duration, &st->stripe_object_ns));
  for (const char* key : {"metadata_threads", "metadata_servers", "directory_stripes",
                          "directory_changes", "stripe_object"}) {
    IORELAY_RETURN_IF_ERROR(needs_server(key));
  }
  IORELAY_RETURN_IF_ERROR(Optional(s, "token_handoff", &Section::Duration, &st->token_handoff_ns));
  IORELAY_RETURN_IF_ERROR(Optional(s, "range_token", &Section::Duration, &st->range_token_ns));
  if (st->token_handoff_ns > 0 && st->range_token_ns > 0) {
    return Status::InvalidArgument(
        "platform: storage.token_handoff (a whole-file token) and storage.range_token (byte-range "
        "tokens) exclude each other");
  }
  IORELAY_RETURN_IF_ERROR(
      Optional(s, "metanode_update", &Section::Duration, &st->metanode_update_ns));
  IORELAY_RETURN_IF_ERROR(Optional(s, "metanode_bw", &Section::Rate, &st->metanode_Bps));
  IORELAY_RETURN_IF_ERROR(
      Optional(s, "metanode_share", &Section::NonNegative, &st->metanode_share));
  IORELAY_RETURN_IF_ERROR(OptionalInteger(s, "file_writes", 0, &st->file_writes));
  IORELAY_RETURN_IF_ERROR(OptionalInteger(s, "channels", 1, &st->channels));
  IORELAY_RETURN_IF_ERROR(
      OptionalInteger(s, "file_writes_per_client", 0, &st->file_writes_per_client));
  if (st->kind == StorageKind::kNfs) {
    for (const char* key : {"targets", "stripe_size", "stripe_count", "stripe_object"}) {
      if (s.Has(key)) {
        return Status::InvalidArgument(
            fmt::format("platform: storage.{} does not apply to kind nfs (one server)", key));
      }
    }
    st->targets = 1;
    st->stripe_count = 1;
    st->stripe_bytes = 1 << 20;
    return Status::Ok();
  }
  auto targets = s.Integer("targets", 1);
  if (!targets.ok()) return targets.status();
  st->targets = static_cast<int>(*targets);
  IORELAY_RETURN_IF_ERROR(Required(s, "stripe_size", &Section::Bytes, &st->stripe_bytes));
  if (st->stripe_bytes == 0) return Status::InvalidArgument("platform: storage.stripe_size is 0");
  auto count = s.Integer("stripe_count", 1);
  if (!count.ok()) return count.status();
  if (*count > st->targets) {
    return Status::InvalidArgument("platform: storage.stripe_count exceeds storage.targets");
  }
  st->stripe_count = static_cast<int>(*count);
  return Status::Ok();
}

Status ParseCpu(const json& doc, CpuParams* c) {
  const Section s(doc, "cpu",
                  {"cores", "scope", "direct_call", "forward_request", "copy", "ionode_request",
                   "ionode_call"});
  IORELAY_RETURN_IF_ERROR(s.CheckKeys());
  auto cores = s.Integer("cores", 1);
  if (!cores.ok()) return cores.status();
  c->cores = static_cast<int>(*cores);
  if (s.Has("scope")) {
    auto scope =
        s.Choice<CpuScope>("scope", {{"machine", CpuScope::kMachine}, {"node", CpuScope::kNode}});
    if (!scope.ok()) return scope.status();
    c->scope = *scope;
  }
  IORELAY_RETURN_IF_ERROR(Optional(s, "direct_call", &Section::Duration, &c->direct_call_ns));
  IORELAY_RETURN_IF_ERROR(
      Optional(s, "forward_request", &Section::Duration, &c->forward_request_ns));
  IORELAY_RETURN_IF_ERROR(Optional(s, "copy", &Section::Rate, &c->copy_Bps));
  IORELAY_RETURN_IF_ERROR(Optional(s, "ionode_request", &Section::Duration, &c->ionode_request_ns));
  return Optional(s, "ionode_call", &Section::Duration, &c->ionode_call_ns);
}

// The MPI-IO implementations a per-MPI value may name (bench/collective_saturation.py
// --component).
constexpr std::array<const char*, 3> kCollectiveMpis = {"ompio", "romio321", "mpich"};

// collective.KEY: an object of byte sizes by MPI, into *out when present.
Status ParsePerMpi(const Section& collective, const json& doc, const char* key,
                   std::map<std::string, uint64_t>* out) {
  if (!collective.Has(key)) return Status::Ok();
  const Section by(doc[key], fmt::format("collective.{}", key),
                   {kCollectiveMpis[0], kCollectiveMpis[1], kCollectiveMpis[2]});
  IORELAY_RETURN_IF_ERROR(by.CheckKeys());
  for (const char* mpi : kCollectiveMpis) {
    if (!by.Has(mpi)) continue;
    auto bytes = by.Bytes(mpi);
    if (!bytes.ok()) return bytes.status();
    (*out)[mpi] = *bytes;
  }
  return Status::Ok();
}

// collective.forwarding_by_mpi: per MPI, {"ladder": [{bytes_per_call, ratio, p, runs}, ...],
// "source": "..."}, at least one step.
Status ParseForwarding(const Section& collective, const json& doc,
                       std::map<std::string, ForwardingLadder>* out) {
  if (!collective.Has("forwarding_by_mpi")) return Status::Ok();
  const json& by_doc = doc["forwarding_by_mpi"];
  const Section by(by_doc, "collective.forwarding_by_mpi",
                   {kCollectiveMpis[0], kCollectiveMpis[1], kCollectiveMpis[2]});
  IORELAY_RETURN_IF_ERROR(by.CheckKeys());
  for (const char* mpi : kCollectiveMpis) {
    if (!by.Has(mpi)) continue;
    const Section one(by_doc[mpi], by.path() + "." + mpi, {"ladder", "source"});
    IORELAY_RETURN_IF_ERROR(one.CheckKeys());
    ForwardingLadder ladder;
    if (one.Has("source")) {
      auto source = one.String("source");
      if (!source.ok()) return source.status();
      ladder.source = *source;
    }
    const json& steps = by_doc[mpi].contains("ladder") ? by_doc[mpi]["ladder"] : json();
    if (!steps.is_array() || steps.empty()) {
      return Status::InvalidArgument(
          fmt::format("platform: {}.ladder must be a non-empty list of steps", one.path()));
    }
    for (size_t i = 0; i < steps.size(); ++i) {
      const Section step(steps[i], fmt::format("{}.ladder[{}]", one.path(), i),
                         {"bytes_per_call", "ratio", "p", "runs"});
      IORELAY_RETURN_IF_ERROR(step.CheckKeys());
      auto bytes = step.Bytes("bytes_per_call");
      auto ratio = step.NonNegative("ratio");
      auto p = step.NonNegative("p");
      auto runs = step.Integer("runs", 2);
      for (const Status& st : {bytes.status(), ratio.status(), p.status(), runs.status()}) {
        if (!st.ok()) return st;
      }
      if (*ratio <= 0 || *p > 1) {
        return Status::InvalidArgument(
            fmt::format("platform: {}: ratio must be > 0 and p in [0, 1]", step.path()));
      }
      ladder.steps.push_back({*bytes, *ratio, *p, *runs});
    }
    (*out)[mpi] = std::move(ladder);
  }
  return Status::Ok();
}

Status ParseCollective(const json& doc, CollectiveParams* c) {
  const Section s(doc, "collective",
                  {"saturation_point", "saturation_point_by_mpi", "spread_point_by_mpi",
                   "spread_point_interleaved_by_mpi", "forwarding_by_mpi"});
  IORELAY_RETURN_IF_ERROR(s.CheckKeys());
  IORELAY_RETURN_IF_ERROR(
      Optional(s, "saturation_point", &Section::Bytes, &c->saturation_point_bytes));
  IORELAY_RETURN_IF_ERROR(
      ParsePerMpi(s, doc, "saturation_point_by_mpi", &c->saturation_point_by_mpi));
  // A k of 0 is no measurement (a spread point of 0 is one: one aggregator per host never lost).
  if (s.Has("saturation_point") && c->saturation_point_bytes == 0) {
    return Status::InvalidArgument("platform: collective.saturation_point must be above 0");
  }
  for (const auto& [mpi, k] : c->saturation_point_by_mpi) {
    if (k == 0) {
      return Status::InvalidArgument(
          fmt::format("platform: collective.saturation_point_by_mpi.{} must be above 0", mpi));
    }
  }
  IORELAY_RETURN_IF_ERROR(ParsePerMpi(s, doc, "spread_point_by_mpi", &c->spread_point_by_mpi));
  IORELAY_RETURN_IF_ERROR(
      ParsePerMpi(s, doc, "spread_point_interleaved_by_mpi", &c->spread_point_interleaved_by_mpi));
  return ParseForwarding(s, doc, &c->forwarding_by_mpi);
}

}  // namespace

Result<uint64_t> MeasuredSaturationPoint(const CollectiveParams& collective,
                                         const std::string& mpi) {
  if (!mpi.empty()) {
    if (std::find(kCollectiveMpis.begin(), kCollectiveMpis.end(), mpi) == kCollectiveMpis.end()) {
      return Status::InvalidArgument(
          fmt::format("MPI '{}' unknown (known: {})", mpi, fmt::join(kCollectiveMpis, ", ")));
    }
    auto own = collective.saturation_point_by_mpi.find(mpi);
    if (own != collective.saturation_point_by_mpi.end()) return own->second;
  }
  if (collective.saturation_point_bytes > 0) return collective.saturation_point_bytes;
  return Status::InvalidArgument(fmt::format(
      "the write saturation point k is not measured (no {}collective.saturation_point in the "
      "platform): measure it with .venv/bin/python bench/collective_saturation.py{} "
      "--platform PLATFORM --platform-out FILE",
      mpi.empty() ? "" : fmt::format("collective.saturation_point_by_mpi.{} or ", mpi),
      mpi.empty() ? "" : " --component " + mpi));
}

Result<Platform> ParsePlatform(const json& doc) {
  Section top(doc, "platform",
              {"name", "network", "compute", "ionode", "storage", "cpu", "collective"});
  IORELAY_RETURN_IF_ERROR(top.CheckKeys());
  Platform p;
  auto name = top.String("name");
  if (!name.ok()) return name.status();
  p.name = *name;
  for (const char* key : {"network", "compute", "ionode", "storage"}) {
    if (!top.Has(key)) {
      return Status::InvalidArgument(fmt::format("platform: missing section '{}'", key));
    }
  }
  IORELAY_RETURN_IF_ERROR(ParseNetwork(doc["network"], &p.network));
  IORELAY_RETURN_IF_ERROR(ParseCompute(doc["compute"], &p.compute));
  IORELAY_RETURN_IF_ERROR(ParseIoNode(doc["ionode"], &p.ionode));
  if (p.ionode.bridge_link_Bps > 0 && p.network.link_Bps == 0) {
    return Status::InvalidArgument(
        "platform: ionode.bridge_link needs network.topology and network.link (bridge nodes are "
        "nodes of the topology)");
  }
  if (p.ionode.layout == IoLayoutKind::kBgq && p.network.link_Bps == 0) {
    return Status::InvalidArgument(
        "platform: ionode.layout bgq needs network.topology and network.link (its bridge nodes "
        "are nodes of the topology)");
  }
  IORELAY_RETURN_IF_ERROR(ParseStorage(doc["storage"], &p.storage));
  if (top.Has("cpu")) IORELAY_RETURN_IF_ERROR(ParseCpu(doc["cpu"], &p.cpu));
  if (top.Has("collective"))
    IORELAY_RETURN_IF_ERROR(ParseCollective(doc["collective"], &p.collective));
  return p;
}

Result<Platform> LoadPlatform(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(fmt::format("platform file '{}' cannot be read", path));
  json doc = json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (doc.is_discarded()) {
    return Status::InvalidArgument(fmt::format("platform file '{}' is not valid JSON", path));
  }
  auto p = ParsePlatform(doc);
  if (!p.ok()) return Status::InvalidArgument(path + ": " + p.status().message());
  return p;
}

json ToJson(const Platform& p) {
  json storage = {
      {"kind", p.storage.kind == StorageKind::kNfs ? "nfs" : "pfs"},
      {"targets", p.storage.targets},
      {"nic_bytes_per_s", p.storage.nic_Bps},
      {"stripe_size", units::FormatBytes(p.storage.stripe_bytes)},
      {"stripe_count", p.storage.stripe_count},
      {"device", device::ToJson(p.storage.device)},
      {"channels", p.storage.channels},
      {"noise", p.storage.noise_cv},
      {"metadata_service", units::FormatDurationNs(p.storage.metadata_service_ns)},
      {"metadata_threads", p.storage.metadata_threads},
      {"metadata_servers", p.storage.metadata_servers},
      {"directory_stripes", p.storage.directory_stripes},
      {"directory_changes", p.storage.directory_changes},
      {"stripe_object", units::FormatDurationNs(p.storage.stripe_object_ns)},
      {"token_handoff", units::FormatDurationNs(p.storage.token_handoff_ns)},
      {"range_token", units::FormatDurationNs(p.storage.range_token_ns)},
      {"file_writes_per_client", p.storage.file_writes_per_client},
      {"file_writes", p.storage.file_writes},
      {"metanode_update", units::FormatDurationNs(p.storage.metanode_update_ns)},
      {"metanode_bytes_per_s", p.storage.metanode_Bps},
      {"metanode_share", p.storage.metanode_share},
  };
  for (size_t op = 0; op < kMetadataOps; ++op) {
    if (kMetadataOpKeys[op] == nullptr) continue;
    storage[kMetadataOpKeys[op]] =
        units::FormatDurationNs(p.storage.MetadataServiceNs(static_cast<MetadataOp>(op)));
  }
  json out = {
      {"name", p.name},
      {"network",
       {{"latency", units::FormatDurationNs(std::llround(p.network.latency_s * 1e9))},
        {"backbone_bytes_per_s", p.network.backbone_Bps},
        {"link_bytes_per_s", p.network.link_Bps},
        {"topology", p.network.topology}}},
      {"compute",
       {{"nic_bytes_per_s", p.compute.nic_Bps},
        {"start_jitter", units::FormatDurationNs(p.compute.start_jitter_ns)}}},
      {"ionode",
       {{"nic_bytes_per_s", p.ionode.nic_Bps},
        {"slots", p.ionode.slots},
        {"layout", p.ionode.layout == IoLayoutKind::kBgq ? "bgq" : "spread"},
        {"request_overhead", units::FormatDurationNs(p.ionode.request_overhead_ns)},
        {"bridge_link_bytes_per_s", p.ionode.bridge_link_Bps}}},
      {"storage", storage},
  };
  if (p.network.storage_gateways > 0) {
    out["network"]["storage_gateways"] = p.network.storage_gateways;
    out["network"]["storage_gateway_nic_bytes_per_s"] = p.network.storage_gateway_nic_Bps;
  }
  if (p.cpu.cores > 0) {
    out["cpu"] = {{"cores", p.cpu.cores},
                  {"scope", p.cpu.scope == CpuScope::kNode ? "node" : "machine"},
                  {"direct_call", units::FormatDurationNs(p.cpu.direct_call_ns)},
                  {"forward_request", units::FormatDurationNs(p.cpu.forward_request_ns)},
                  {"copy_bytes_per_s", p.cpu.copy_Bps},
                  {"ionode_request", units::FormatDurationNs(p.cpu.ionode_request_ns)},
                  {"ionode_call", units::FormatDurationNs(p.cpu.ionode_call_ns)}};
  }
  if (p.collective.saturation_point_bytes > 0) {
    out["collective"]["saturation_point"] = units::FormatBytes(p.collective.saturation_point_bytes);
  }
  for (const auto& [mpi, k] : p.collective.saturation_point_by_mpi) {
    out["collective"]["saturation_point_by_mpi"][mpi] = units::FormatBytes(k);
  }
  for (const auto& [mpi, bytes] : p.collective.spread_point_by_mpi) {
    out["collective"]["spread_point_by_mpi"][mpi] = units::FormatBytes(bytes);
  }
  for (const auto& [mpi, bytes] : p.collective.spread_point_interleaved_by_mpi) {
    out["collective"]["spread_point_interleaved_by_mpi"][mpi] = units::FormatBytes(bytes);
  }
  for (const auto& [mpi, ladder] : p.collective.forwarding_by_mpi) {
    json steps = json::array();
    for (const ForwardingStep& s : ladder.steps) {
      steps.push_back({{"bytes_per_call", units::FormatBytes(s.bytes_per_call)},
                       {"ratio", s.ratio},
                       {"p", s.p},
                       {"runs", s.runs}});
    }
    out["collective"]["forwarding_by_mpi"][mpi] = {{"ladder", steps}, {"source", ladder.source}};
  }
  return out;
}

}  // namespace iorelay::sim
