// The dynamic-section reader against real objects of this system, and the loader's search order.
#include "preload/elf_dynamic.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

namespace iorelay::preload {
namespace {

std::vector<unsigned char> Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string ObjectOf(const void* symbol) {
  Dl_info info{};
  EXPECT_NE(dladdr(symbol, &info), 0);
  return info.dli_fname != nullptr ? info.dli_fname : "";
}

TEST(ElfDynamic, ReadsWhatALibraryAndAProgramNeed) {
  double (*cosine)(double) = &::cos;
  std::vector<unsigned char> libm = Slurp(ObjectOf(reinterpret_cast<void*>(cosine)));
  ElfDynamic d;
  ASSERT_TRUE(ReadElfDynamic(libm.data(), libm.size(), &d));
  EXPECT_EQ(d.soname, "libm.so.6");
  EXPECT_NE(std::find(d.needed.begin(), d.needed.end(), "libc.so.6"), d.needed.end());

  std::vector<unsigned char> self = Slurp("/proc/self/exe");
  ASSERT_TRUE(ReadElfDynamic(self.data(), self.size(), &d));
  EXPECT_TRUE(d.soname.empty());
  EXPECT_NE(std::find(d.needed.begin(), d.needed.end(), "libc.so.6"), d.needed.end());
}

TEST(ElfDynamic, RefusesWhatIsNotAWholeElfFile) {
  ElfDynamic d;
  const unsigned char text[] = "#!/bin/sh\necho not an object\n";
  EXPECT_FALSE(ReadElfDynamic(text, sizeof text, &d));
  std::vector<unsigned char> self = Slurp("/proc/self/exe");
  for (size_t cut : {size_t{16}, size_t{64}, self.size() / 2}) {
    // Cut short, the dynamic section or its strings are missing (never read past the end).
    ElfDynamic partial;
    if (cut < 64)
      EXPECT_FALSE(ReadElfDynamic(self.data(), cut, &partial)) << cut;
    else
      ReadElfDynamic(self.data(), cut, &partial);
  }
}

TEST(ElfDynamic, SearchOrderIsTheLoaders) {
  ElfDynamic old_style{{"libx.so"}, "$ORIGIN/../lib:/opt/a", "", ""};
  EXPECT_EQ(SearchDirectories(old_style, "/fwd/app/bin", "/env/lib"),
            (std::vector<std::string>{"/fwd/app/bin/../lib", "/opt/a", "/env/lib"}));
  ElfDynamic both{{"libx.so"}, "/ignored", "${ORIGIN}/lib:$LIB/x::/opt/b", ""};
  EXPECT_EQ(SearchDirectories(both, "/fwd/venv", nullptr),
            (std::vector<std::string>{"/fwd/venv/lib", "/opt/b"}));
}

}  // namespace
}  // namespace iorelay::preload
