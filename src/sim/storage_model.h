// The storage behind the I/O nodes: a parallel file system of data targets with striping, or an
// NFS-like single server. Each target is one server host (its NIC on the simulated network) and
// one src/device DeviceModel (seek + streaming bandwidth, one access at a time).
//
// Why not SimGrid disks: an s4u::Disk shares its bandwidth max-min among concurrent accesses and
// knows no head position, so it cannot charge the seek that separates a merged dispatch from
// scattered small requests (the effect I/O-node scheduling exists for). The device model's
// service time is therefore paid as a sleep of the calling actor until the model's completion
// time; accesses queue in submission order on each target, as on the emulated-disk backend.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "device/device_model.h"
#include "sim/platform.h"
#include "sim/range_tokens.h"

namespace iorelay::sim {

class StorageModel {
 public:
  // `seed` draws each target's run-to-run factor when params.noise_cv > 0.
  // `metadata_servers`: one host per metadata server (StorageParams::metadata_servers), or none.
  StorageModel(const StorageParams& params, std::vector<simgrid::s4u::Host*> servers,
               std::vector<simgrid::s4u::Host*> metadata_servers, uint64_t seed);

  // File `file`'s own layout (lfs setstripe -c -S) in place of the platform's stripe_count and
  // stripe_size; count in [1, targets] and size > 0 (checked by the caller). Set before the run.
  void SetLayout(uint64_t file, int stripe_count, uint64_t stripe_bytes);
  int StripeCount(uint64_t file) const;

  // Whether opens and closes cost anything (a metadata server exists).
  bool has_metadata() const { return !metadata_.empty(); }
  // One metadata call (an open, create, close, stat or unlink), run in the calling actor on
  // behalf of `client` about entry `file` of `directory`: a small message to the server of the
  // directory's stripe that holds the entry, its service (in arrival order), and the answer back.
  // A create also costs storage.stripe_object per stripe of the file's layout.
  // `via`, when given, is the host the messages leave from and return to instead of the client's (a
  // storage gateway forwarding for it). The earliest free of that server's threads takes the call;
  // a create or an unlink also waits for a turn to change the stripe
  // (StorageParams::directory_changes).
  void Metadata(simgrid::s4u::Host* client, simgrid::s4u::Host* via, MetadataOp op,
                uint64_t directory, uint64_t file);
  uint64_t metadata_ops() const { return metadata_ops_; }

  // One file-system call, run in (and blocking) the calling actor on `client`: a write moves its
  // bytes over the network to the targets its stripes live on, then each target serves its
  // part; a read is served first and moved back after. Returns the bytes done (all of them:
  // the model has no failures). The data leave from and return to `via` when given (a storage
  // gateway); locks and tokens still belong to `client`, whose file-system client it is, and
  // `before_write` (the write's data reaching `via`) runs once they are held; `after_transfer`
  // once a write's data have reached the targets, before their service.
  uint64_t Call(simgrid::s4u::Host* client, uint64_t file, bool write, uint64_t offset,
                uint64_t length, simgrid::s4u::Host* via = nullptr,
                const std::function<void()>* before_write = nullptr,
                const std::function<void()>* after_transfer = nullptr);

  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t accesses() const { return accesses_; }  // device accesses over all targets
  uint64_t token_handoffs() const { return token_handoffs_; }
  uint64_t metanode_updates() const { return metanode_updates_; }
  uint64_t range_negotiations() const { return range_negotiations_; }

 private:
  struct Piece {
    int target = 0;
    device::Access access;
  };
  // The call's byte range cut at stripe boundaries, pieces on one target that continue each
  // other in the target's object merged.
  void Split(uint64_t file, bool write, uint64_t offset, uint64_t length,
             std::vector<Piece>* out) const;
  void Transfer(simgrid::s4u::Host* client, bool to_storage, const std::vector<Piece>& pieces);
  // Queues the pieces at their targets and sleeps (the calling actor) until the last is done.
  void Serve(const std::vector<Piece>& pieces);
  struct Token {
    simgrid::s4u::Host* holder = nullptr;
    int active = 0;                                        // the holder's writes in progress
    std::deque<simgrid::s4u::Host*> queue;                 // hosts waiting for it, each once
    std::unordered_map<simgrid::s4u::Host*, int> waiting;  // writes waiting, by host
    int64_t granted_ns = 0;        // when the last handoff reaches its new holder
    simgrid::s4u::MutexPtr mutex;  // SimGrid's condition variables need one
    simgrid::s4u::ConditionVariablePtr changed;
  };
  // Waits, in the calling actor, until `client` holds `file`'s write token (see
  // StorageParams::token_handoff_ns); every AcquireToken is followed by one ReleaseToken.
  void AcquireToken(simgrid::s4u::Host* client, uint64_t file);
  void ReleaseToken(uint64_t file);
  // Moves the token to the first queued host when the holder has no write in progress.
  void HandOffIfIdle(Token& t);
  // StorageParams::metanode_*: makes the first writer of `file` its metanode, or, for a write of
  // `bytes` (its `pieces` at the targets) from another host, sleeps until that write's turn for
  // an update there is over.
  void UpdateMetanode(simgrid::s4u::Host* client, uint64_t file, uint64_t bytes,
                      const std::vector<Piece>& pieces);
  // StorageParams::range_token_ns: waits, in the calling actor, until `client` may write the
  // bytes (a write of another host's over them done, then a negotiation when they are not yet
  // its own); every AcquireRange is followed by one ReleaseRange.
  void AcquireRange(simgrid::s4u::Host* client, uint64_t file, uint64_t offset, uint64_t length);
  void ReleaseRange(simgrid::s4u::Host* client, uint64_t file, uint64_t offset, uint64_t length);
  struct RangeTokenServer {
    FileRangeTokens tokens;
    int64_t busy_until_ns = 0;  // the end of the last negotiation it queued
    simgrid::s4u::MutexPtr mutex;
    simgrid::s4u::ConditionVariablePtr released;  // a write in progress ended
  };
  std::unordered_map<uint64_t, RangeTokenServer> range_tokens_;  // by file
  uint64_t range_negotiations_ = 0;
  struct Metanode {
    simgrid::s4u::Host* host = nullptr;
    int64_t busy_until_ns = 0;  // the end of the last update it queued
  };

  StorageParams params_;
  std::vector<simgrid::s4u::Host*> servers_;
  struct Layout {
    int stripe_count = 1;
    uint64_t stripe_bytes = 0;
  };
  std::unordered_map<uint64_t, Layout> layouts_;  // files with their own layout
  Layout LayoutOf(uint64_t file) const;
  // The channel of `target` that serves `a` (StorageParams::channels).
  device::DeviceModel& ChannelFor(int target, const device::Access& a);

  std::vector<std::vector<device::DeviceModel>> devices_;  // by target, by channel
  uint64_t bytes_written_ = 0;
  uint64_t bytes_read_ = 0;
  uint64_t accesses_ = 0;
  std::vector<simgrid::s4u::Host*> metadata_;  // by metadata server
  // When each metadata server's threads, and each directory stripe's turns to change, are free.
  std::vector<std::vector<int64_t>> metadata_threads_busy_until_ns_;
  std::map<std::pair<uint64_t, uint64_t>, std::vector<int64_t>> directory_busy_until_ns_;
  uint64_t metadata_ops_ = 0;
  std::unordered_map<uint64_t, Token> tokens_;  // by file
  // StorageParams::file_writes_per_client: a semaphore per (client host, file) written.
  std::map<std::pair<simgrid::s4u::Host*, uint64_t>, simgrid::s4u::SemaphorePtr> file_locks_;
  // StorageParams::file_writes: a semaphore per file written.
  std::unordered_map<uint64_t, simgrid::s4u::SemaphorePtr> server_file_locks_;
  uint64_t token_handoffs_ = 0;
  std::unordered_map<uint64_t, Metanode> metanodes_;  // by file
  uint64_t metanode_updates_ = 0;
};

}  // namespace iorelay::sim
