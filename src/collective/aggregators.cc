// The aggregator count rules and the spread of aggregators over nodes (see aggregators.h).
#include "collective/aggregators.h"

#include <algorithm>
#include <cstdint>

namespace iorelay::collective {
namespace {

Status CheckShape(const JobShape& job) {
  if (job.ranks < 1) return Status::InvalidArgument("ranks must be >= 1");
  if (job.ranks_per_node < 1) return Status::InvalidArgument("ranks_per_node must be >= 1");
  if (job.ionodes < 0) return Status::InvalidArgument("ionodes must be >= 0");
  if (job.stripe_count < 1) return Status::InvalidArgument("stripe_count must be >= 1");
  if (job.cb_nodes < 0) return Status::InvalidArgument("cb_nodes must be >= 0");
  if (job.max_per_node < 1) return Status::InvalidArgument("max_per_node must be >= 1");
  if (job.stripe_count > 1 && job.stripe_size_bytes == 0) {
    return Status::InvalidArgument("a striped file (stripe_count > 1) needs stripe_size_bytes");
  }
  if (job.saturation_point_bytes > 0 && job.bytes_per_collective == 0) {
    return Status::InvalidArgument(
        "the saturation point k needs bytes_per_collective (the data of one collective call)");
  }
  return Status::Ok();
}

void Note(std::vector<std::string>* reasons, std::string line) {
  if (reasons != nullptr) reasons->push_back(std::move(line));
}

// The largest a <= count with a | stripes or stripes | a (1 always qualifies).
int32_t AlignToStripes(int32_t count, int32_t stripes) {
  for (int32_t a = count; a > 1; --a) {
    if (stripes % a == 0 || a % stripes == 0) return a;
  }
  return 1;
}

}  // namespace

int32_t NodeCount(const JobShape& job) {
  return (job.ranks + job.ranks_per_node - 1) / job.ranks_per_node;
}

Result<int32_t> AggregatorCount(const JobShape& job, std::vector<std::string>* reasons) {
  IORELAY_RETURN_IF_ERROR(CheckShape(job));
  const int32_t nodes = NodeCount(job);
  int64_t count = 0;
  if (job.cb_nodes > 0) {
    count = job.cb_nodes;
    Note(reasons, "cb_nodes hint: " + std::to_string(count));
  } else if (job.saturation_point_bytes > 0) {
    const uint64_t k = job.saturation_point_bytes;
    const uint64_t wanted = job.bytes_per_collective / k + (job.bytes_per_collective % k != 0);
    count = static_cast<int64_t>(std::min<uint64_t>(wanted, INT32_MAX));  // capped just below
    Note(reasons, "saturation point: ceil(" + std::to_string(job.bytes_per_collective) + " / " +
                      std::to_string(k) + ") = " + std::to_string(count));
  } else {
    count = nodes;
    Note(reasons, "default: one per node (" + std::to_string(nodes) + ")");
  }
  const int64_t cap = std::min<int64_t>(static_cast<int64_t>(nodes) * job.max_per_node, job.ranks);
  if (count > cap) {
    count = cap;
    Note(reasons, "capped at " + std::to_string(cap) + " (" + std::to_string(job.max_per_node) +
                      " per node, " + std::to_string(job.ranks) + " ranks)");
  }
  count = std::max<int64_t>(count, 1);
  auto a = static_cast<int32_t>(count);
  if (job.stripe_count > 1) {
    const int32_t aligned = AlignToStripes(a, job.stripe_count);
    if (aligned != a) {
      Note(reasons, "aligned to " + std::to_string(job.stripe_count) +
                        " stripes: " + std::to_string(aligned));
    }
    return aligned;
  }
  if (job.ionodes > 1 && a >= job.ionodes && a % job.ionodes != 0) {
    const int32_t balanced = a / job.ionodes * job.ionodes;
    Note(reasons, "balanced over " + std::to_string(job.ionodes) +
                      " I/O nodes: " + std::to_string(balanced));
    return balanced;
  }
  return a;
}

std::vector<int32_t> SpreadAggregators(const JobShape& job, int32_t count) {
  const int32_t nodes = NodeCount(job);
  std::vector<int32_t> out;
  if (count < 1 || count > job.ranks) return out;
  if (count <= nodes) {
    for (int32_t i = 0; i < count; ++i) {
      const auto node = static_cast<int32_t>(static_cast<int64_t>(i) * nodes / count);
      out.push_back(node * job.ranks_per_node);
    }
    return out;
  }
  // Round r takes the r-th rank of every node that has one.
  for (int32_t round = 0; static_cast<int32_t>(out.size()) < count; ++round) {
    for (int32_t node = 0; node < nodes && static_cast<int32_t>(out.size()) < count; ++node) {
      const int32_t rank = node * job.ranks_per_node + round;
      if (round < job.ranks_per_node && rank < job.ranks) out.push_back(rank);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int32_t> PackAggregators(const JobShape& job, int32_t count) {
  std::vector<int32_t> out;
  if (count < 1 || count > job.ranks) return out;
  const int32_t per_node = std::min(job.max_per_node, job.ranks_per_node);
  for (int32_t node = 0; node < NodeCount(job) && static_cast<int32_t>(out.size()) < count;
       ++node) {
    for (int32_t i = 0; i < per_node && static_cast<int32_t>(out.size()) < count; ++i) {
      const int32_t rank = node * job.ranks_per_node + i;
      if (rank < job.ranks) out.push_back(rank);
    }
  }
  if (static_cast<int32_t>(out.size()) < count) out.clear();
  return out;
}

Result<AggregatorChoice> ChooseAggregators(const JobShape& job) {
  AggregatorChoice choice;
  Result<int32_t> count = AggregatorCount(job, &choice.reasons);
  if (!count.ok()) return count.status();
  choice.ranks = SpreadAggregators(job, *count);
  return choice;
}

}  // namespace iorelay::collective
