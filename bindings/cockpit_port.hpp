// What the cockpit's two bindings share (cockpit_relay_bindings.cpp, cockpit_clients_bindings.cpp):
// a deadline as a number, the bytes of the action just polled kept alive and numbered, and a list
// of an enum's names. Marshalling only (DESIGN.md rule 4). The two bindings are separate
// translation units so that each WASM module links only the cores its runtime drives
// (wasm/module.cmake: the edge hosts the relay, the cockpit app the clients).
#pragma once
#include <emscripten/val.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cockpit/types.hpp"
#include "common/drive.hpp"
#include "staging.hpp"

namespace tether::cockpit::bindings {

inline double timeout_value(Timeout t) {
  return t ? double(*t) : -1.0;
}

// The bytes of the action just polled, kept alive and numbered: their serial number changes only
// when other bytes are held, so JS copies one frame fanned out to many viewers once.
class HeldBytes {
 public:
  // Writes [serial, address, length] at `at`; serial 0 for none.
  void hold(const SharedBytes& bytes, double* at) {
    if (!bytes) {
      at[0] = at[1] = at[2] = 0;
      return;
    }
    if (bytes != held_) {
      held_ = bytes;
      ++serial_;
    }
    at[0] = double(serial_);
    at[1] = tether::bindings::address_of(held_->data());
    at[2] = double(held_->size());
  }

 private:
  SharedBytes held_;
  std::uint64_t serial_ = 0;
};

// The names of an enum's first `n` values, as a JS array (the glue reads numbers by these names).
inline emscripten::val names_of(std::size_t n, std::string_view (*name)(int)) {
  emscripten::val list = emscripten::val::array();
  for (std::size_t i = 0; i < n; ++i) list.set(i, std::string(name(int(i))));
  return list;
}

}  // namespace tether::cockpit::bindings
