// Both ends of exec for forwarded descriptors: the old image describes the inherited
// ones in the environment, the new image's interposer re-opens them.
#pragma once

#include <string>
#include <vector>

namespace iorelay::preload {

// The environment to pass to exec: envp minus any stale description, plus one of
// the forwarded descriptors without FD_CLOEXEC (path, flags, current offset) and the
// forwarded working directory (cwd.h). When nothing is forwarded, get() is envp itself.
class ExecEnv {
 public:
  explicit ExecEnv(char* const envp[]);
  ExecEnv(const ExecEnv&) = delete;
  ExecEnv& operator=(const ExecEnv&) = delete;
  char* const* get() const { return envp_; }

 private:
  char* const* envp_;
  std::string inherit_;
  std::string cwd_;
  std::vector<char*> storage_;
};

}  // namespace iorelay::preload
