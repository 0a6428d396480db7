// A simulated machine as data: network, compute nodes, I/O nodes and storage, read from a JSON
// platform file (platforms/*.json) whose quantities carry units ("10Gbps", "1.5us", "1MiB").
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "device/device_profile.h"

namespace iorelay::sim {

// Star network: every host has its own full-duplex NIC link to one switch, optionally behind a
// shared backbone link; a route is the sender's NIC, the backbone, the receiver's NIC.
struct NetworkParams {
  double latency_s = 1e-6;  // per NIC link
  double backbone_Bps = 0;  // 0: non-blocking switch (no backbone link)
  std::string topology;     // placement topology spec; empty: fattree:1x<nodes>x1
  // With a topology and this bandwidth, the topology's links are the compute side's network
  // (each directed link this bandwidth, network.latency per hop); 0: the star network.
  double link_Bps = 0;
  // Direct access over the topology: the compute nodes reach the storage through this many
  // gateway nodes of the topology (Lustre's LNET routers), a request's data crossing the
  // topology to a gateway and its storage-side NIC from there (sim/network.h); 0: direct access
  // uses the star network, as if the storage hung off every node's NIC.
  int storage_gateways = 0;
  double storage_gateway_nic_Bps = 0;  // each gateway's link towards the storage
};

struct ComputeParams {
  double nic_Bps = 1.25e9;
  int64_t start_jitter_ns = 0;  // each rank starts at a seeded uniform time in [0, jitter]
};

// Where I/O nodes attach to the compute network (sim/ionode_placement.h): one bridge node each,
// spread over the job's nodes; or Blue Gene/Q's two bridge nodes each, 8 per midplane.
enum class IoLayoutKind { kSpread, kBgq };

struct IoNodeParams {
  double nic_Bps = 1.25e9;
  IoLayoutKind layout = IoLayoutKind::kSpread;
  int slots = 4;                    // dispatches in flight per I/O node
  int64_t request_overhead_ns = 0;  // I/O-node CPU per dispatch, before the storage call
  // On a topology: the link between each bridge node and its I/O node (Blue Gene/Q's 11th link
  // of a bridge node), which a write's data cross after reaching the bridge and a read's data
  // before leaving it; 0: none (the I/O node's nic stands for its bridges' links).
  double bridge_link_Bps = 0;
};

enum class StorageKind { kPfs, kNfs };

// What a call to the metadata server does (each costs metadata_service unless its own key says).
enum class MetadataOp { kOpen, kCreate, kClose, kStat, kRemove };
inline constexpr size_t kMetadataOps = 5;
static_assert(static_cast<size_t>(MetadataOp::kRemove) + 1 == kMetadataOps);
// The platform's storage keys of each MetadataOp's own service time (a create is
// metadata_service itself): an open of an existing file, a close, a stat, an unlink.
inline constexpr std::array<const char*, kMetadataOps> kMetadataOpKeys = {
    "metadata_open", nullptr, "metadata_close", "metadata_stat", "metadata_remove"};

struct StorageParams {
  StorageKind kind = StorageKind::kPfs;
  int targets = 1;                  // data targets, one server host each (nfs: 1)
  double nic_Bps = 1.25e9;          // each server's NIC
  uint64_t stripe_bytes = 1 << 20;  // pfs only
  int stripe_count = 1;             // targets per file, <= targets (nfs: 1)
  device::DeviceProfile device;     // every target's service-time model
  // Accesses each target serves at once: each channel is a device of its own (head position and
  // queue), as the queues of an SSD or a virtual disk its host serves in parallel; 1: one at a
  // time.
  int channels = 1;
  // Run-to-run variation: each target's service is slower or faster for a whole run by a seeded
  // log-normal factor of mean 1 and this coefficient of variation (0: every run alike).
  double noise_cv = 0;
  // A metadata server: every rank opens (creates, for file per process) its file before its
  // first request, served one at a time in this time each (0: opens cost nothing).
  int64_t metadata_service_ns = 0;
  // Calls each metadata server serves at once (its service threads; 1: one at a time).
  int metadata_threads = 1;
  // Metadata servers (Lustre's DNE MDTs): directory d lives on server d mod this, as when each
  // new directory goes to the next MDT.
  int metadata_servers = 1;
  // Servers one directory's entries are spread over (DNE's striped directories; <=
  // metadata_servers): an entry goes by a hash of its name to one of the directory's stripes, on
  // servers d, d + 1, ... mod metadata_servers; each stripe changes apart from the others.
  int directory_stripes = 1;
  // Creates and unlinks in one directory in service at once (0: no limit): a directory's lock,
  // which serialises the changes to it where a file system has no parallel directory operations.
  int directory_changes = 0;
  // Each stripe object of a file created (pfs only): a create of a file striped C ways costs
  // C times this more at the metadata server, which allocates and records one object per stripe
  // (Lustre's layout); what makes a small file slower on many stripes. 0: stripes cost nothing.
  int64_t stripe_object_ns = 0;
  // Each call's service at the metadata server where it differs from metadata_service_ns
  // (-1: that), by MetadataOp (kMetadataOpKeys names them).
  std::array<int64_t, kMetadataOps> metadata_op_ns = {-1, -1, -1, -1, -1};
  int64_t MetadataServiceNs(MetadataOp op) const {
    const int64_t own = metadata_op_ns[static_cast<size_t>(op)];
    return own >= 0 ? own : metadata_service_ns;
  }
  // A file's write token (GPFS's: the file's metadata and byte ranges are held by one client
  // node at a time): a write from a client host that does not hold it waits until the holder's
  // writes already at the targets are done, then for a revoke of this duration (one at a time
  // per file), then holds it; the new holder's other writes wait for the same grant. A file
  // written by one client (file per process, or one I/O node) never pays; 0: no tokens.
  int64_t token_handoff_ns = 0;
  // Byte-range write tokens in place of the whole-file one (sim/range_tokens.h, GPFS's): a write
  // outside its host's ranges negotiates with the file's token server, one negotiation at a time
  // per file, for this duration plus as much again for each host that loses bytes to it (its
  // revoke). A host writing one region of a file negotiates once; hosts writing interleaved
  // blocks at nearly every write. 0: no range tokens. Reads take no tokens.
  int64_t range_token_ns = 0;
  // Writes to one file in service at once from one client host (0: no limit): a node's file
  // system client serialises direct writes to a file, as a per-file (inode) lock does, so the
  // processes of a node writing one shared file take turns; a file per process never waits.
  int file_writes_per_client = 0;
  // Writes to one file served at once by the storage, from all clients together (0: no limit):
  // a local file system's per-inode lock, which ext4 takes exclusively for an O_DIRECT write
  // that extends the file, so that such writes to one file go one at a time.
  int file_writes = 0;
  // A shared file's metanode (GPFS's: the one node that keeps a file's inode, to which every
  // other node writing the file sends the new blocks and size it wrote): the first host to write
  // a file is its metanode; each write from another host then waits for one update there, one
  // at a time per file, of metanode_update_ns plus its bytes over metanode_Bps (the blocks it
  // allocated), holding its place among its host's writes to the file. A file written by one
  // host never pays; all three 0: no metanode.
  int64_t metanode_update_ns = 0;
  double metanode_Bps = 0;  // 0: no part by size
  // The update also lasts this share of the write's own time at the targets (the device's time
  // to move its pieces, no seek): an update that redoes part of the write's work (the revoked
  // holder flushing the range, the metanode committing the blocks), so its cost follows the
  // device's time by request size, not the bytes alone. 0: no such part.
  double metanode_share = 0;
  bool has_metanode() const {
    return metanode_update_ns > 0 || metanode_Bps > 0 || metanode_share > 0;
  }
};

// Whose cores the charges run on: one pool for the whole machine (this machine, or the
// testbed's namespaces on it), or a pool per compute node and per I/O node (a cluster).
enum class CpuScope { kMachine, kNode };

// Processor time per request on pools of `cores` (sim/cpu_pool.h); cores 0: no CPU model,
// requests cost no processor time.
struct CpuParams {
  int cores = 0;
  CpuScope scope = CpuScope::kMachine;
  int64_t direct_call_ns = 0;      // a rank's own file-system call (direct access)
  int64_t forward_request_ns = 0;  // the client library's part of a forwarded request
  double copy_Bps = 0;             // a forwarded request's data copied once at this rate (0: free)
  int64_t ionode_request_ns = 0;   // the I/O node's part of each request (receive, queue, reply)
  int64_t ionode_call_ns = 0;      // the I/O node's file-system call, per call of a dispatch
};

// One call size of a measured forwarding ladder (bench/collective_forwarding.py): the median
// write bandwidth through one I/O node over the median direct, and its Mann-Whitney p.
struct ForwardingStep {
  uint64_t bytes_per_call = 0;
  double ratio = 0;
  double p = 1;
  int64_t runs = 0;  // per side
};

struct ForwardingLadder {
  std::vector<ForwardingStep> steps;
  std::string source;  // the calibration pattern's runs: bench, date, file
};

// Collective MPI-IO facts of a machine, measured (bench/collective_saturation.py); read by the
// advisor (python/iorelay/collective_advice.py) and by iorelay-sim-collective --measured-k. 0: not
// measured.
struct CollectiveParams {
  uint64_t saturation_point_bytes = 0;  // k: bytes per aggregator at which a write saturates
  // k measured with each MPI-IO implementation (ompio, romio321, mpich): each writes through
  // its aggregators its own way, so k is a property of the machine and the MPI. The advisor
  // takes the job's MPI's k from here and saturation_point when its MPI has none.
  std::map<std::string, uint64_t> saturation_point_by_mpi;
  // Per MPI, the bytes per collective call from which one aggregator per host wrote faster
  // than one aggregator (bench/collective_spread.py); read by the advisor only.
  std::map<std::string, uint64_t> spread_point_by_mpi;
  // The same measured with interleaved calls (several requests per rank per call, through a
  // view: bench/collective_spread.py --interleaved), which the advisor uses for such jobs.
  // 0: one aggregator per host was at least as fast at every call size measured.
  std::map<std::string, uint64_t> spread_point_interleaved_by_mpi;
  // Per MPI, what forwarding through one I/O node cost collective writes on a calibration
  // pattern; the advisor sends a job direct where its calls lost significantly.
  std::map<std::string, ForwardingLadder> forwarding_by_mpi;
};

// The measured k for `mpi` ("" for none in particular): its own from saturation_point_by_mpi,
// else saturation_point. An unknown MPI, or no k measured, is an error naming the keys and the
// bench that measures it: never a default.
Result<uint64_t> MeasuredSaturationPoint(const CollectiveParams& collective,
                                         const std::string& mpi);

struct Platform {
  std::string name;
  NetworkParams network;
  ComputeParams compute;
  IoNodeParams ionode;
  StorageParams storage;
  CpuParams cpu;
  CollectiveParams collective;
};

// Parses a platform document. Every key is checked: an unknown key, a missing required value or
// a bad unit is an InvalidArgument naming the key and the valid choices. "comment" and
// "sources" are allowed anywhere and ignored.
Result<Platform> ParsePlatform(const nlohmann::json& doc);
// Reads and parses a file; errors are prefixed with the path.
Result<Platform> LoadPlatform(const std::string& path);
// The effective platform, defaults filled in, units written back as strings.
nlohmann::json ToJson(const Platform& p);

}  // namespace iorelay::sim
