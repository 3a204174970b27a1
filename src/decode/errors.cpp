#include "decode/errors.hpp"

namespace tether::decode {

std::string_view decode_error_name(DecodeError e) {
  switch (e) {
    case DecodeError::bad_meta: return "bad_meta";
    case DecodeError::payload_too_large: return "payload_too_large";
    case DecodeError::not_zlib: return "not_zlib";
    case DecodeError::too_much_data: return "too_much_data";
    case DecodeError::too_little_data: return "too_little_data";
    case DecodeError::trailing_bytes: return "trailing_bytes";
    case DecodeError::not_jpeg: return "not_jpeg";
    case DecodeError::invalid_json: return "invalid_json";
    case DecodeError::bad_shape: return "bad_shape";
  }
  return "bad_meta";
}

std::string_view decode_error_text(DecodeError e) {
  switch (e) {
    case DecodeError::bad_meta:
      return "the frame's meta is missing or out of bounds for its encoding; check the encoder's "
             "meta";
    case DecodeError::payload_too_large:
      return "the payload is over the encoding's bound (8 MiB compressed, 1 MiB JSON); send less "
             "per frame";
    case DecodeError::not_zlib:
      return "the payload is not a zlib (RFC 1950) stream; compress with zlib, not raw deflate or "
             "gzip";
    case DecodeError::too_much_data:
      return "the payload inflates past the size its meta promises; the meta and the data disagree";
    case DecodeError::too_little_data:
      return "the payload inflates to less than its meta promises; the meta and the data disagree";
    case DecodeError::trailing_bytes:
      return "bytes follow the end of the zlib stream; send exactly one stream per frame";
    case DecodeError::not_jpeg:
      return "the payload does not start with a JPEG start-of-image marker";
    case DecodeError::invalid_json: return "the payload is not UTF-8 JSON of sane depth";
    case DecodeError::bad_shape: return "the JSON does not have the shape its encoding requires";
  }
  return "decode failed";
}

}  // namespace tether::decode
