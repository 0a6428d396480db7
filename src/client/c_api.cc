// The client-level C API: creation from the environment, prefixes, internal descriptors,
// fork, statistics. Per-file and per-path calls live in file_*.cc, path_ops.cc, dir_ops.cc.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "client/client.h"
#include "client/internal_fds.h"
#include "iorelay/version.h"

namespace proto = iorelay::proto;
using iorelay::Result;
using iorelay::client::Client;

extern "C" {

const char* iorelay_version(void) { return IORELAY_VERSION; }

iorelay_client* iorelay_client_from_env_why(int* err, char* why, size_t why_size) {
  int dummy;
  if (!err) err = &dummy;
  auto failed = [&](const iorelay::Status& s) -> iorelay_client* {
    *err = -s.code();
    if (why != nullptr && why_size > 0) snprintf(why, why_size, "%s", s.message().c_str());
    return nullptr;
  };
  Result<iorelay::client::ClientConfig> cfg =
      iorelay::client::ParseConfig([](const char* name) { return std::getenv(name); });
  if (!cfg.ok()) return failed(cfg.status());
  Result<std::unique_ptr<Client>> c = Client::Create(std::move(*cfg));
  if (!c.ok()) return failed(c.status());
  *err = 0;
  return new iorelay_client{std::move(*c)};
}

iorelay_client* iorelay_client_from_env(int* err) {
  return iorelay_client_from_env_why(err, nullptr, 0);
}

void iorelay_client_destroy(iorelay_client* c) {
  if (c) (void)c->impl->FlushAll(true);  // what write-behind holds goes out first
  delete c;
}

int iorelay_is_forwarded(const iorelay_client* c, const char* abs_path) {
  return c && abs_path && c->impl->IsForwarded(abs_path) ? 1 : 0;
}

int iorelay_is_internal_fd(const iorelay_client*, int fd) {
  return iorelay::client::IsInternalFd(fd) ? 1 : 0;
}

int iorelay_move_internal_fd(iorelay_client* c, int fd) {
  if (!c) return -EINVAL;
  return c->impl->MoveInternalFd(fd);
}

void iorelay_before_fork(iorelay_client* c) {
  if (c) c->impl->BeforeFork();
}

void iorelay_after_fork_parent(iorelay_client* c) {
  if (c) c->impl->AfterForkParent();
}

int iorelay_flush(iorelay_client* c) {
  if (!c) return -EINVAL;
  return c->impl->FlushAll(true);
}

int iorelay_flush_nowait(iorelay_client* c) {
  if (!c) return -EINVAL;
  return c->impl->FlushAll(true, false);
}

int iorelay_after_fork_child(iorelay_client* c) {
  if (!c) return -EINVAL;
  return c->impl->AfterForkChild();
}

int iorelay_stats_json(iorelay_client* c, int server, char** json_out) {
  if (!c || !json_out) return -EFAULT;
  if (server < 0 || server >= c->impl->server_count()) return -EINVAL;
  iorelay::client::CallReply reply;
  iorelay::client::Outcome r = c->impl->Call(server, {.op = proto::Op::kStats}, &reply);
  if (!r.ok()) return r.NegErrno();
  const std::vector<uint8_t>& payload = reply.payload;
  char* out = static_cast<char*>(std::malloc(payload.size() + 1));
  if (!out) return -ENOMEM;
  std::memcpy(out, payload.data(), payload.size());
  out[payload.size()] = '\0';
  *json_out = out;
  return 0;
}

}  // extern "C"
