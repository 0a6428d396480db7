// Status formatting, the one place that turns an errno into text.
#include "common/status.h"

#include <cstring>

namespace iorelay {

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s = message_;
  if (!s.empty()) s += ": ";
  char buf[128];
  s += strerror_r(code_, buf, sizeof buf);
  return s;
}

}  // namespace iorelay
