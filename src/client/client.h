// The process's client: configuration, one Server (pool + session) per daemon, the registry
// of open files (for fork) and of the files this process holds record locks on.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "client/config.h"
#include "client/connection.h"
#include "client/server.h"
#include "iorelay/iorelay.h"
#include "proto/wire.h"

namespace iorelay::client {

class Client {
 public:
  // Loads the credential (and a placement map) with raw syscalls; connects lazily.
  static Result<std::unique_ptr<Client>> Create(ClientConfig cfg);

  const ClientConfig& config() const { return cfg_; }
  int server_count() const { return static_cast<int>(servers_.size()); }
  Server& server(int i) { return *servers_[i]; }

  bool IsForwarded(std::string_view abs_path) const;
  // The daemon serving `path`: the node's daemon, or the path's hash under file-hash.
  int ServerFor(std::string_view path) const;

  // One request and its reply on daemon `server`. ok(): the daemon's errno (0: success).
  // Not ok: EIO when the transport failed, or the daemon's refusal of the connection.
  // With `generation` non-zero, a connection of another session (the daemon restarted since
  // the handle was opened) fails with EIO before anything is sent.
  struct CallInfo {
    size_t payload_bytes = 0;   // of the reply
    uint64_t generation = 0;    // of the connection's session (SessionInfo::generation)
    uint32_t max_io_bytes = 0;  // of that session
  };
  Result<int32_t> Call(int server, proto::Op op, std::span<const uint8_t> fields, IoSpan tx,
                       std::vector<uint8_t>* payload, IoSpan rx, CallInfo* info = nullptr,
                       uint64_t generation = 0);

  // Typed form: encodes `req`, decodes a successful reply into `rep` (may be null).
  template <class Req, class Rep>
  Result<int32_t> CallMsg(int server, proto::Op op, const Req& req, Rep* rep,
                          uint64_t generation = 0) {
    std::vector<uint8_t> payload;
    Result<int32_t> r =
        Call(server, op, proto::EncodeFields(req), {}, &payload, {}, nullptr, generation);
    if (r.ok() && *r == 0 && rep && !proto::DecodeFields(payload, rep).ok()) {
      return Status::IOError("malformed reply to " + std::string(proto::OpName(op)));
    }
    return r;
  }

  void Register(iorelay_file* f);
  void Unregister(iorelay_file* f);

  // Record locks this process holds, by file identity.
  void NoteLocked(uint64_t dev, uint64_t ino);
  // True (and forgets it) if this process may hold locks on the file.
  bool TakeLocked(uint64_t dev, uint64_t ino);

  int AfterForkChild();
  int MoveInternalFd(int fd);

 private:
  explicit Client(ClientConfig cfg) : cfg_(std::move(cfg)) {}

  ClientConfig cfg_;
  Secret secret_{};
  int node_server_ = 0;  // the node's daemon (placements other than file-hash)
  std::vector<std::unique_ptr<Server>> servers_;
  std::mutex files_mu_;
  std::unordered_set<iorelay_file*> files_;         // guarded by files_mu_
  std::set<std::pair<uint64_t, uint64_t>> locked_;  // guarded by files_mu_
};

// Negative errno for the C API from a Call's result.
inline int ToErr(const Result<int32_t>& r) { return r.ok() ? -*r : -r.status().code(); }

}  // namespace iorelay::client

struct iorelay_client {
  std::unique_ptr<iorelay::client::Client> impl;
};

// One open file description as the client holds it. References are counted (dup).
struct iorelay_file {
  iorelay::client::Client* client = nullptr;
  int server = -1;  // index of the daemon holding the handle
  uint64_t handle = 0;
  uint64_t generation = 0;  // the session the handle belongs to (SessionInfo::generation)
  uint64_t dev = 0, ino = 0;
  uint32_t st_mode = 0;
  uint32_t max_io_bytes = 1u << 20;  // the daemon's limit per request
  std::string path;
  int open_flags = 0;                // as given to open (for the direct fallback)
  std::atomic<int> status_flags{0};  // F_GETFL view
  std::atomic<int> refs{1};
  std::atomic<int64_t> offset_hint{0};  // last known shared offset (direct fallback)
  std::mutex direct_mu;
  std::atomic<int> direct_fd{-1};  // >= 0: served directly (daemon lost)
};
