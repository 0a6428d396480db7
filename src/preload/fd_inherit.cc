// Encoding of inherited forwarded descriptors for exec (see fd_inherit.h).
#include "preload/fd_inherit.h"

#include <charconv>

namespace iorelay::preload {
namespace {

constexpr char kHex[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

template <class T>
bool ParseInt(std::string_view s, T* v) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

// Splits off the text before `sep` (or all of it).
std::string_view Next(std::string_view* s, char sep) {
  size_t i = s->find(sep);
  std::string_view head = s->substr(0, i);
  *s = i == std::string_view::npos ? std::string_view() : s->substr(i + 1);
  return head;
}

}  // namespace

std::string EncodeInherited(const std::vector<InheritedFd>& fds) {
  std::string out;
  for (const InheritedFd& f : fds) {
    if (!out.empty()) out += ';';
    out += std::to_string(f.fd) + ',' + (f.is_file ? 'f' : 'd') + ',' + std::to_string(f.flags) +
           ',' + std::to_string(f.offset) + ',';
    for (unsigned char c : f.path) {
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

bool DecodeInherited(std::string_view text, std::vector<InheritedFd>* out) {
  out->clear();
  while (!text.empty()) {
    std::string_view item = Next(&text, ';');
    InheritedFd f;
    std::string_view kind;
    if (!ParseInt(Next(&item, ','), &f.fd) || f.fd < 0) return false;
    kind = Next(&item, ',');
    if (kind != "f" && kind != "d") return false;
    f.is_file = kind == "f";
    if (!ParseInt(Next(&item, ','), &f.flags)) return false;
    if (!ParseInt(Next(&item, ','), &f.offset) || f.offset < 0) return false;
    std::string_view hex = item;
    if (hex.empty() || hex.size() % 2 != 0) return false;
    for (size_t i = 0; i < hex.size(); i += 2) {
      int hi = HexValue(hex[i]), lo = HexValue(hex[i + 1]);
      if (hi < 0 || lo < 0) return false;
      f.path += static_cast<char>(hi * 16 + lo);
    }
    if (f.path[0] != '/') return false;
    out->push_back(std::move(f));
  }
  return true;
}

}  // namespace iorelay::preload
