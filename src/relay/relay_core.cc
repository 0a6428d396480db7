// A relay's core: the daemon's, with the upstream client as its backend and lock service.
#include "relay/relay_core.h"

#include "client/client.h"
#include "daemon/daemon.h"
#include "relay/lock_relay.h"
#include "relay/relay_backend.h"

namespace iorelay::relay {
namespace {

ClientPtr MakeClient(const client::ClientConfig& cfg) {
  Result<std::unique_ptr<client::Client>> c = client::Client::Create(cfg);
  if (!c.ok()) return nullptr;
  return ClientPtr(new iorelay_client{std::move(*c)});
}

}  // namespace

Result<client::ClientConfig> UpstreamConfig(const daemon::Config& config) {
  if (config.role != daemon::Role::kRelay) return Status::InvalidArgument("not a relay");
  if (config.upstream.empty()) {
    return Status::InvalidArgument("--role relay needs at least one --upstream daemon");
  }
  // One job per relay: it authenticates upstream with the credential its clients present.
  if (config.credentials.size() != 1) {
    return Status::InvalidArgument(
        "--role relay takes exactly one --credential (the job's, used upstream too)");
  }
  if (config.exports.empty()) {
    return Status::InvalidArgument("--role relay needs --export PREFIX=UPSTREAM_PATH");
  }
  client::ClientConfig cfg;
  for (const std::string& a : config.upstream) {
    Result<client::Address> addr = client::ParseAddress(a);
    if (!addr.ok())
      return Status::InvalidArgument("--upstream " + a + ": " + addr.status().message());
    cfg.servers.push_back(*addr);
  }
  cfg.secret_file = config.credentials[0].file;
  for (const auto& [prefix, root] : config.exports) {
    if (root.empty() || root[0] != '/') {
      return Status::InvalidArgument("--export " + prefix + "=" + root +
                                     ": a relay's root is an absolute upstream path");
    }
    std::string r = root;
    while (r.size() > 1 && r.back() == '/') r.pop_back();
    cfg.prefixes.push_back(r);
  }
  cfg.placement.kind = client::PlacementKind::kFileHash;
  return cfg;
}

Result<std::unique_ptr<daemon::Core>> BuildRelayCore(const daemon::Config& config) {
  Result<client::ClientConfig> cfg = UpstreamConfig(config);
  if (!cfg.ok()) return cfg.status();
  Result<std::unique_ptr<client::Client>> data = client::Client::Create(*cfg);
  if (!data.ok()) {
    return Status::FromErrno(data.status().code(), "upstream client: " + data.status().message());
  }
  auto backend = std::make_unique<RelayBackend>(ClientPtr(new iorelay_client{std::move(*data)}),
                                                cfg->prefixes);
  RelayBackend* relay = backend.get();
  Result<std::unique_ptr<daemon::Core>> core = daemon::BuildCore(config, std::move(backend));
  if (!core.ok()) return core.status();
  // The backend lives as long as the core (it owns it, under the counting layer).
  (*core)->lock_forwarder = std::make_unique<LockRelay>(
      [c = *cfg] { return MakeClient(c); }, [relay](int fd) { return relay->PathOf(fd); });
  (*core)->relay_stats = [relay] { return relay->StatsJson(); };
  return core;
}

}  // namespace iorelay::relay
