// What every in-process daemon test sets up: a temporary export root, two credentials (appA,
// appB) and a Unix socket; and the raw-protocol calls the tests share. A mixin, so that
// plain and parameterised gtest fixtures can both use it.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "common/auth.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "proto/messages.h"
#include "proto/wire.h"
#include "testutil/raw_client_testutil.h"

namespace iorelay::daemon::testing {

class DaemonHarness {
 protected:
  // Makes the directory, its root/ and the two credentials (fatal failures on error).
  void PrepareDirs() {
    char tmpl[] = "/tmp/irdt-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(::mkdir((dir_ + "/root").c_str(), 0755), 0);
    ASSERT_TRUE(CreateSecretFile(dir_ + "/a.key").ok());
    ASSERT_TRUE(CreateSecretFile(dir_ + "/b.key").ok());
    secret_a_ = *LoadSecretFile(dir_ + "/a.key");
    secret_b_ = *LoadSecretFile(dir_ + "/b.key");
  }
  void Cleanup() {
    daemon_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Listens on dir/s, exports /data → dir/root, knows appA (a.key) and appB (b.key).
  Config BaseConfig() {
    Config c;
    socket_ = dir_ + "/s";
    c.listen = {"unix:" + socket_};
    c.exports = {{"/data", dir_ + "/root"}};
    c.credentials = {{"appA", dir_ + "/a.key"}, {"appB", dir_ + "/b.key"}};
    return c;
  }
  void Start(const Config& c) {
    Result<std::unique_ptr<Core>> core = BuildCore(c);
    ASSERT_TRUE(core.ok()) << core.status().ToString();
    Result<std::unique_ptr<Daemon>> d = Daemon::Start(std::move(*core));
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    daemon_ = std::move(*d);
  }
  std::unique_ptr<RawClient> Admitted(const Secret& s, proto::AuthReply* reply = nullptr) {
    auto c = std::make_unique<RawClient>();
    EXPECT_TRUE(c->Connect(socket_));
    EXPECT_EQ(c->Handshake(s, reply), 0);
    return c;
  }
  // Opens `path`; returns the handle or -errno (-9999 when the connection failed).
  int64_t Open(RawClient& c, const std::string& path, int flags, uint32_t mode = 0644) {
    Frame f;
    if (!c.Call(proto::Op::kOpen, proto::EncodeFields(proto::OpenRequest{path, flags, mode}), &f)) {
      return -9999;
    }
    if (f.header.status != 0) return -f.header.status;
    proto::OpenReply r;
    EXPECT_TRUE(proto::DecodeFields(f.payload, &r).ok());
    return static_cast<int64_t>(r.handle);
  }

  std::string dir_, socket_;
  Secret secret_a_{}, secret_b_{};
  std::unique_ptr<Daemon> daemon_;
};

}  // namespace iorelay::daemon::testing
