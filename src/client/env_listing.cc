// The environment table as people read it: `iorelay-ctl env`'s listing and docs/interposer.md's
// table (env_table.h).
#include <string>

#include "client/env_table.h"

namespace iorelay::client {
namespace {

std::string DefaultText(const EnvVar& v) {
  return v.default_value.empty() ? "required" : "default " + v.default_value;
}

// A table cell: '|' would end it.
std::string Cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::string EnvListing() {
  std::string out =
      "The client's and the interposer's environment variables (docs/interposer.md):\n";
  for (const EnvVar& v : EnvTable()) {
    out += "\n" + v.name + "  " + v.values + "  (" + DefaultText(v) + ")\n";
    out += "    " + v.meaning + "\n";
    if (v.run_file) out += "    `iorelay run` sets it on every rank\n";
  }
  return out;
}

std::string EnvMarkdown() {
  std::string out =
      "| variable | values | default | set by `iorelay run` | meaning |\n"
      "|---|---|---|---|---|\n";
  for (const EnvVar& v : EnvTable()) {
    out += "| `" + v.name + "` | " + Cell(v.values) + " | " +
           Cell(v.default_value.empty() ? "required" : v.default_value) + " | " +
           (v.run_file ? "yes" : "") + " | " + Cell(v.meaning) + " |\n";
  }
  return out;
}

}  // namespace iorelay::client
