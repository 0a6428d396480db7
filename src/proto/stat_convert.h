// The stat records in every shape iorelay moves them between, in one place: struct stat and
// struct statfs to and from their wire forms (the daemon sends, the client receives), file times
// both ways, and the shapes the interposer hands out besides (statx, statvfs). Field-by-field
// copies, no layout assumptions; pure functions.
#pragma once

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "proto/messages.h"

namespace iorelay::proto {

// The daemon's side: what a backend returned, as the wire carries it.
WireStat ToWire(const struct stat& s);
WireStatfs ToWire(const struct statfs& s);

// The wire's times as utimensat(2) takes them (the kernel refuses bad nanoseconds: EINVAL).
struct UtimensTimes {
  struct timespec ts[2];
};
UtimensTimes FromWire(const WireTimes& w);

// The client's side: the wire's records as the C structures callers expect.
void ToStat(const WireStat& w, struct stat* st);
void ToStatfs(const WireStatfs& w, struct statfs* st);
// utimensat's times (NULL: both now) as the wire carries them.
WireTimes ToWireTimes(const struct timespec* times);

// The interposer's other shapes: the basic statx fields (STATX_BASIC_STATS; no birth time), and
// statvfs.
void StatToStatx(const struct stat& st, struct statx* out);
void StatfsToStatvfs(const struct statfs& sf, struct statvfs* out);

}  // namespace iorelay::proto
