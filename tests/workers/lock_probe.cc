// Test program: takes, tests or waits for a POSIX record lock on a file, and reports on
// stdout, so a test can play two processes against each other (directly or forwarded).
//   lock_probe FILE hold START LEN   F_SETLK a write lock, print "held", wait for a line on
//                                    stdin, then close the file (release-on-close)
//   lock_probe FILE try START LEN    F_GETLK then F_SETLK: "conflict pid=P" / "free", then
//                                    "acquired" or "EAGAIN"
//   lock_probe FILE wait START LEN   F_SETLKW: "acquired" once it has the lock
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct flock WriteLock(off_t start, off_t len) {
  struct flock lk {};
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;
  lk.l_start = start;
  lk.l_len = len;
  return lk;
}

int Fail(const char* what) {
  std::printf("error %s: %s\n", what, std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: lock_probe FILE hold|try|wait START LEN\n");
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  std::string mode = argv[2];
  off_t start = std::atoll(argv[3]), len = std::atoll(argv[4]);
  int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
  if (fd < 0) return Fail("open");
  struct flock lk = WriteLock(start, len);
  if (mode == "hold") {
    if (fcntl(fd, F_SETLK, &lk) != 0) return Fail("F_SETLK");
    std::printf("held\n");
    char line[16];
    if (!std::fgets(line, sizeof line, stdin)) return Fail("stdin");
    close(fd);
    std::printf("released\n");
    return 0;
  }
  if (mode == "try") {
    struct flock probe = WriteLock(start, len);
    if (fcntl(fd, F_GETLK, &probe) != 0) return Fail("F_GETLK");
    if (probe.l_type == F_UNLCK) {
      std::printf("free\n");
    } else {
      std::printf("conflict pid=%d type=%s start=%lld\n", probe.l_pid,
                  probe.l_type == F_WRLCK ? "write" : "read",
                  static_cast<long long>(probe.l_start));
    }
    if (fcntl(fd, F_SETLK, &lk) == 0) {
      std::printf("acquired\n");
    } else if (errno == EAGAIN || errno == EACCES) {
      std::printf("EAGAIN\n");
    } else {
      return Fail("F_SETLK");
    }
    return 0;
  }
  if (mode == "wait") {
    if (fcntl(fd, F_SETLKW, &lk) != 0) return Fail("F_SETLKW");
    std::printf("acquired\n");
    return 0;
  }
  return 2;
}
