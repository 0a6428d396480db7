// Runs a computation in a child process and returns the JSON it printed: SimGrid allows one
// engine per process, so each simulated run of a test forks.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace iorelay::testutil {

// `produce` runs in the child and returns the JSON text to hand back. Returns the parsed
// JSON, or {"error": ...} when the child failed, printed nothing or printed no JSON, or did not
// finish within `limit_s` seconds (a deadlocked simulation fails its test instead of hanging).
inline nlohmann::json ForkedJson(const std::function<std::string()>& produce,
                                 unsigned limit_s = 300) {
  int fds[2];
  if (pipe(fds) != 0) return {{"error", "pipe"}};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(limit_s);  // SIGALRM's default action ends the child
    const std::string out = produce();
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) _exit(3);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty()) {
    return {{"error", "child failed"}};
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return {{"error", "child printed no JSON"}};
  return j;
}

}  // namespace iorelay::testutil
