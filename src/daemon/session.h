// Sessions: one per client process. Its connections share its handles, its locks and its
// application's accounting; it ends when its last connection goes.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "daemon/jobs.h"
#include "daemon/open_file.h"

namespace iorelay::daemon {

struct AppStats;

class Session {
 public:
  Session(uint64_t id, uint64_t token, JobPtr job) : id_(id), token_(token), job_(std::move(job)) {}

  uint64_t id() const { return id_; }
  uint64_t token() const { return token_; }
  // The job whose credential opened the session: its application, its roots, its shares.
  const Job& job() const { return *job_; }
  const JobPtr& job_ptr() const { return job_; }
  uint32_t app_index() const { return job_->app(); }
  const std::string& app() const { return job_->name(); }
  AppStats* stats() const { return job_->stats(); }
  // The session's view of the files: its job's roots only (EACCES outside them).
  Result<Mapped> Map(const std::string& client_path) const {
    return job_->exports().Map(client_path);
  }

  // The open file behind `handle`, or null when this session holds no such handle.
  std::shared_ptr<OpenFile> Find(uint64_t handle);
  // Adds a handle unless the session already holds `max_open` of them (then false: EMFILE).
  bool Insert(uint64_t handle, std::shared_ptr<OpenFile> file, size_t max_open);
  // Takes the handle out of the session and returns its file; null when it held none (EBADF).
  std::shared_ptr<OpenFile> Take(uint64_t handle);
  // kExpectAdopt: a forked child of this process will adopt `handle`. The announcement holds
  // the file, so that it stays open when this process closes its handle before the child has
  // adopted it (as a forked child's copy of a descriptor outlives the parent's close), until
  // the child adopts it or this session ends. Counted in the file's expected_adopts. A handle
  // closed while announced still counts against the session's open files (Insert); false,
  // nothing announced, when `handle` already has kMaxPendingAdopts announcements pending.
  bool Offer(uint64_t handle, std::shared_ptr<OpenFile> file);
  static constexpr int kMaxPendingAdopts = 1024;
  // kAdopt: the file behind `handle`, spending one announcement of it if there is one, else
  // the session's own handle; null when there is neither.
  std::shared_ptr<OpenFile> TakeForAdopt(uint64_t handle);
  // Drops every reference and announcement (the session ended).
  void Clear();
  // Whether the session holds a handle on the file (record locks are taken only on those).
  bool HoldsFile(const sched::FileKey& key);
  // One of the session's open files on `key`, or null (a relay opens it upstream for locks).
  std::shared_ptr<OpenFile> FileOf(const sched::FileKey& key);
  // Whether the session holds a file whose offset only this daemon keeps (O_APPEND, not a
  // regular file, or a description shared with another session or announced for adoption):
  // its client cannot move it to another daemon, so a release waits for it to close.
  bool HoldsDaemonOffsetFile();

 private:
  friend class SessionTable;
  const uint64_t id_;
  const uint64_t token_;
  const JobPtr job_;
  Mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<OpenFile>> handles_ GUARDED_BY(mu_);
  // Announced adoptions not yet made: the file and how many children will adopt it.
  std::unordered_map<uint64_t, std::pair<std::shared_ptr<OpenFile>, int>> offers_ GUARDED_BY(mu_);
  size_t closed_offers_ GUARDED_BY(mu_) = 0;  // offers_ whose handle is no longer in handles_
  // How many of handles_ are on each file (dev, ino).
  std::map<std::pair<uint64_t, uint64_t>, int> open_files_ GUARDED_BY(mu_);
  // Counts a handle on `file` in or out (open_files_ and the file's holders).
  void CountFile(OpenFile& file, int delta) REQUIRES(mu_);
  // Guarded by the SessionTable's mu_ (another object's lock, which no annotation can name).
  int connections_ = 0;
};

class SessionTable {
 public:
  // A new session of `job` with one connection.
  std::shared_ptr<Session> Create(JobPtr job);
  // One more connection for an existing session; EACCES when the id, token or app do not
  // match a live session.
  Result<std::shared_ptr<Session>> Join(uint64_t id, uint64_t token, uint32_t app_index);
  // A live session proven by its token (kAdopt), without joining it.
  std::shared_ptr<Session> Find(uint64_t id, uint64_t token);
  // A connection of `s` went away. True when it was the last one: the session is gone from
  // the table and the caller releases its handles and locks.
  bool Leave(const std::shared_ptr<Session>& s);
  uint64_t NewHandleId() { return next_handle_.fetch_add(1, std::memory_order_relaxed); }
  // Every live session of the job with application id `app`.
  std::vector<std::shared_ptr<Session>> OfApp(uint32_t app);
  // Every live session (shutdown).
  std::vector<std::shared_ptr<Session>> All();

 private:
  Mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<Session>> sessions_ GUARDED_BY(mu_);
  uint64_t next_session_ GUARDED_BY(mu_) = 1;
  std::atomic<uint64_t> next_handle_{1};
};

}  // namespace iorelay::daemon
