// Incremental decoders for length-prefixed streams (cockpit-wire-protocol.md § Framing, and
// workaround 2: receivers count bytes and never take end-of-stream as a message boundary).
//
// Feed any chunking, down to one byte at a time. Complete units are handed to a callback; a chunk
// that holds whole frames is decoded in place without being copied, and only the bytes of an
// unfinished unit are kept. The views a callback receives stay valid until the next feed(),
// provided the caller leaves the chunk's memory untouched until then. A length over its bound fails the
// stream before anything is allocated for it. A failure is sticky and touches no other stream.
#pragma once
#include <cstddef>
#include <optional>

#include "common/bytes.hpp"
#include "wire/errors.hpp"
#include "wire/frame.hpp"

namespace tether::wire {

// The byte bookkeeping shared by both stream kinds.
class PrefixedStreamBuffer {
 public:
  std::optional<FrameError> error() const { return error_; }
  bool failed() const { return error_.has_value(); }
  // Bytes held for an unfinished unit.
  std::size_t buffered() const { return buf_.size() - start_ + (ext_.size - ext_pos_); }
  // The stream ended (FIN) or was reset. Reports a unit cut off mid-way as `truncated`.
  std::optional<FrameError> finish();

 protected:
  void begin(ByteView chunk);
  void end();
  // The unconsumed bytes, contiguous.
  ByteView pending() const;
  void consume(std::size_t n);
  void fail(FrameError e) { error_ = e; }

 private:
  Bytes buf_;
  std::size_t start_ = 0;
  ByteView ext_;  // the caller's chunk, used in place while nothing is buffered
  std::size_t ext_pos_ = 0;
  std::optional<FrameError> error_;
};

// Data frames: robot channel data, viewer streams, @control frames.
class DataStreamDecoder : public PrefixedStreamBuffer {
 public:
  template <class OnFrame>  // void(const DataFrame&)
  std::optional<FrameError> feed(ByteView chunk, OnFrame&& on_frame) {
    begin(chunk);
    DataFrame frame;
    while (next(frame)) on_frame(frame);
    end();
    return error();
  }

 private:
  bool next(DataFrame& out);
};

// Control-stream frames: the viewer's length-prefixed JSON messages. The message text is handed
// over as bytes; parse_message() decides whether it is valid (an invalid message is dropped, and
// the stream lives on).
class ControlStreamDecoder : public PrefixedStreamBuffer {
 public:
  template <class OnMessage>  // void(ByteView json)
  std::optional<FrameError> feed(ByteView chunk, OnMessage&& on_message) {
    begin(chunk);
    ByteView message;
    while (next(message)) on_message(message);
    end();
    return error();
  }

 private:
  bool next(ByteView& out);
};

}  // namespace tether::wire
