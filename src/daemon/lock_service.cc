// Lock request handling, parking and retry.
#include "daemon/lock_service.h"

#include <algorithm>
#include <iterator>

namespace iorelay::daemon {

void LockService::Complete(Ready* ready) {
  proto::LockReply none;
  none.type = F_UNLCK;
  for (auto& [done, err] : *ready) done(err, none);
}

void LockService::Lock(const proto::LockRequest& req, uint64_t owner, Done done, LockShare share) {
  proto::LockReply reply;
  reply.type = F_UNLCK;
  sched::FileKey key{req.dev, req.ino};
  if (req.type != F_RDLCK && req.type != F_WRLCK && req.type != F_UNLCK) {
    return done(EINVAL, reply);
  }
  Result<LockSpan> span = MakeSpan(req.start, req.length);
  if (!span.ok()) return done(span.status().code(), reply);
  span->owner = owner;
  span->group = share.group;
  span->pid = req.pid;
  span->type = req.type;
  Ready ready;
  int err = 0;
  {
    MutexLock lock(mu_);
    if (req.cmd == F_GETLK) {
      if (req.type == F_UNLCK) {
        err = EINVAL;
      } else if (auto c = manager_.FindConflict(key, *span)) {
        reply.type = c->type;
        reply.start = c->start;
        reply.length = c->end == kLockEof ? 0 : c->end - c->start;
        reply.pid = c->pid;
      }
    } else if ((req.cmd == F_SETLK || req.cmd == F_SETLKW) && req.type != F_UNLCK &&
               (manager_.spans() >= max_spans_ ||
                (share.max_spans != 0 && manager_.spans(share.group) >= share.max_spans))) {
      err = ENOLCK;
    } else if (req.cmd == F_SETLK || req.cmd == F_SETLKW) {
      if (manager_.Apply(key, *span, req.type)) {
        if (req.type == F_UNLCK || req.type == F_RDLCK) RetryLocked(key, &ready);
      } else if (req.cmd == F_SETLK) {
        err = EAGAIN;
      } else {
        std::unordered_set<uint64_t> seen;
        auto& mine = parked_by_owner_[owner];
        if (WouldDeadlockLocked(owner, manager_.ConflictingOwners(key, *span), &seen)) {
          err = EDEADLK;
        } else if (mine.size() >= kMaxParkedPerOwner) {
          err = ENOLCK;
        } else {
          Waiters& waiters = waiters_[key];
          waiters.push_back(Waiter{*span, std::move(done)});
          mine.emplace_back(key, std::prev(waiters.end()));
          return;
        }
        if (mine.empty()) parked_by_owner_.erase(owner);
      }
    } else {
      err = EINVAL;
    }
  }
  Complete(&ready);
  done(err, reply);
}

bool LockService::WouldDeadlockLocked(uint64_t owner, const std::vector<uint64_t>& blockers,
                                      std::unordered_set<uint64_t>* seen) const {
  for (uint64_t b : blockers) {
    if (b == owner) return true;
    if (!seen->insert(b).second) continue;
    auto waits = parked_by_owner_.find(b);
    if (waits == parked_by_owner_.end()) continue;
    for (const auto& [key, w] : waits->second) {
      if (WouldDeadlockLocked(owner, manager_.ConflictingOwners(key, w->span), seen)) {
        return true;
      }
    }
  }
  return false;
}

LockService::Waiters::iterator LockService::Unpark(Waiters& waiters, Waiters::iterator it) {
  auto mine = parked_by_owner_.find(it->span.owner);
  if (mine != parked_by_owner_.end()) {
    // (Iterators of different lists do not compare: the wait's own list first.)
    std::erase_if(mine->second, [&](const auto& parked) REQUIRES(mu_) {
      return &waiters_.at(parked.first) == &waiters && parked.second == it;
    });
    if (mine->second.empty()) parked_by_owner_.erase(mine);
  }
  return waiters.erase(it);
}

void LockService::RetryLocked(const sched::FileKey& key, Ready* ready) {
  auto file = waiters_.find(key);
  if (file == waiters_.end()) return;
  Waiters& waiters = file->second;
  for (auto it = waiters.begin(); it != waiters.end();) {
    if (manager_.Apply(key, it->span, it->span.type)) {
      ready->emplace_back(std::move(it->done), 0);
      it = Unpark(waiters, it);
    } else {
      ++it;
    }
  }
  if (waiters.empty()) waiters_.erase(file);
}

void LockService::UnlockAll(const sched::FileKey& key, uint64_t owner) {
  Ready ready;
  {
    MutexLock lock(mu_);
    manager_.ReleaseFile(key, owner);
    RetryLocked(key, &ready);
  }
  Complete(&ready);
}

void LockService::ReleaseOwner(uint64_t owner) {
  Ready ready;
  {
    MutexLock lock(mu_);
    if (auto mine = parked_by_owner_.find(owner); mine != parked_by_owner_.end()) {
      for (auto& [key, it] : mine->second) {
        ready.emplace_back(std::move(it->done), EINTR);
        auto file = waiters_.find(key);
        file->second.erase(it);
        if (file->second.empty()) waiters_.erase(file);
      }
      parked_by_owner_.erase(mine);
    }
    for (const sched::FileKey& key : manager_.ReleaseOwner(owner)) RetryLocked(key, &ready);
  }
  Complete(&ready);
}

void LockService::CancelAll(int err) {
  Ready ready;
  {
    MutexLock lock(mu_);
    for (auto& [key, waiters] : waiters_) {
      for (Waiter& w : waiters) ready.emplace_back(std::move(w.done), err);
    }
    waiters_.clear();
    parked_by_owner_.clear();
  }
  Complete(&ready);
}

size_t LockService::parked() const {
  MutexLock lock(mu_);
  size_t n = 0;
  for (const auto& [key, waiters] : waiters_) n += waiters.size();
  return n;
}

size_t LockService::spans() const {
  MutexLock lock(mu_);
  return manager_.spans();
}

size_t LockService::spans(uint32_t group) const {
  MutexLock lock(mu_);
  return manager_.spans(group);
}

}  // namespace iorelay::daemon
