// Flag parsing for iorelay-sim: the iorelay-bench pattern flags plus the machine's choices.
#include "sim/sim_options.h"

#include <fmt/format.h>

#include <charconv>
#include <functional>
#include <map>

#include "common/units.h"
#include "placement/policy.h"

namespace iorelay::sim {
namespace {

Result<uint64_t> ParseCount(const std::string& flag, const std::string& text, uint64_t min) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min) {
    return Status::InvalidArgument(
        fmt::format("{} expects an integer >= {}, got '{}'", flag, min, text));
  }
  return value;
}

}  // namespace

std::string SimUsage() {
  return fmt::format(
      "usage: iorelay-sim --platform FILE [options]\n"
      "Simulates one run of an iorelay-bench pattern on SimGrid (the real schedulers, dispatch\n"
      "core and placement policies) and prints one JSON result on stdout.\n"
      "  --platform FILE      platform JSON (platforms/*.json)\n"
      "  --layout L           fpp | shared (default shared)\n"
      "  --spatiality S       contiguous | strided (default contiguous)\n"
      "  --operation OP       write | read (default write)\n"
      "  --request SIZE       bytes per request (default 64K)\n"
      "  --block SIZE         contiguous bytes per rank (contiguous; default 16 requests)\n"
      "  --segments N         strided segments (default 16)\n"
      "  --total SIZE         all ranks together (excludes --block, --segments)\n"
      "  --odirect            O_DIRECT requests (multiples of 4096; merge only with each other)\n"
      "  --ranks N            processes (default 1)\n"
      "  --nodes N            compute nodes, ranks in blocks (default 1)\n"
      "  --ionodes K          I/O nodes; 0 = direct access to the storage (default 0)\n"
      "  --scheduler SPEC     I/O-node scheduler, e.g. aioli:quantum=64KiB (default fifo)\n"
      "  --placement P        compute node to I/O node: {} (default block)\n"
      "  --seed N             seed of the ranks' start jitter (default 1)\n"
      "  --help, --version\n",
      fmt::join(placement::PolicyNames(), ", "));
}

Result<SimOptions> ParseSimOptions(const std::vector<std::string>& args) {
  SimOptions o;
  RunConfig& c = o.run;
  std::string platform_path;
  using Handler = std::function<Status(const std::string&)>;
  auto size_into = [](uint64_t* out) -> Handler {
    return [out](const std::string& v) {
      auto r = units::ParseBytes(v);
      if (!r.ok()) return r.status();
      *out = *r;
      return Status::Ok();
    };
  };
  auto count_into = [](const char* flag, uint64_t min, auto* out) -> Handler {
    return [flag, min, out](const std::string& v) {
      auto r = ParseCount(flag, v, min);
      if (!r.ok()) return r.status();
      *out = static_cast<std::remove_pointer_t<decltype(out)>>(*r);
      return Status::Ok();
    };
  };
  const std::map<std::string, Handler> with_value = {
      {"--platform",
       [&](const std::string& v) {
         platform_path = v;
         return Status::Ok();
       }},
      {"--layout",
       [&](const std::string& v) {
         auto r = ParseLayout(v);
         if (!r.ok()) return r.status();
         c.pattern.layout = *r;
         return Status::Ok();
       }},
      {"--spatiality",
       [&](const std::string& v) {
         auto r = ParseSpatiality(v);
         if (!r.ok()) return r.status();
         c.pattern.spatiality = *r;
         return Status::Ok();
       }},
      {"--operation",
       [&](const std::string& v) {
         if (v != "write" && v != "read") {
           return Status::InvalidArgument("--operation '" + v + "' unknown (valid: write, read)");
         }
         c.pattern.write = v == "write";
         return Status::Ok();
       }},
      {"--request", size_into(&c.pattern.request_bytes)},
      {"--block", size_into(&c.pattern.block_bytes)},
      {"--total", size_into(&c.pattern.total_bytes)},
      {"--segments", count_into("--segments", 1, &c.pattern.segments)},
      {"--ranks", count_into("--ranks", 1, &c.pattern.ranks)},
      {"--nodes", count_into("--nodes", 1, &c.pattern.nodes)},
      {"--ionodes", count_into("--ionodes", 0, &c.ionodes)},
      {"--scheduler",
       [&](const std::string& v) {
         c.scheduler = v;
         return Status::Ok();
       }},
      {"--placement",
       [&](const std::string& v) {
         c.placement = v;
         return Status::Ok();
       }},
      {"--seed", count_into("--seed", 0, &c.seed)},
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      o.help = true;
      return o;
    }
    if (flag == "--odirect") {
      c.pattern.odirect = true;
      continue;
    }
    auto it = with_value.find(flag);
    if (it == with_value.end()) {
      return Status::InvalidArgument(fmt::format("unknown option '{}' (see --help)", flag));
    }
    if (i + 1 >= args.size()) return Status::InvalidArgument(flag + " needs a value");
    Status s = it->second(args[++i]);
    if (!s.ok()) return Status::InvalidArgument(flag + ": " + s.message());
  }
  if (platform_path.empty()) return Status::InvalidArgument("--platform FILE is required");
  auto platform = LoadPlatform(platform_path);
  if (!platform.ok()) return platform.status();
  c.platform = *platform;
  IORELAY_RETURN_IF_ERROR(Validate(c));
  return o;
}

}  // namespace iorelay::sim
