// Why a frame could not be decoded. A failed decode never replaces the last good value
// (cockpit-wire-v7-notes.md: "A decoder that fails keeps the last good value and counts a decode
// error").
#pragma once
#include <string_view>

namespace tether::decode {

enum class DecodeError {
  bad_meta,           // meta missing, of the wrong shape, or out of bounds
  payload_too_large,  // compressed payload over 8 MiB, or JSON over 1 MiB
  not_zlib,           // not an RFC 1950 stream (bad header or checksum, or corrupt data)
  too_much_data,      // inflates past the size the meta promises (decompression-bomb guard)
  too_little_data,    // the stream ends before the promised size
  trailing_bytes,     // bytes after the end of the zlib stream
  not_jpeg,           // no JPEG start-of-image marker
  invalid_json,       // not UTF-8 JSON, or nested too deep
  bad_shape,          // JSON of the wrong shape for its encoding
};

std::string_view decode_error_name(DecodeError e);
// What went wrong and what the robot side should fix.
std::string_view decode_error_text(DecodeError e);

}  // namespace tether::decode
