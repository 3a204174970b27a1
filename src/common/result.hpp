// A value or an error, for cores that never throw (DESIGN.md rule 2). std::expected is C++23.
#pragma once
#include <utility>
#include <variant>

namespace tether {

template <class E>
struct Err {
  E error;
};
template <class E>
Err<E> err(E e) {
  return Err<E>{std::move(e)};
}

template <class T, class E>
class Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Err<E> e) : v_(std::in_place_index<1>, std::move(e.error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  const E& error() const { return std::get<1>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, E> v_;
};

}  // namespace tether
