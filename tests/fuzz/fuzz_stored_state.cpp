// libFuzzer harness: the parsers of state a host stores and hands back, which no other harness
// reaches: the hosted mailbox's records (mailbox/records.hpp, docs/mailbox.md § Storage: a host's
// storage may be corrupted, truncated or left by another version), the room relay's admission
// configuration, saved budgets and sockets' read states (room/admission.hpp: ROOM_LIMITS from an
// operator, budgets from Durable Object storage, read states from hibernated sockets'
// attachments), and base64 (common/base64.hpp, used by fixtures and swarm messages).
// Byte 0 picks the parser; for a record, bytes 1-2 (u16-LE) give the key's length, then the key,
// then the value.
//
// Properties: nothing crashes or leaks; every refusal says why; an accepted record re-encodes to
// a record that decodes again to the same encoding (the core reads back what it writes); accepted
// limits are positive and finite, each one the input named or its default; a budget that parses
// writes back (budget_json) to text that parses to the same numbers; a read state that parses is
// consistent and is what a socket resumed with it reports, one that does not leaves it blind; base64 that decodes encodes
// back to text that decodes to the same bytes, and encoded bytes always decode.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "common/base64.hpp"
#include "mailbox/records.hpp"
#include "room/admission.hpp"

using namespace tether;

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

std::string encode(const mailbox::Record& r) {
  return std::visit([](const auto& v) { return mailbox::encode_record(v); }, r);
}

std::string key_of(const mailbox::Record& r) {
  struct {
    std::string operator()(const mailbox::Meta&) { return mailbox::meta_key(); }
    std::string operator()(const mailbox::Pairing& p) { return mailbox::pair_key(p.pair); }
    std::string operator()(const mailbox::Code& c) { return mailbox::code_key(c.hash); }
    std::string operator()(const mailbox::Message& m) { return mailbox::message_key(m.seq); }
  } v;
  return std::visit(v, r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] & 3) {
    case 0: {
      if (rest.size() < 2) return 0;
      const std::size_t k = std::min<std::size_t>(
          std::uint8_t(rest[0]) | std::uint8_t(rest[1]) << 8, rest.size() - 2);
      const std::string_view key = rest.substr(2, k), value = rest.substr(2 + k);
      auto r = mailbox::decode_record(key, value);
      if (!r) {
        check(!r.error().empty());
        break;
      }
      check(key_of(r.value()) == key);
      const std::string again = encode(r.value());
      auto back = mailbox::decode_record(key, again);
      check(back.ok() && encode(back.value()) == again);
      break;
    }
    case 1: {
      const room::ParsedLimits p = room::parse_admission_limits(rest);
      if (!p.error.empty()) break;
      const room::AdmissionLimits defaults;
      for (std::size_t i = 0; i < room::kAdmissionLimitCount; ++i) {
        const double v = room::limit_value(p.limits, i);
        check(std::isfinite(v) && v > 0);
        // (A key spelt with escapes may name it without its letters: only plain text is judged.)
        if (rest.find('\\') == std::string_view::npos &&
            rest.find(room::kAdmissionLimitNames[i]) == std::string_view::npos)
          check(v == room::limit_value(defaults, i));
      }
      break;
    }
    case 2: {
      // The same bytes as a socket's kept read state: a resumed socket counts on from it exactly,
      // or (refused) resumes blind.
      auto rs = room::parse_read_state(rest);
      if (rs) {
        check(rs->acked <= rs->sent && rs->marks.size() <= room::kMaxReadAckMarks);
        double last = rs->acked;
        for (double m : rs->marks) {
          check(m > last && m <= rs->sent);
          last = m;
        }
      }
      room::Admission adm;
      room::OpenedSocket how;
      how.resumed = true;
      how.read_state = rest;
      const std::uint64_t conn = adm.handle_opened("r", "w", 0, how);
      check(adm.read_state(conn) == (rs ? room::read_state_json(*rs) : std::string()));
      if (rs) check(room::parse_read_state(room::read_state_json(*rs)).has_value());

      auto b = room::parse_budget(rest);
      if (!b) break;
      const std::string text = room::budget_json(*b);
      auto again = room::parse_budget(text);
      check(again.has_value());
      check(room::budget_json(*again) == text);
      break;
    }
    case 3: {
      if (auto bytes = base64_decode(rest)) {
        const std::string text = base64_encode(ByteView(*bytes));
        auto back = base64_decode(text);
        check(back && *back == *bytes);
      }
      // Any bytes encode, and decode back.
      const std::string text = base64_encode(ByteView(data + 1, size - 1));
      auto back = base64_decode(text);
      check(back && back->size() == size - 1 && std::equal(back->begin(), back->end(), data + 1));
      break;
    }
  }
  return 0;
}
