// Runs iorelayd inside the test, for tests that give it their own configuration or reach into
// it, in a DaemonDir with two applications (appA, appB); and the raw-protocol calls the tests
// share. A mixin, so that plain and parameterised gtest fixtures can both use it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/auth.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "proto/messages.h"
#include "proto/wire.h"
#include "testutil/daemon_dir_testutil.h"
#include "testutil/raw_client_testutil.h"

namespace iorelay::daemon::testing {

class DaemonHarness {
 protected:
  // Makes the DaemonDir and reads the two credentials (fatal failures on error).
  void PrepareDirs() {
    daemon_dir_ =
        std::make_unique<iorelay::testing::DaemonDir>(std::vector<std::string>{"appA", "appB"});
    dir_ = daemon_dir_->path();
    socket_ = daemon_dir_->socket();
    Result<Secret> a = LoadSecretFile(daemon_dir_->key_file("appA"));
    Result<Secret> b = LoadSecretFile(daemon_dir_->key_file("appB"));
    ASSERT_TRUE(a.ok() && b.ok());
    secret_a_ = *a;
    secret_b_ = *b;
  }
  void Cleanup() {
    daemon_.reset();
    daemon_dir_.reset();
  }
  // Listens on dir/s, exports /data → dir/root, knows appA and appB.
  Config BaseConfig() {
    Config c;
    c.listen = {daemon_dir_->address()};
    c.exports = {{"/data", daemon_dir_->root()}};
    c.credentials = {{"appA", daemon_dir_->key_file("appA")},
                     {"appB", daemon_dir_->key_file("appB")}};
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

  std::unique_ptr<iorelay::testing::DaemonDir> daemon_dir_;
  std::string dir_, socket_;
  Secret secret_a_{}, secret_b_{};
  std::unique_ptr<Daemon> daemon_;
};

}  // namespace iorelay::daemon::testing
