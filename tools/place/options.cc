// iorelay-place's option table; every error names the flag and what was expected.
#include "options.h"

#include <fmt/format.h>

#include <charconv>
#include <functional>
#include <string_view>

#include "common/option_table.h"
#include "placement/bgq_layout.h"
#include "placement/policy.h"

namespace iorelay::place_tool {
namespace {

Result<int> Positive(const std::string& text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1) {
    return Status::InvalidArgument(fmt::format("wants a positive integer, got '{}'", text));
  }
  return value;
}

std::vector<std::string> SplitComma(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    out.emplace_back(s.substr(0, comma));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

bool KnownPolicy(const std::string& name) {
  for (const std::string& p : placement::PolicyNames()) {
    if (p == name) return true;
  }
  return false;
}

// A comma-separated list option; `parse` checks and converts each element.
template <typename T>
cli::Option CommaList(std::string name, std::string metavar, std::vector<T>* field,
                      std::function<Result<T>(const std::string&)> parse, std::string help) {
  cli::Option o{
      std::move(name), std::move(metavar), std::move(help), cli::Arity::kValue, nullptr, nullptr,
      nullptr};
  o.set = [field, parse](const std::string& v) {
    std::vector<T> out;
    for (const std::string& s : SplitComma(v)) {
      Result<T> e = parse(s);
      if (!e.ok()) return e.status();
      out.push_back(*e);
    }
    *field = std::move(out);
    return Status::Ok();
  };
  o.get = [field]() -> nlohmann::json { return fmt::format("{}", fmt::join(*field, ",")); };
  return o;
}

Result<std::string> PolicyName(const std::string& name) {
  if (KnownPolicy(name)) return name;
  return Status::InvalidArgument(fmt::format("unknown policy '{}' (known: {})", name,
                                             fmt::join(placement::PolicyNames(), ", ")));
}

// --nodes N: a shorthand that sets --topology to the Mira partition of N nodes (no JSON key).
cli::Option MiraNodes(Options* o) {
  cli::Option opt{
      "nodes",
      "N",
      fmt::format("a Mira partition ({})", fmt::join(placement::MiraPartitionSizes(), ", ")),
      cli::Arity::kValue,
      nullptr,
      nullptr,
      nullptr};
  opt.set = [o](const std::string& v) {
    Result<int> n = Positive(v);
    if (!n.ok()) return n.status();
    Result<std::vector<int>> shape = placement::MiraPartitionShape(*n);
    if (!shape.ok()) return shape.status();
    o->topology = fmt::format("torus:{}", fmt::join(*shape, "x"));
    return Status::Ok();
  };
  return opt;
}

// The table binds to `o`: parsing writes into it, ToJson reads it.
cli::OptionTable Table(Options* o) {
  cli::OptionTable t(
      "usage: iorelay-place (--topology SPEC | --nodes N) [options]\n"
      "       iorelay-place --table 512,1024,2048,4096,8192 [options]\n"
      "Compares I/O-node assignment policies on a network topology and writes the mapping.\n");
  t.Add(cli::Text("topology", "SPEC", &o->topology,
                  "torus:4x4x4x4x2[:order=ABCDE], fattree:LEAVESxPERLEAFxUP or\n"
                  "dragonfly:GROUPSxROUTERSxNODESxGLOBALS[:routing=valiant]"))
      .Add(MiraNodes(o))
      .Add(CommaList<std::string>("policies", "A,B,...", &o->policies, PolicyName,
                                  fmt::format("policies to compare (all of {})",
                                              fmt::join(placement::PolicyNames(), ", "))))
      .Add(cli::Text("policy", "P", &o->policy, "policy whose mapping --out writes (route-aware)"))
      .Add(cli::Integer("ranks-per-node", "R", &o->ranks_per_node, 1, INT32_MAX,
                        "MPI ranks per compute node (16)"))
      .Add(cli::Flag("aggregate", &o->aggregate, "intra-node aggregation: one message per node"))
      .Add(cli::Integer("cap", "C", &o->tree_cap, 1, INT32_MAX,
                        "route-aware connectivity tree cap (256)"))
      .Add(cli::Choice("unreached", &o->unreached,
                       {{"default", placement::Unreached::kDefaultBridge},
                        {"nearest", placement::Unreached::kNearestUnderShare}},
                       "route-aware, nodes no tree reaches: default (their default\n"
                       "bridge, as the paper) or nearest (nearest bridge under share)"))
      .Add(cli::Integer("nodes-per-bridge", "K", &o->nodes_per_bridge, 1, INT32_MAX,
                        "layout when the topology is not made of BG/Q midplanes (64)"))
      .Add(cli::Choice(
          "daemon-unit", &o->unit,
          {{"ionode", placement::DaemonUnit::kIonode}, {"bridge", placement::DaemonUnit::kBridge}},
          "what a daemon index numbers (ionode)"))
      .Add(cli::Text("out", "FILE", &o->out,
                     "write the mapping JSON ({\"mapping\": {node: daemon}})"))
      .Add(cli::Flag("json", &o->json, "print metrics as JSON instead of a table"))
      .Add(cli::Flag("link-loads", &o->link_loads,
                     "with --json: messages per link for default and --policy"))
      .Add(CommaList<int>("table", "SIZES", &o->table_sizes, Positive,
                          "Markdown tables, default vs route-aware, per partition size"));
  return t;
}

}  // namespace

std::string Usage() {
  Options o;
  return Table(&o).Help();
}

Result<Options> ParseOptions(int argc, char** argv) {
  Options o;
  o.policies = placement::PolicyNames();
  Result<cli::ParseOutcome> parsed = Table(&o).Parse(argc, argv);
  if (!parsed.ok()) return parsed.status();
  o.help = parsed->help;
  if (parsed->print_config) o.printed_config = Table(&o).ToJson();
  if (o.help || parsed->print_config) return o;
  IORELAY_RETURN_IF_ERROR(PolicyName(o.policy).status());
  if (o.table_sizes.empty() && o.topology.empty()) {
    return Status::InvalidArgument("give --topology, --nodes or --table");
  }
  return o;
}

}  // namespace iorelay::place_tool
