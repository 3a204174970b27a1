#include "wire/stream_decoder.hpp"

#include "wire/limits.hpp"

namespace tether::wire {

void PrefixedStreamBuffer::begin(ByteView chunk) {
  if (failed() || chunk.empty()) return;
  if (start_ == buf_.size()) {
    buf_.clear();
    start_ = 0;
    ext_ = chunk;  // nothing buffered: decode straight from the caller's bytes
    ext_pos_ = 0;
    return;
  }
  if (start_ > 0 && start_ >= buf_.size() / 2) {
    buf_.erase(buf_.begin(), buf_.begin() + std::ptrdiff_t(start_));
    start_ = 0;
  }
  append(buf_, chunk);
}

void PrefixedStreamBuffer::end() {
  if (ext_pos_ < ext_.size && !failed()) {
    // Keep the unfinished tail: the caller's chunk is gone after feed() returns.
    append(buf_, ext_.sub(ext_pos_, ext_.size - ext_pos_));
  }
  ext_ = ByteView();
  ext_pos_ = 0;
  if (failed()) {
    Bytes().swap(buf_);
    start_ = 0;
  }
}

ByteView PrefixedStreamBuffer::pending() const {
  if (ext_.data != nullptr) return ext_.sub(ext_pos_, ext_.size - ext_pos_);
  return ByteView(buf_.data() + start_, buf_.size() - start_);
}

void PrefixedStreamBuffer::consume(std::size_t n) {
  if (ext_.data != nullptr) {
    ext_pos_ += n;
  } else {
    start_ += n;
  }
}

std::optional<FrameError> PrefixedStreamBuffer::finish() {
  if (!failed() && buffered() > 0) fail(FrameError::truncated);
  return error();
}

bool DataStreamDecoder::next(DataFrame& out) {
  if (failed()) return false;
  const ByteView p = pending();
  if (p.size < kDataPrefixBytes) return false;
  const std::size_t header_len = read_u32_le(p.data);
  const std::size_t payload_len = read_u32_le(p.data + 4);
  if (header_len > kMaxHeaderBytes) {
    fail(FrameError::header_too_large);
    return false;
  }
  if (payload_len > kMaxFrameBytes - kDataPrefixBytes - header_len) {
    fail(FrameError::frame_too_large);
    return false;
  }
  const std::size_t total = kDataPrefixBytes + header_len + payload_len;
  if (p.size < total) return false;
  auto header = parse_header(p.sub(kDataPrefixBytes, header_len));
  if (!header) {
    // The lengths were sound but the header is not: the stream's framing can no longer be trusted.
    fail(header.error());
    return false;
  }
  out.header = std::move(header.value());
  out.header_json = p.sub(kDataPrefixBytes, header_len);
  out.payload = p.sub(kDataPrefixBytes + header_len, payload_len);
  consume(total);
  return true;
}

bool ControlStreamDecoder::next(ByteView& out) {
  if (failed()) return false;
  const ByteView p = pending();
  if (p.size < kControlPrefixBytes) return false;
  const std::size_t len = read_u32_le(p.data);
  if (len > kMaxControlBytes) {
    fail(FrameError::control_too_large);
    return false;
  }
  if (p.size < kControlPrefixBytes + len) return false;
  out = p.sub(kControlPrefixBytes, len);
  consume(kControlPrefixBytes + len);
  return true;
}

}  // namespace tether::wire
