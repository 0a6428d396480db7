// Conversions between the wire's stat records and the C structures callers expect.
#pragma once

#include <sys/stat.h>
#include <sys/statfs.h>

#include "proto/messages.h"

namespace iorelay::client {

void ToStat(const proto::WireStat& w, struct stat* st);
void ToStatfs(const proto::WireStatfs& w, struct statfs* st);
// utimensat's times (NULL: both now) as the wire carries them.
proto::WireTimes ToWireTimes(const struct timespec* times);

}  // namespace iorelay::client
