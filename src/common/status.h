// Errors as values on the I/O path: a Status carries an errno-style code and a message,
// and Result<T> carries a value or a Status. No exceptions cross the I/O path.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace iorelay {

class Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  // From an errno value (0 means OK). The message says what was being done.
  static Status FromErrno(int err, std::string what = {}) { return Status(err, std::move(what)); }
  // The current errno, for "call failed" sites.
  static Status LastError(std::string what = {}) { return Status(errno, std::move(what)); }
  static Status InvalidArgument(std::string what) { return Status(EINVAL, std::move(what)); }
  static Status NotFound(std::string what) { return Status(ENOENT, std::move(what)); }
  static Status IOError(std::string what) { return Status(EIO, std::move(what)); }
  static Status PermissionDenied(std::string what) { return Status(EACCES, std::move(what)); }
  static Status Protocol(std::string what) { return Status(EPROTO, std::move(what)); }

  bool ok() const { return code_ == 0; }
  // The errno a local file system would give (0 when OK).
  int code() const { return code_; }
  const std::string& message() const { return message_; }
  // "message: strerror(code)" for logs and error messages.
  std::string ToString() const;

 private:
  Status(int code, std::string message) : code_(code), message_(std::move(message)) {}
  int code_ = 0;
  std::string message_;
};

// A value or an error. Small on purpose: ok(), status(), value(), operator*, operator->.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: must not be OK
  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace iorelay

#define IORELAY_RETURN_IF_ERROR(expr) \
  do {                                \
    ::iorelay::Status _st = (expr);   \
    if (!_st.ok()) return _st;        \
  } while (0)
