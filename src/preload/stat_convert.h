// Conversions from the client's struct stat / struct statfs to the other shapes libc
// offers (statx, statvfs). Pure functions.
#pragma once

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

namespace iorelay::preload {

// Fills the basic statx fields (STATX_BASIC_STATS; no birth time).
void StatToStatx(const struct stat& st, struct statx* out);
void StatfsToStatvfs(const struct statfs& sf, struct statvfs* out);

}  // namespace iorelay::preload
