// Test program: one rank of a 1D-strided shared-file write (segment k of rank r at
// (k * ranks + r) * block), or, with --verify, a word-by-word check of the whole file.
// With --report, each acknowledged write is printed ("ok OFFSET") as it returns, and
// --verify-acked REPORT later checks that exactly those blocks hold the right data: the
// crash test's "nothing acknowledged is lost".
// Plain POSIX calls only, so it runs the same directly and under the interposer.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pattern.h"

namespace {

struct Args {
  std::string file;
  uint32_t rank = 0, ranks = 1;
  uint64_t block = 8192, segments = 16, seed = 1;
  bool verify = false, direct = false, report = false;
  std::string acked;  // --verify-acked: a --report output to check against the file
};

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: strided_writer --file F --rank R --ranks P [--block B] [--segments S]\n"
               "                      [--seed X] [--direct] [--verify] [--report]\n"
               "                      [--verify-acked REPORT]\n");
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : (Usage(), ""); };
    if (k == "--file")
      a.file = next();
    else if (k == "--rank")
      a.rank = std::strtoul(next(), nullptr, 10);
    else if (k == "--ranks")
      a.ranks = std::strtoul(next(), nullptr, 10);
    else if (k == "--block")
      a.block = std::strtoull(next(), nullptr, 10);
    else if (k == "--segments")
      a.segments = std::strtoull(next(), nullptr, 10);
    else if (k == "--seed")
      a.seed = std::strtoull(next(), nullptr, 10);
    else if (k == "--verify")
      a.verify = true;
    else if (k == "--direct")
      a.direct = true;
    else if (k == "--report")
      a.report = true;
    else if (k == "--verify-acked")
      a.acked = next();
    else
      Usage();
  }
  if (a.file.empty() || a.ranks == 0 || a.block % 8 != 0 || a.rank >= a.ranks) Usage();
  return a;
}

uint64_t* AlignedBuffer(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, bytes) != 0) std::abort();
  return static_cast<uint64_t*>(p);
}

int Write(const Args& a) {
  int fd = open(a.file.c_str(), O_WRONLY | O_CREAT | (a.direct ? O_DIRECT : 0), 0644);
  if (fd < 0) return std::perror("open"), 1;
  uint64_t* buf = AlignedBuffer(a.block);
  for (uint64_t k = 0; k < a.segments; ++k) {
    uint64_t off = (k * a.ranks + a.rank) * a.block;
    iorelay::FillPattern(buf, a.block / 8, a.seed, a.rank, off);
    ssize_t n = pwrite(fd, buf, a.block, static_cast<off_t>(off));
    if (n != static_cast<ssize_t>(a.block)) {
      std::fprintf(stderr, "rank %u: pwrite at %llu gave %zd: %s\n", a.rank,
                   static_cast<unsigned long long>(off), n, std::strerror(errno));
      if (a.report)
        std::printf("error %llu %s\n", static_cast<unsigned long long>(off), std::strerror(errno));
      return 1;
    }
    if (a.report) std::printf("ok %llu\n", static_cast<unsigned long long>(off));
  }
  free(buf);
  if (close(fd) != 0) return std::perror("close"), 1;
  return 0;
}

int Verify(const Args& a) {
  int fd = open(a.file.c_str(), O_RDONLY);
  if (fd < 0) return std::perror("open"), 1;
  uint64_t* buf = AlignedBuffer(a.block);
  size_t wrong = 0;
  for (uint64_t b = 0; b < a.segments * a.ranks; ++b) {
    uint64_t off = b * a.block;
    ssize_t n = pread(fd, buf, a.block, static_cast<off_t>(off));
    if (n != static_cast<ssize_t>(a.block)) {
      std::fprintf(stderr, "short read at %llu: %zd\n", static_cast<unsigned long long>(off), n);
      return 1;
    }
    wrong += iorelay::CountWrongWords(buf, a.block / 8, a.seed, b % a.ranks, off);
  }
  char extra;
  if (pread(fd, &extra, 1, static_cast<off_t>(a.segments * a.ranks * a.block)) != 0) {
    std::fprintf(stderr, "file is longer than the pattern\n");
    return 1;
  }
  free(buf);
  close(fd);
  std::printf("verified %llu bytes, %zu wrong words\n",
              static_cast<unsigned long long>(a.segments * a.ranks * a.block), wrong);
  return wrong == 0 ? 0 : 1;
}

// Checks the blocks a --report run acknowledged ("ok OFFSET" lines), reading directly.
int VerifyAcked(const Args& a) {
  FILE* report = std::fopen(a.acked.c_str(), "r");
  if (!report) return std::perror("report"), 1;
  int fd = open(a.file.c_str(), O_RDONLY);
  if (fd < 0) return std::perror("open"), 1;
  uint64_t* buf = AlignedBuffer(a.block);
  size_t blocks = 0, wrong = 0;
  char line[128];
  while (std::fgets(line, sizeof line, report)) {
    unsigned long long off;
    if (std::sscanf(line, "ok %llu", &off) != 1) continue;
    ++blocks;
    uint32_t owner = static_cast<uint32_t>((off / a.block) % a.ranks);
    if (pread(fd, buf, a.block, static_cast<off_t>(off)) != static_cast<ssize_t>(a.block)) {
      ++wrong;
      continue;
    }
    wrong += iorelay::CountWrongWords(buf, a.block / 8, a.seed, owner, off) != 0;
  }
  std::fclose(report);
  free(buf);
  close(fd);
  std::printf("acknowledged blocks %zu, lost or wrong %zu\n", blocks, wrong);
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = Parse(argc, argv);
  if (!a.acked.empty()) return VerifyAcked(a);
  if (a.report) std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return a.verify ? Verify(a) : Write(a);
}
