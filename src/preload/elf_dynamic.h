// What a shared object's dynamic section says about the objects it needs: its DT_NEEDED names,
// DT_RPATH, DT_RUNPATH and DT_SONAME, read from the file's bytes (64-bit little-endian ELF, as
// on x86_64 and aarch64). Pure: no system calls.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace iorelay::preload {

struct ElfDynamic {
  std::vector<std::string> needed;
  std::string rpath, runpath, soname;
};

// False when `data` is not such an ELF file, or its dynamic section or string table lie
// outside the `size` bytes given.
bool ReadElfDynamic(const unsigned char* data, size_t size, ElfDynamic* out);

// The directories the dynamic loader searches for an object's DT_NEEDED names, in its order:
// DT_RPATH (when there is no DT_RUNPATH), then `library_path` (LD_LIBRARY_PATH), then
// DT_RUNPATH; `$ORIGIN` and `${ORIGIN}` become `origin`, the object's own directory. Entries
// with another dynamic string token ($LIB, $PLATFORM) and empty ones are left out.
std::vector<std::string> SearchDirectories(const ElfDynamic& d, const std::string& origin,
                                           const char* library_path);

}  // namespace iorelay::preload
