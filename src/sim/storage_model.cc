// Striping as Lustre lays a file out: stripe k of a file whose first target is f mod S lives on
// target (f + k mod count) mod S, at object offset (k / count) * stripe + (offset mod stripe).
#include "sim/storage_model.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include "common/mix64.h"

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

StorageModel::StorageModel(const StorageParams& params, std::vector<sg4::Host*> servers,
                           std::vector<sg4::Host*> metadata_servers, uint64_t seed)
    : params_(params),
      servers_(std::move(servers)),
      metadata_(std::move(metadata_servers)),
      metadata_threads_busy_until_ns_(
          metadata_.size(), std::vector<int64_t>(static_cast<size_t>(params_.metadata_threads))) {
  // Log-normal with mean 1 and coefficient of variation cv: sigma^2 = ln(1 + cv^2), mu =
  // -sigma^2/2.
  const double sigma = std::sqrt(std::log1p(params_.noise_cv * params_.noise_cv));
  std::mt19937_64 rng(seed ^ 0x5eed5eed5eed5eedull);
  std::normal_distribution<double> normal(-sigma * sigma / 2, sigma);
  devices_.reserve(servers_.size());
  for (size_t i = 0; i < servers_.size(); ++i) {
    device::DeviceProfile profile = params_.device;
    if (params_.noise_cv > 0) {
      const double slowdown = std::exp(normal(rng));
      profile.bytes_per_s /= slowdown;
      profile.seek_ns = std::llround(static_cast<double>(profile.seek_ns) * slowdown);
      profile.write_ns = std::llround(static_cast<double>(profile.write_ns) * slowdown);
      for (auto& point : profile.access_ns) {
        point.second = std::llround(static_cast<double>(point.second) * slowdown);
      }
    }
    // Every channel of a target has the target's factor (one device, several queues).
    devices_.emplace_back(static_cast<size_t>(params_.channels), device::DeviceModel(profile));
  }
}

device::DeviceModel& StorageModel::ChannelFor(int target, const device::Access& a) {
  std::vector<device::DeviceModel>& channels = devices_[target];
  // A stream stays on the channel it continues (no seek); otherwise the first free one takes it.
  for (device::DeviceModel& c : channels) {
    if (c.Continues(a)) return c;
  }
  return *std::min_element(channels.begin(), channels.end(), [](const auto& x, const auto& y) {
    return x.busy_until_ns() < y.busy_until_ns();
  });
}

void StorageModel::SetLayout(uint64_t file, int stripe_count, uint64_t stripe_bytes) {
  layouts_[file] = {stripe_count, stripe_bytes};
}

StorageModel::Layout StorageModel::LayoutOf(uint64_t file) const {
  auto it = layouts_.find(file);
  return it != layouts_.end() ? it->second : Layout{params_.stripe_count, params_.stripe_bytes};
}

int StorageModel::StripeCount(uint64_t file) const { return LayoutOf(file).stripe_count; }

void StorageModel::Split(uint64_t file, bool write, uint64_t offset, uint64_t length,
                         std::vector<Piece>* out) const {
  out->clear();
  const Layout layout = LayoutOf(file);
  const uint64_t stripe = layout.stripe_bytes;
  const uint64_t count = static_cast<uint64_t>(layout.stripe_count);
  const uint64_t targets = servers_.size();
  const uint64_t end = offset + length;
  for (uint64_t at = offset; at < end;) {
    const uint64_t k = at / stripe;
    const uint64_t piece_end = std::min(end, (k + 1) * stripe);
    Piece p;
    p.target = static_cast<int>((file + k % count) % targets);
    p.access = {file, (k / count) * stripe + at % stripe, piece_end - at, write};
    auto same = std::find_if(out->begin(), out->end(), [&](const Piece& q) {
      return q.target == p.target && q.access.offset + q.access.length == p.access.offset;
    });
    if (same != out->end()) {
      same->access.length += p.access.length;
    } else {
      out->push_back(p);
    }
    at = piece_end;
  }
}

void StorageModel::Transfer(sg4::Host* client, bool to_storage, const std::vector<Piece>& pieces) {
  std::vector<uint64_t> per_target(servers_.size(), 0);
  for (const Piece& p : pieces) per_target[p.target] += p.access.length;
  std::vector<sg4::CommPtr> comms;
  for (size_t t = 0; t < per_target.size(); ++t) {
    if (per_target[t] == 0) continue;
    comms.push_back(to_storage ? sg4::Comm::sendto_async(client, servers_[t], per_target[t])
                               : sg4::Comm::sendto_async(servers_[t], client, per_target[t]));
  }
  sg4::Comm::wait_all(comms);
}

void StorageModel::Serve(const std::vector<Piece>& pieces) {
  const int64_t now_ns = std::llround(sg4::Engine::get_clock() * 1e9);
  int64_t done_ns = now_ns;
  for (const Piece& p : pieces) {
    done_ns = std::max(done_ns, ChannelFor(p.target, p.access).Submit(now_ns, p.access));
    ++accesses_;
  }
  if (done_ns > now_ns) sg4::this_actor::sleep_until(static_cast<double>(done_ns) * 1e-9);
}

void StorageModel::Metadata(sg4::Host* client, sg4::Host* via, MetadataOp op, uint64_t directory,
                            uint64_t file) {
  if (metadata_.empty()) return;
  constexpr uint64_t kMetadataMessageBytes = 256;  // a path and attributes, each way
  if (via != nullptr) client = via;
  const uint64_t stripes = static_cast<uint64_t>(params_.directory_stripes);
  // A hash of the name picks its stripe: any well-mixed function spreads entries evenly, as the
  // file system's name hash does.
  const uint64_t stripe = stripes > 1 ? Mix64(file + kGoldenGamma) % stripes : 0;
  const size_t server = (directory + stripe) % metadata_.size();
  sg4::Comm::sendto(client, metadata_[server], kMetadataMessageBytes);
  // Calls are placed in arrival order: each takes its server's thread free first, and a
  // directory change the directory's turn free first, and starts when both are.
  const int64_t now_ns = std::llround(sg4::Engine::get_clock() * 1e9);
  std::vector<int64_t>& threads = metadata_threads_busy_until_ns_[server];
  int64_t* thread = &*std::min_element(threads.begin(), threads.end());
  int64_t start_ns = std::max(now_ns, *thread);
  int64_t* turn = nullptr;
  if ((op == MetadataOp::kCreate || op == MetadataOp::kRemove) && params_.directory_changes > 0) {
    std::vector<int64_t>& turns = directory_busy_until_ns_[{directory, stripe}];
    if (turns.empty()) turns.assign(static_cast<size_t>(params_.directory_changes), 0);
    turn = &*std::min_element(turns.begin(), turns.end());
    start_ns = std::max(start_ns, *turn);
  }
  int64_t service_ns = params_.MetadataServiceNs(op);
  if (op == MetadataOp::kCreate) service_ns += params_.stripe_object_ns * StripeCount(file);
  const int64_t end_ns = start_ns + service_ns;
  *thread = end_ns;
  if (turn != nullptr) *turn = end_ns;
  ++metadata_ops_;
  sg4::this_actor::sleep_until(static_cast<double>(end_ns) * 1e-9);
  sg4::Comm::sendto(metadata_[server], client, kMetadataMessageBytes);
}

// A file's token: its holder host's writes run together; another host's write queues the host
// (each host once, in arrival order) and the holder's later writes queue behind it, so the
// token moves once the holder's writes in progress are done, and comes back in turn.
void StorageModel::AcquireToken(sg4::Host* client, uint64_t file) {
  Token& t = tokens_[file];
  if (!t.mutex) {
    t.mutex = sg4::Mutex::create();
    t.changed = sg4::ConditionVariable::create();
  }
  std::unique_lock lock(*t.mutex);
  if (t.holder == nullptr) t.holder = client;  // the first writer gets it from the manager
  auto queued = [&] { return std::find(t.queue.begin(), t.queue.end(), client) != t.queue.end(); };
  if (t.holder == client && t.queue.empty()) {
    ++t.active;
  } else {  // wait for a handoff to this host, which counts this write as in progress
    if (!queued()) t.queue.push_back(client);
    ++t.waiting[client];
    HandOffIfIdle(t);
    t.changed->wait(lock, [&] { return t.holder == client && !queued(); });
    --t.waiting[client];
  }
  const int64_t granted_ns = t.granted_ns;
  lock.unlock();
  if (static_cast<double>(granted_ns) * 1e-9 > sg4::Engine::get_clock()) {
    sg4::this_actor::sleep_until(static_cast<double>(granted_ns) * 1e-9);
  }
}

void StorageModel::ReleaseToken(uint64_t file) {
  Token& t = tokens_[file];
  std::unique_lock lock(*t.mutex);
  --t.active;
  HandOffIfIdle(t);
}

void StorageModel::HandOffIfIdle(Token& t) {
  if (t.active > 0 || t.queue.empty()) return;
  const int64_t now_ns = std::llround(sg4::Engine::get_clock() * 1e9);
  t.holder = t.queue.front();
  t.queue.pop_front();
  // The new holder's waiting writes are in progress from now on, before they next run: a host
  // queueing meanwhile must not see an idle token and take it from them.
  t.active = t.waiting[t.holder];
  t.granted_ns = std::max(now_ns, t.granted_ns) + params_.token_handoff_ns;
  ++token_handoffs_;
  t.changed->notify_all();
}

void StorageModel::AcquireRange(sg4::Host* client, uint64_t file, uint64_t offset,
                                uint64_t length) {
  RangeTokenServer& server = range_tokens_[file];
  if (!server.mutex) {
    server.mutex = sg4::Mutex::create();
    server.released = sg4::ConditionVariable::create();
  }
  std::unique_lock lock(*server.mutex);
  FileRangeTokens::Outcome outcome;
  while ((outcome = server.tokens.Acquire(client, offset, length)) ==
         FileRangeTokens::Outcome::kBlocked) {
    server.released->wait(lock);
  }
  if (outcome == FileRangeTokens::Outcome::kHeld) return;
  // The negotiation and its revokes, queued behind the file's earlier ones.
  const int64_t now_ns = std::llround(sg4::Engine::get_clock() * 1e9);
  server.busy_until_ns = std::max(now_ns, server.busy_until_ns) +
                         params_.range_token_ns * (1 + server.tokens.revoked());
  const int64_t granted_ns = server.busy_until_ns;
  ++range_negotiations_;
  lock.unlock();
  sg4::this_actor::sleep_until(static_cast<double>(granted_ns) * 1e-9);
}

void StorageModel::ReleaseRange(sg4::Host* client, uint64_t file, uint64_t offset,
                                uint64_t length) {
  RangeTokenServer& server = range_tokens_[file];
  std::unique_lock lock(*server.mutex);
  server.tokens.Release(client, offset, length);
  server.released->notify_all();
}

void StorageModel::UpdateMetanode(sg4::Host* client, uint64_t file, uint64_t bytes,
                                  const std::vector<Piece>& pieces) {
  Metanode& m = metanodes_[file];
  if (m.host == nullptr) m.host = client;
  if (m.host == client) return;
  const int64_t now_ns = std::llround(sg4::Engine::get_clock() * 1e9);
  int64_t update_ns = params_.metanode_update_ns;
  if (params_.metanode_Bps > 0) {
    update_ns += std::llround(static_cast<double>(bytes) * 1e9 / params_.metanode_Bps);
  }
  if (params_.metanode_share > 0) {
    double device_ns = 0;
    for (const Piece& p : pieces) device_ns += device::TransferNs(params_.device, p.access.length);
    update_ns += std::llround(params_.metanode_share * device_ns);
  }
  m.busy_until_ns = std::max(now_ns, m.busy_until_ns) + update_ns;
  ++metanode_updates_;
  sg4::this_actor::sleep_until(static_cast<double>(m.busy_until_ns) * 1e-9);
}

uint64_t StorageModel::Call(sg4::Host* client, uint64_t file, bool write, uint64_t offset,
                            uint64_t length, sg4::Host* via,
                            const std::function<void()>* before_write,
                            const std::function<void()>* after_transfer) {
  sg4::Host* nic = via != nullptr ? via : client;
  std::vector<Piece> pieces;
  Split(file, write, offset, length, &pieces);
  if (write) {
    simgrid::s4u::SemaphorePtr file_lock;
    if (params_.file_writes_per_client > 0) {
      auto& lock = file_locks_[{client, file}];
      if (!lock) lock = sg4::Semaphore::create(params_.file_writes_per_client);
      file_lock = lock;
      file_lock->acquire();
    }
    if (params_.token_handoff_ns > 0) AcquireToken(client, file);
    if (params_.range_token_ns > 0) AcquireRange(client, file, offset, length);
    if (before_write != nullptr) (*before_write)();
    Transfer(nic, /*to_storage=*/true, pieces);
    if (after_transfer != nullptr) (*after_transfer)();
    if (params_.file_writes > 0) {
      auto& lock = server_file_locks_[file];
      if (!lock) lock = sg4::Semaphore::create(params_.file_writes);
      lock->acquire();
      Serve(pieces);
      lock->release();
    } else {
      Serve(pieces);
    }
    if (params_.has_metanode()) UpdateMetanode(client, file, length, pieces);
    if (params_.range_token_ns > 0) ReleaseRange(client, file, offset, length);
    if (params_.token_handoff_ns > 0) ReleaseToken(file);
    if (file_lock) file_lock->release();
    bytes_written_ += length;
  } else {
    Serve(pieces);
    Transfer(nic, /*to_storage=*/false, pieces);
    bytes_read_ += length;
  }
  return length;
}

}  // namespace iorelay::sim
