#include "preload/elf_dynamic.h"

#include <elf.h>

#include <cstring>

namespace iorelay::preload {
namespace {

template <class T>
bool ReadAt(const unsigned char* data, size_t size, uint64_t off, T* out) {
  if (off > size || size - off < sizeof(T)) return false;
  memcpy(out, data + off, sizeof(T));
  return true;
}

// The file offset of virtual address `addr`, through the PT_LOAD segments.
bool FileOffset(const std::vector<Elf64_Phdr>& loads, uint64_t addr, uint64_t* off) {
  for (const Elf64_Phdr& p : loads) {
    if (addr >= p.p_vaddr && addr - p.p_vaddr < p.p_filesz) {
      *off = addr - p.p_vaddr + p.p_offset;
      return true;
    }
  }
  return false;
}

void Split(const std::string& list, std::vector<std::string>* out) {
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(':', start), list.size());
    out->push_back(list.substr(start, end - start));
    start = end + 1;
  }
}

// `dir` with $ORIGIN and ${ORIGIN} replaced; false when another token is left.
bool Expand(std::string dir, const std::string& origin, std::string* out) {
  for (const char* token : {"${ORIGIN}", "$ORIGIN"}) {
    for (size_t at; (at = dir.find(token)) != std::string::npos;) {
      dir.replace(at, strlen(token), origin);
    }
  }
  if (dir.empty() || dir.find('$') != std::string::npos) return false;
  *out = std::move(dir);
  return true;
}

}  // namespace

bool ReadElfDynamic(const unsigned char* data, size_t size, ElfDynamic* out) {
  Elf64_Ehdr eh;
  if (!ReadAt(data, size, 0, &eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_phentsize != sizeof(Elf64_Phdr)) {
    return false;
  }
  std::vector<Elf64_Phdr> loads;
  Elf64_Phdr dynamic{};
  bool has_dynamic = false;
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr p;
    if (!ReadAt(data, size, eh.e_phoff + uint64_t{i} * sizeof p, &p)) return false;
    if (p.p_type == PT_LOAD) loads.push_back(p);
    if (p.p_type == PT_DYNAMIC) dynamic = p, has_dynamic = true;
  }
  if (!has_dynamic) return false;
  uint64_t strtab = 0, strsz = 0;
  bool has_strtab = false;
  std::vector<std::pair<int64_t, uint64_t>> strings;  // (tag, offset in the string table)
  for (uint64_t off = dynamic.p_offset; off < dynamic.p_offset + dynamic.p_filesz;
       off += sizeof(Elf64_Dyn)) {
    Elf64_Dyn d;
    if (!ReadAt(data, size, off, &d)) return false;
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr, has_strtab = true;
    if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
    if (d.d_tag == DT_NEEDED || d.d_tag == DT_RPATH || d.d_tag == DT_RUNPATH ||
        d.d_tag == DT_SONAME) {
      strings.emplace_back(d.d_tag, d.d_un.d_val);
    }
  }
  uint64_t base = 0;
  if (!has_strtab || !FileOffset(loads, strtab, &base) || base > size || size - base < strsz) {
    return false;
  }
  *out = ElfDynamic{};
  for (const auto& [tag, at] : strings) {
    if (at >= strsz) return false;
    const char* s = reinterpret_cast<const char*>(data + base + at);
    const size_t len = strnlen(s, strsz - at);
    if (len == strsz - at) return false;  // not terminated inside the table
    std::string value(s, len);
    if (tag == DT_NEEDED) out->needed.push_back(std::move(value));
    if (tag == DT_RPATH) out->rpath = std::move(value);
    if (tag == DT_RUNPATH) out->runpath = std::move(value);
    if (tag == DT_SONAME) out->soname = std::move(value);
  }
  return true;
}

std::vector<std::string> SearchDirectories(const ElfDynamic& d, const std::string& origin,
                                           const char* library_path) {
  std::vector<std::string> raw;
  if (d.runpath.empty() && !d.rpath.empty()) Split(d.rpath, &raw);
  if (library_path != nullptr && *library_path != '\0') Split(library_path, &raw);
  if (!d.runpath.empty()) Split(d.runpath, &raw);
  std::vector<std::string> dirs;
  for (const std::string& r : raw) {
    std::string dir;
    if (Expand(r, origin, &dir)) dirs.push_back(std::move(dir));
  }
  return dirs;
}

}  // namespace iorelay::preload
