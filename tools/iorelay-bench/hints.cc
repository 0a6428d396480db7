// The known hints and their value forms (ROMIO's users guide and MPI 4.0 section 14.2.8).
#include "hints.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <vector>

#include "common/option_table.h"

namespace iorelay::bench {
namespace {

enum class Form {
  kPositive,
  kNonNegative,
  kSwitch,
  kEnableDisable,
  kBool,
  kConfigList,
  kAccessStyle,
  kOctal,
  kText
};

const std::map<std::string, Form>& Known() {
  static const auto* known = new std::map<std::string, Form>{
      // MPI's reserved keys
      {"access_style", Form::kAccessStyle},
      {"collective_buffering", Form::kBool},
      {"cb_block_size", Form::kPositive},
      {"cb_buffer_size", Form::kPositive},
      {"cb_nodes", Form::kPositive},
      {"chunked", Form::kText},
      {"chunked_item", Form::kText},
      {"chunked_size", Form::kText},
      {"file_perm", Form::kOctal},
      {"filename", Form::kText},
      {"io_node_list", Form::kText},
      {"nb_proc", Form::kPositive},
      {"num_io_nodes", Form::kPositive},
      {"striping_factor", Form::kPositive},
      {"striping_unit", Form::kPositive},
      // ROMIO's
      {"cb_config_list", Form::kConfigList},
      {"ind_rd_buffer_size", Form::kPositive},
      {"ind_wr_buffer_size", Form::kPositive},
      {"romio_cb_read", Form::kSwitch},
      {"romio_cb_write", Form::kSwitch},
      {"romio_ds_read", Form::kSwitch},
      {"romio_ds_write", Form::kSwitch},
      {"romio_cb_alltoall", Form::kSwitch},
      {"romio_cb_pfr", Form::kEnableDisable},
      {"romio_cb_fr_types", Form::kText},
      {"romio_cb_fr_alignment", Form::kPositive},
      {"romio_cb_ds_threshold", Form::kNonNegative},
      {"romio_no_indep_rw", Form::kBool},
      {"romio_filesystem_type", Form::kText},
      {"romio_lustre_co_ratio", Form::kPositive},
      {"romio_lustre_coll_threshold", Form::kNonNegative},
      {"romio_lustre_ds_in_coll", Form::kEnableDisable},
      {"romio_visibility_immediate", Form::kBool},
      {"start_iodevice", Form::kNonNegative},
      {"direct_read", Form::kBool},
      {"direct_write", Form::kBool},
  };
  return *known;
}

bool IsNumber(const std::string& s, int base, uint64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  uint64_t v = 0;
  for (char c : s) {
    const int digit = c - '0';
    if (digit < 0 || digit >= base) return false;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
  }
  *out = v;
  return true;
}

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) out.push_back(part);
  if (!s.empty() && s.back() == ',') out.push_back("");
  return out;
}

// "*:2", "node1:4,node2", "*:*": host names or *, each with an optional count (a number > 0 or *).
bool IsConfigList(const std::string& value) {
  if (value.empty()) return false;
  for (const std::string& entry : SplitCommas(value)) {
    const size_t colon = entry.find(':');
    const std::string host = entry.substr(0, colon);
    if (host.empty()) return false;
    if (colon == std::string::npos) continue;
    const std::string count = entry.substr(colon + 1);
    uint64_t n = 0;
    if (count != "*" && (!IsNumber(count, 10, &n) || n == 0)) return false;
  }
  return true;
}

bool IsAccessStyle(const std::string& value) {
  static const std::vector<std::string> styles = {
      "read_once",  "write_once",         "read_mostly", "write_mostly",
      "sequential", "reverse_sequential", "random"};
  const auto parts = SplitCommas(value);
  if (parts.empty()) return false;
  for (const std::string& p : parts) {
    if (std::find(styles.begin(), styles.end(), p) == styles.end()) return false;
  }
  return true;
}

// Whether `value` has form `f`, and what the form accepts.
std::pair<bool, const char*> Accepts(Form f, const std::string& value) {
  uint64_t n = 0;
  switch (f) {
    case Form::kPositive:
      return {IsNumber(value, 10, &n) && n > 0, "a whole number above 0 (bytes or a count)"};
    case Form::kNonNegative:
      return {IsNumber(value, 10, &n), "a whole number"};
    case Form::kSwitch:
      return {value == "enable" || value == "disable" || value == "automatic",
              "enable, disable or automatic"};
    case Form::kEnableDisable:
      return {value == "enable" || value == "disable", "enable or disable"};
    case Form::kBool:
      return {value == "true" || value == "false", "true or false"};
    case Form::kConfigList:
      return {IsConfigList(value), "host[:count],... with * for any host or count, e.g. *:2"};
    case Form::kAccessStyle:
      return {IsAccessStyle(value),
              "a comma list of read_once, write_once, read_mostly, write_mostly, sequential, "
              "reverse_sequential, random"};
    case Form::kOctal:
      return {IsNumber(value, 8, &n), "octal permissions, e.g. 0644"};
    case Form::kText:
      return {!value.empty(), "a non-empty value"};
  }
  return {false, "?"};
}

}  // namespace

Status CheckHint(const std::string& text) {
  auto kv = cli::SplitKeyValue(text);
  if (!kv.ok()) return kv.status();
  const auto& [key, value] = *kv;
  auto it = Known().find(key);
  if (it == Known().end()) {
    std::string known;
    for (const auto& [k, f] : Known()) known += (known.empty() ? "" : ", ") + k;
    return Status::InvalidArgument(fmt::format(
        "unknown MPI-IO hint '{}' (MPI ignores keys it does not know, so it would change "
        "nothing); known: {}",
        key, known));
  }
  const auto [ok, form] = Accepts(it->second, value);
  if (!ok) {
    return Status::InvalidArgument(fmt::format("hint {}={}: {} wants {}", key, value, key, form));
  }
  return Status::Ok();
}

}  // namespace iorelay::bench
