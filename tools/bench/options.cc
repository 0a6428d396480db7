// Parses iorelay-bench's options and derives block size and segment count (see options.h).
#include "options.h"

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>

#include "common/units.h"

namespace iorelay::bench {
namespace {

constexpr uint64_t kDirectAlignBytes = 4096;
constexpr uint64_t kDefaultRequestsPerRank = 16;

Result<double> ParseSeconds(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !(v >= 0)) {
    return Status::InvalidArgument("not a number of seconds >= 0: '" + text + "'");
  }
  return v;
}

Result<uint64_t> ParseCount(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || errno != 0 || *end != '\0') {
    return Status::InvalidArgument("not a non-negative integer: '" + text + "'");
  }
  return static_cast<uint64_t>(v);
}

// Fills block_bytes and segments; checks the sizes against each other and the rank count.
Status Derive(Options& o, bool block_given, bool segments_given, uint32_t ranks) {
  if (o.request_bytes == 0 || o.request_bytes % 8 != 0) {
    return Status::InvalidArgument("--request must be a positive multiple of 8 bytes");
  }
  if (o.odirect && o.request_bytes % kDirectAlignBytes != 0) {
    return Status::InvalidArgument("--odirect needs --request to be a multiple of 4096");
  }
  if (o.layout == Layout::kFilePerProcess && o.spatiality == Spatiality::kStrided) {
    return Status::InvalidArgument("file-per-process is only contiguous");
  }
  if (o.total_bytes != 0 && (block_given || segments_given)) {
    return Status::InvalidArgument("--total excludes --block and --segments");
  }
  const uint64_t per_rank = o.total_bytes / ranks;
  if (o.spatiality == Spatiality::kStrided) {
    if (block_given && o.block_bytes != o.request_bytes) {
      return Status::InvalidArgument("1D-strided means --block equal to --request");
    }
    o.block_bytes = o.request_bytes;
    if (o.total_bytes != 0)
      o.segments = per_rank / o.request_bytes;
    else if (!segments_given)
      o.segments = kDefaultRequestsPerRank;
  } else {
    if (segments_given && o.segments != 1) {
      return Status::InvalidArgument("contiguous means one segment (use --block or --total)");
    }
    o.segments = 1;
    if (o.total_bytes != 0)
      o.block_bytes = per_rank / o.request_bytes * o.request_bytes;
    else if (!block_given)
      o.block_bytes = kDefaultRequestsPerRank * o.request_bytes;
  }
  if (o.segments == 0 || o.block_bytes == 0) {
    return Status::InvalidArgument("--total is smaller than one request per rank");
  }
  if (o.block_bytes % o.request_bytes != 0) {
    return Status::InvalidArgument("--block must be a multiple of --request");
  }
  if (o.ranks_per_node == 0) return Status::InvalidArgument("--ranks-per-node must be >= 1");
  return Status::Ok();
}

}  // namespace

std::string Usage() {
  return "usage: iorelay-bench [--write] [--read] [--verify] [options]   (under mpirun)\n"
         "  --layout fpp|shared          file per process or one shared file (shared)\n"
         "  --spatiality contiguous|strided   1D-strided: block = request (contiguous)\n"
         "  --request SIZE               bytes per pwrite/pread, t (64K)\n"
         "  --block SIZE                 per-rank block per segment, b (16 requests)\n"
         "  --segments N                 segments, s (strided: 16; contiguous: 1)\n"
         "  --total SIZE                 bytes of all ranks together, instead of b and s\n"
         "  --stonewall SECONDS          each rank stops issuing requests after T s (0: none)\n"
         "  --wearout                    then continue to the request count of the fastest rank\n"
         "  --odirect                    open with O_DIRECT (request a multiple of 4096)\n"
         "  --fsync                      fsync before close in the write phase\n"
         "  --ranks-per-node R           ranks per (virtual) node, for the nodes count (1)\n"
         "  --dir DIR --name NAME        files: DIR/NAME, or DIR/NAME.RANK for fpp\n"
         "  --seed N                     data-pattern seed (1)\n"
         "  --keep                       keep the files (default: removed at the end)\n"
         "  --output FILE                JSON result to FILE (default: stdout)\n"
         "  neither --write nor --read: both. Sizes: K, M, G or KiB, MiB, GiB (1024-based),\n"
         "  kB, MB, GB (1000-based).\n"
         "Exit status: 0 ok, 1 I/O error or wrong data, 2 usage.\n";
}

Result<uint64_t> ParseSize(const std::string& text) { return units::ParseBytes(text); }

const char* LayoutName(Layout layout) { return layout == Layout::kShared ? "shared" : "fpp"; }

const char* SpatialityName(Spatiality spatiality) {
  return spatiality == Spatiality::kStrided ? "strided" : "contiguous";
}

Result<Options> ParseOptions(const std::vector<std::string>& args, uint32_t ranks) {
  Options o;
  bool block_given = false, segments_given = false;
  using Setter = std::function<Status(const std::string&)>;
  auto size_into = [](uint64_t* dst, bool* given = nullptr) -> Setter {
    return [dst, given](const std::string& v) {
      auto r = ParseSize(v);
      if (!r.ok()) return r.status();
      *dst = *r;
      if (given) *given = true;
      return Status::Ok();
    };
  };
  const std::map<std::string, Setter> valued = {
      {"--layout",
       [&](const std::string& v) {
         if (v != "fpp" && v != "shared") return Status::InvalidArgument("--layout fpp|shared");
         o.layout = v == "fpp" ? Layout::kFilePerProcess : Layout::kShared;
         return Status::Ok();
       }},
      {"--spatiality",
       [&](const std::string& v) {
         if (v != "contiguous" && v != "strided") {
           return Status::InvalidArgument("--spatiality contiguous|strided");
         }
         o.spatiality = v == "strided" ? Spatiality::kStrided : Spatiality::kContiguous;
         return Status::Ok();
       }},
      {"--request", size_into(&o.request_bytes)},
      {"--block", size_into(&o.block_bytes, &block_given)},
      {"--total", size_into(&o.total_bytes)},
      {"--segments",
       [&](const std::string& v) {
         auto r = ParseCount(v);
         if (!r.ok()) return r.status();
         o.segments = *r;
         segments_given = true;
         return Status::Ok();
       }},
      {"--stonewall",
       [&](const std::string& v) {
         auto r = ParseSeconds(v);
         if (!r.ok()) return r.status();
         o.stonewall_s = *r;
         return Status::Ok();
       }},
      {"--ranks-per-node",
       [&](const std::string& v) {
         auto r = ParseCount(v);
         if (!r.ok() || *r > UINT32_MAX) return Status::InvalidArgument("--ranks-per-node");
         o.ranks_per_node = static_cast<uint32_t>(*r);
         return Status::Ok();
       }},
      {"--seed",
       [&](const std::string& v) {
         auto r = ParseCount(v);
         if (!r.ok()) return r.status();
         o.seed = *r;
         return Status::Ok();
       }},
      {"--dir", [&](const std::string& v) { return o.dir = v, Status::Ok(); }},
      {"--name", [&](const std::string& v) { return o.name = v, Status::Ok(); }},
      {"--output", [&](const std::string& v) { return o.output = v, Status::Ok(); }},
  };
  const std::map<std::string, bool*> flags = {
      {"--write", &o.write}, {"--read", &o.read},       {"--verify", &o.verify},
      {"--keep", &o.keep},   {"--wearout", &o.wearout}, {"--odirect", &o.odirect},
      {"--fsync", &o.fsync}, {"--help", &o.help},
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& key = args[i];
    if (auto f = flags.find(key); f != flags.end()) {
      *f->second = true;
    } else if (auto s = valued.find(key); s != valued.end()) {
      if (i + 1 >= args.size()) return Status::InvalidArgument(key + " needs a value");
      Status st = s->second(args[++i]);
      if (!st.ok()) return Status::InvalidArgument(key + ": " + st.message());
    } else {
      return Status::InvalidArgument("unknown option '" + key + "'");
    }
  }
  if (o.help) return o;
  if (!o.write && !o.read) o.write = o.read = true;
  if (o.wearout && o.stonewall_s == 0) {
    return Status::InvalidArgument("--wearout needs --stonewall");
  }
  if (o.name.empty() || o.name.find('/') != std::string::npos) {
    return Status::InvalidArgument("--name must be a plain file name");
  }
  IORELAY_RETURN_IF_ERROR(Derive(o, block_given, segments_given, ranks));
  return o;
}

}  // namespace iorelay::bench
