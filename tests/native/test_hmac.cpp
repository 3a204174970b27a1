// HMAC-SHA256 (src/common/hmac.hpp) against RFC 4231's test vectors, and the MAC comparison.
#include <catch2/catch.hpp>
#include <string>

#include "common/hmac.hpp"

using namespace tether;

TEST_CASE("HMAC-SHA256: RFC 4231 test cases 1, 2, 3 and 6") {
  const std::string k1(20, '\x0b');
  CHECK(
      to_hex(hmac_sha256(ByteView(std::string_view(k1)), ByteView(std::string_view("Hi There")))) ==
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(to_hex(hmac_sha256(ByteView(std::string_view("Jefe")),
                           ByteView(std::string_view("what do ya want for nothing?")))) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  const std::string k3(20, '\xaa'), d3(50, '\xdd');
  CHECK(to_hex(hmac_sha256(ByteView(std::string_view(k3)), ByteView(std::string_view(d3)))) ==
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  const std::string k6(131, '\xaa');  // longer than a block: hashed first
  CHECK(to_hex(hmac_sha256(ByteView(std::string_view(k6)),
                           ByteView(std::string_view(
                               "Test Using Larger Than Block-Size Key - Hash Key First")))) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("HMAC: constant-time comparison is equality") {
  const std::string a = "0123456789abcdef", b = "0123456789abcdeF";
  CHECK(constant_time_equal(ByteView(std::string_view(a)), ByteView(std::string_view(a))));
  CHECK(!constant_time_equal(ByteView(std::string_view(a)), ByteView(std::string_view(b))));
  CHECK(
      !constant_time_equal(ByteView(std::string_view(a)), ByteView(std::string_view(a).substr(1))));
}
