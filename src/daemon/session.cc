// Session bookkeeping: handle references and the connection count.
#include "daemon/session.h"

#include <cstring>

#include "common/auth.h"
#include "proto/messages.h"

namespace iorelay::daemon {

std::shared_ptr<OpenFile> Session::Find(uint64_t handle) {
  MutexLock lock(mu_);
  auto it = handles_.find(handle);
  return it == handles_.end() ? nullptr : it->second;
}

bool Session::Insert(uint64_t handle, std::shared_ptr<OpenFile> file, size_t max_open) {
  MutexLock lock(mu_);
  auto it = handles_.find(handle);
  if (it == handles_.end() && handles_.size() + closed_offers_ >= max_open) return false;
  // A new handle counts against the job's share of open files too (EMFILE for this job only).
  if (it == handles_.end() && !job_->TakeFile()) return false;
  if (it != handles_.end()) CountFile(*it->second, -1);
  CountFile(*file, +1);
  handles_[handle] = std::move(file);
  return true;
}

std::shared_ptr<OpenFile> Session::Take(uint64_t handle) {
  MutexLock lock(mu_);
  auto it = handles_.find(handle);
  if (it == handles_.end()) return nullptr;
  std::shared_ptr<OpenFile> file = std::move(it->second);
  handles_.erase(it);
  job_->GiveFile();
  CountFile(*file, -1);
  if (offers_.count(handle) > 0) ++closed_offers_;
  return file;
}

bool Session::Offer(uint64_t handle, std::shared_ptr<OpenFile> file) {
  MutexLock lock(mu_);
  auto& [held, count] = offers_[handle];
  if (count >= kMaxPendingAdopts) return false;
  file->expected_adopts.fetch_add(1);
  held = std::move(file);
  ++count;
  return true;
}

std::shared_ptr<OpenFile> Session::TakeForAdopt(uint64_t handle) {
  MutexLock lock(mu_);
  auto offer = offers_.find(handle);
  if (offer == offers_.end()) {
    auto it = handles_.find(handle);
    return it == handles_.end() ? nullptr : it->second;
  }
  std::shared_ptr<OpenFile> file = offer->second.first;
  if (--offer->second.second == 0) {
    offers_.erase(offer);
    if (handles_.count(handle) == 0) --closed_offers_;
  }
  file->expected_adopts.fetch_sub(1);
  return file;
}

void Session::Clear() {
  std::unordered_map<uint64_t, std::shared_ptr<OpenFile>> dropped;
  std::unordered_map<uint64_t, std::pair<std::shared_ptr<OpenFile>, int>> unadopted;
  {
    MutexLock lock(mu_);
    dropped.swap(handles_);
    for (size_t i = 0; i < dropped.size(); ++i) job_->GiveFile();
    unadopted.swap(offers_);
    closed_offers_ = 0;
    open_files_.clear();
  }
  for (auto& [handle, file] : dropped) file->holders.fetch_sub(1);
  for (auto& [handle, offer] : unadopted) offer.first->expected_adopts.fetch_sub(offer.second);
}

bool Session::HoldsFile(const sched::FileKey& key) {
  MutexLock lock(mu_);
  return open_files_.count({key.dev, key.ino}) > 0;
}

std::shared_ptr<OpenFile> Session::FileOf(const sched::FileKey& key) {
  MutexLock lock(mu_);
  if (open_files_.count({key.dev, key.ino}) == 0) return nullptr;
  for (const auto& [handle, file] : handles_) {
    if (file->key() == key) return file;
  }
  return nullptr;
}

bool Session::HoldsDaemonOffsetFile() {
  MutexLock lock(mu_);
  if (!offers_.empty()) return true;
  for (const auto& [handle, file] : handles_) {
    if (!proto::ClientMayKeepOffset(file->mode(), file->flags()) || !file->Sole()) return true;
  }
  return false;
}

void Session::CountFile(OpenFile& file, int delta) {
  file.holders.fetch_add(delta);
  auto key = std::make_pair(file.key().dev, file.key().ino);
  if ((open_files_[key] += delta) <= 0) open_files_.erase(key);
}

std::shared_ptr<Session> SessionTable::Create(JobPtr job) {
  Nonce random = RandomNonce();
  uint64_t token;
  std::memcpy(&token, random.data(), sizeof token);
  MutexLock lock(mu_);
  uint64_t id = next_session_++;
  auto s = std::make_shared<Session>(id, token, std::move(job));
  s->connections_ = 1;
  sessions_[id] = s;
  return s;
}

Result<std::shared_ptr<Session>> SessionTable::Join(uint64_t id, uint64_t token,
                                                    uint32_t app_index) {
  MutexLock lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second->token() != token ||
      it->second->app_index() != app_index) {
    return Status::PermissionDenied("no such session");
  }
  ++it->second->connections_;
  return it->second;
}

std::shared_ptr<Session> SessionTable::Find(uint64_t id, uint64_t token) {
  MutexLock lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second->token() != token) return nullptr;
  return it->second;
}

bool SessionTable::Leave(const std::shared_ptr<Session>& s) {
  MutexLock lock(mu_);
  if (--s->connections_ > 0) return false;
  sessions_.erase(s->id());
  return true;
}

std::vector<std::shared_ptr<Session>> SessionTable::OfApp(uint32_t app) {
  MutexLock lock(mu_);
  std::vector<std::shared_ptr<Session>> out;
  for (const auto& [id, s] : sessions_) {
    if (s->app_index() == app) out.push_back(s);
  }
  return out;
}

std::vector<std::shared_ptr<Session>> SessionTable::All() {
  MutexLock lock(mu_);
  std::vector<std::shared_ptr<Session>> out;
  for (const auto& [id, s] : sessions_) out.push_back(s);
  return out;
}

}  // namespace iorelay::daemon
