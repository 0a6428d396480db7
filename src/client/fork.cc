// After fork, the child gets its own sessions and adopts the parent's handles, so parent
// and child keep sharing file offsets (POSIX) without ever sharing a socket.
#include <sys/syscall.h>
#include <unistd.h>

#include <new>

#include "client/client.h"

namespace iorelay::client {

int Client::AfterForkChild() {
  // Only the forking thread exists in the child: locks held by others are re-created.
  new (&files_mu_) Mutex();
  // Record locks are not inherited across fork; the anchors are the parent's handles.
  new (&locks_mu_) Mutex();
  new (&map_mu_) Mutex();
  locks_.clear();
  // The parent's flusher thread is not in this process; the next buffered write starts one.
  new (&flusher_mu_) Mutex();
  new (&flusher_cv_) CondVar();
  (void)flusher_.release();
  flusher_pid_.store(0);
  fork_hold_.store(0);
  sweeping_.store(false);
  for (iorelay_file* f : files_) {
    if (f->buffers) new (&f->buffers->mu) Mutex();
  }
  uint32_t pid = static_cast<uint32_t>(syscall(SYS_getpid));
  std::vector<SessionInfo> parents;
  for (auto& s : servers_) parents.push_back(s->ForgetAfterFork(pid));
  for (iorelay_file* f : files_) new (&f->direct_mu) Mutex();

  int result = 0;
  for (int i = 0; i < server_count(); ++i) {
    proto::AdoptRequest req;
    req.parent_session = parents[i].session;
    req.parent_token = parents[i].token;
    std::vector<iorelay_file*> adopted;
    for (iorelay_file* f : files_) {
      if (f->server != i || f->direct_fd.load() >= 0) continue;
      if (f->generation == 0 || f->generation != parents[i].generation) continue;  // stale
      req.handles.push_back(f->handle);
      adopted.push_back(f);
    }
    if (adopted.empty()) continue;
    Outcome r = CallMsg<proto::AdoptRequest, proto::Empty>(i, proto::Op::kAdopt, req, nullptr);
    if (!r.ok()) {
      result = r.NegErrno();  // those files stay with the parent's session: later calls give EIO
      continue;
    }
    uint64_t generation = servers_[i]->session().generation;
    for (iorelay_file* f : adopted) f->generation = generation;
  }
  return result;
}

}  // namespace iorelay::client
