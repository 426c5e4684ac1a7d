// Numbers in the core's human-readable messages (goal rejections, parameter errors): one format, so a
// value reads the same in every message. Non-real-time (allocates).
#pragma once

#include <cstdio>
#include <string>

namespace jtac::detail {

/// `v` with 9 significant digits: enough to tell apart the values a message compares.
inline std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

}  // namespace jtac::detail
