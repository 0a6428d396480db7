// Striping as Lustre lays a file out: stripe k of a file whose first target is f mod S lives on
// target (f + k mod count) mod S, at object offset (k / count) * stripe + (offset mod stripe).
#include "sim/storage_model.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

StorageModel::StorageModel(const StorageParams& params, std::vector<sg4::Host*> servers,
                           sg4::Host* metadata_server, uint64_t seed)
    : params_(params), servers_(std::move(servers)), metadata_(metadata_server) {
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
    }
    devices_.emplace_back(profile);
  }
}

void StorageModel::Split(uint64_t file, uint64_t offset, uint64_t length,
                         std::vector<Piece>* out) const {
  out->clear();
  const uint64_t stripe = params_.stripe_bytes;
  const uint64_t count = static_cast<uint64_t>(params_.stripe_count);
  const uint64_t targets = servers_.size();
  const uint64_t end = offset + length;
  for (uint64_t at = offset; at < end;) {
    const uint64_t k = at / stripe;
    const uint64_t piece_end = std::min(end, (k + 1) * stripe);
    Piece p;
    p.target = static_cast<int>((file + k % count) % targets);
    p.access = {file, (k / count) * stripe + at % stripe, piece_end - at};
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
    done_ns = std::max(done_ns, devices_[p.target].Submit(now_ns, p.access));
    ++accesses_;
  }
  if (done_ns > now_ns) sg4::this_actor::sleep_until(static_cast<double>(done_ns) * 1e-9);
}

void StorageModel::Open(sg4::Host* client) {
  if (metadata_ == nullptr) return;
  constexpr uint64_t kMetadataMessageBytes = 256;  // a path and attributes, each way
  sg4::Comm::sendto(client, metadata_, kMetadataMessageBytes);
  const int64_t now_ns = std::llround(sg4::Engine::get_clock() * 1e9);
  const int64_t start_ns = std::max(now_ns, metadata_busy_until_ns_);
  metadata_busy_until_ns_ = start_ns + params_.metadata_service_ns;
  ++metadata_ops_;
  sg4::this_actor::sleep_until(static_cast<double>(metadata_busy_until_ns_) * 1e-9);
  sg4::Comm::sendto(metadata_, client, kMetadataMessageBytes);
}

void StorageModel::AcquireToken(sg4::Host* client, uint64_t file) {
  Token& token = tokens_[file];
  if (token.holder == client) return;
  if (token.holder == nullptr) {  // the first writer gets the token from the manager at once
    token.holder = client;
    return;
  }
  // The revoke is granted now (the handoffs of a file queue in request order); a writer of the
  // old holder that arrives meanwhile pays to get it back, as GPFS's token ping-pong does.
  const int64_t now_ns = std::llround(sg4::Engine::get_clock() * 1e9);
  token.busy_until_ns = std::max(now_ns, token.busy_until_ns) + params_.token_handoff_ns;
  token.holder = client;
  ++token_handoffs_;
  sg4::this_actor::sleep_until(static_cast<double>(token.busy_until_ns) * 1e-9);
}

uint64_t StorageModel::Call(sg4::Host* client, uint64_t file, bool write, uint64_t offset,
                            uint64_t length) {
  std::vector<Piece> pieces;
  Split(file, offset, length, &pieces);
  if (write) {
    if (params_.token_handoff_ns > 0) AcquireToken(client, file);
    Transfer(client, /*to_storage=*/true, pieces);
    Serve(pieces);
    bytes_written_ += length;
  } else {
    Serve(pieces);
    Transfer(client, /*to_storage=*/false, pieces);
    bytes_read_ += length;
  }
  return length;
}

}  // namespace iorelay::sim
