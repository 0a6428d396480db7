// The bytes a file's write-behind holds unsent: disjoint ranges, each the latest bytes this
// process wrote there, bounded in bytes and in ranges (docs/interposer.md, "Write-behind").
// Pure bookkeeping, no I/O and no lock: the caller (file_buffers.cc) holds the file's.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace iorelay::client {

class WriteRanges {
 public:
  struct Range {
    int64_t at = 0;
    std::vector<uint8_t> data;
    int64_t end() const { return at + static_cast<int64_t>(data.size()); }
  };

  // Whether `n` more bytes in one more range keep this within `max_bytes` (counted with a
  // kPwriteRanges table entry of 16 bytes per range) and `max_ranges` ranges.
  bool Fits(size_t n, size_t max_bytes, size_t max_ranges) const {
    return ranges_.size() + 1 <= max_ranges && WireBytes() + n + kEntryBytes <= max_bytes;
  }

  // Copies the `n` bytes of iov as written at `at`: they replace what is held there, and a
  // range they overlap or touch joins theirs (so ranges stay disjoint and never adjacent).
  void Add(int64_t at, const struct iovec* iov, int count, size_t n);

  // Every range, by offset, and nothing held after.
  std::vector<Range> Take();

  // A range's buffer that went out, kept (one) for the next range to fill without allocating.
  void Recycle(std::vector<uint8_t>&& buffer);

  bool empty() const { return ranges_.empty(); }
  size_t count() const { return ranges_.size(); }
  size_t bytes() const { return bytes_; }
  // The request's bytes: the ranges', with a table entry each when there is more than one.
  size_t WireBytes() const {
    return bytes_ + (ranges_.size() > 1 ? kEntryBytes * ranges_.size() : 0);
  }
  // [first(), last_end()): where the ranges lie (none: 0, 0).
  int64_t first() const { return ranges_.empty() ? 0 : ranges_.begin()->first; }
  int64_t last_end() const;

  static constexpr size_t kEntryBytes = 16;  // proto::kWriteRangeEntryBytes

 private:
  std::map<int64_t, std::vector<uint8_t>> ranges_;  // by offset
  size_t bytes_ = 0;
  std::vector<uint8_t> spare_;
};

}  // namespace iorelay::client
