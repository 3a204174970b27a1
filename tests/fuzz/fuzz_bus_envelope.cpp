// libFuzzer harness: the bus envelope parser and the bus state machine behind it, as a hostile
// peer would drive them. Properties: nothing crashes or leaks; every refusal explains itself; an
// accepted envelope re-serialises to a canonical form that parses again to the same form; the bus
// survives the input live, replayed as a history_replay's payload and as a handoff, answers it as
// a share command or a refused file would be answered, and keeps its
// bounds; the one-to-one transfer receiver survives the payload too. Differential: the one-pass
// scanner (bus/scan.hpp) accepts only what the DOM path accepts, with the same envelope and the
// same glue result, and parse_envelope's verdict is always the DOM path's. A payload kept as text
// (PayloadForm::text_unless_read, what the Bus uses) has the DOM path's values and canonical
// bytes, and reaches the message event with them.
#include <cstddef>
#include <cstdint>

#include "bus/bus.hpp"
#include "bus/json_out.hpp"
#include "bus/scan.hpp"
#include "bus/shares.hpp"
#include "bus/transfer.hpp"

using namespace tether;
using namespace tether::bus;

namespace {

std::string js_text(const Json& j) {
  std::string out;
  append_json(out, j, JsonNumbers::js_double);
  return out;
}

// nlohmann directly: glue results nest deeper than an envelope may (JSON.parse, which reads them
// in the glue, has no depth bound).
Json parse_unbounded(const std::string& text) {
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) __builtin_trap();
  return parsed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView in(data, size);
  auto e = parse_envelope(in);
  auto dom = parse_envelope_dom(in);
  if (e.ok() != dom.ok()) __builtin_trap();
  if (!e && (e.error().code != dom.error().code || e.error().field != dom.error().field ||
             e.error().detail != dom.error().detail))
    __builtin_trap();
  if (e && serialize_envelope(e.value()) != serialize_envelope(dom.value())) __builtin_trap();
  const auto s = scan_envelope(in);
  if (s) {
    if (!dom) __builtin_trap();
    std::string result;
    append_scanned_result(result, *s);
    if (js_text(parse_unbounded(result)) !=
        js_text(Json{{"ok", true}, {"envelope", envelope_to_json(dom.value())}}))
      __builtin_trap();
  }
  // The form the Bus receives in: same verdict, same values, same canonical bytes; text only for
  // a scanned envelope of a type the bus does not read, and then the scanner's bytes verbatim.
  ParseInfo info;
  auto lazy = parse_envelope(in, &info, PayloadForm::text_unless_read);
  if (lazy.ok() != dom.ok() || info.scanned != s.has_value()) __builtin_trap();
  if (lazy) {
    if (serialize_envelope(lazy.value()) != serialize_envelope(dom.value())) __builtin_trap();
    if (js_text(lazy->payload_value()) != js_text(dom->payload)) __builtin_trap();
    if (js_text(envelope_to_json(lazy.value())) != js_text(envelope_to_json(dom.value())))
      __builtin_trap();
    if (!lazy->payload_text.empty()) {
      if (!s || bus_reads_payload(lazy->type) || !lazy->payload.is_null() ||
          lazy->payload_text != s->payload)
        __builtin_trap();
      std::string as_received;
      append_envelope_as_received(as_received, lazy.value());
      if (js_text(parse_unbounded(as_received)) != js_text(envelope_to_json(dom.value())))
        __builtin_trap();
    }
  }
  if (!e) {
    if (e.error().detail.empty()) __builtin_trap();
  } else {
    const std::string canonical = serialize_envelope(e.value());
    auto again = parse_envelope(ByteView(std::string_view(canonical)));
    if (!again || serialize_envelope(again.value()) != canonical) __builtin_trap();
  }

  BusConfig c;
  c.self = Identity{"me", "agent", "Me", "i0"};
  c.accept_handoffs = true;
  // Odd sizes run the JavaScript host's mode: a scanned live message is read from the host's own
  // text through its spans, with no envelope written.
  c.message_spans_only = size % 2 == 1;
  Bus bus(c);
  bus.handle_connection_open("c1", 1000);
  // The envelope's own clock when it is a plausible one; ts may be any finite double (±1e308), and
  // converting that to an integer would be undefined.
  const bool plausible_ts = e && e->ts > -9e15 && e->ts < 9e15;
  const std::int64_t now = plausible_ts ? std::int64_t(e->ts) : 1000;
  // Live, on a connection that may or may not be bound yet.
  constexpr std::uint64_t kTag = 7;
  bus.handle_text("c1", in, now, kTag);
  for (const auto& ev : drain_events(bus)) {
    if (ev.kind != EventKind::message) continue;
    if (!dom || ev.replayed || ev.as_scanned != s.has_value()) __builtin_trap();
    if (c.message_spans_only && ev.as_scanned) {
      // Only ever for an envelope the scanner took, and then the host's own text is the envelope.
      if (ev.envelope || !ev.spans || ev.text_tag != kTag) __builtin_trap();
      continue;
    }
    std::string text;
    append_event_json(text, ev, bus);
    if (js_text(parse_unbounded(text)["envelope"]) != js_text(envelope_to_json(dom.value())))
      __builtin_trap();
  }
  if (e) {
    // Replayed, after asking its sender for history.
    (void)bus.request_history(e->from.stream_id, Json(10), now);
    Envelope replay;
    replay.id = "r";
    replay.type = MessageType::history_replay;
    replay.from = e->from;
    replay.to = "me";
    replay.ts = e->ts;
    replay.payload =
        envelope_to_json(e.value());  // one history_replay per message, the original as payload
    const std::string t = serialize_envelope(replay);
    bus.handle_text("c1", ByteView(std::string_view(t)), now);
    // Whatever it was, answer, confirm and retry as an app would.
    for (const auto& ev : drain_events(bus)) {
      if (ev.kind == EventKind::handoff) (void)bus.confirm_handoff(ev.key, now);
      if (ev.kind == EventKind::message && ev.envelope)
        (void)bus.ack(*ev.envelope, Json::object(), now);
    }
    FileReceiver rx(ReceiverLimits{1 << 20, 2, 2 << 20});
    const Json p = e->payload_value();
    auto offered = rx.offer(e->from.stream_id, p);
    (void)rx.chunk(e->from.stream_id, p);
    (void)rx.complete(e->from.stream_id, p);
    // What the sidecar answers with: a file_ack refusal naming the transfer, a share command's
    // verdict and a command_response, all of which must be valid envelopes of ours.
    const Json refusal = file_ack_refusal(p, offered ? "x" : offered.error().detail);
    if (!refusal.is_object() || !refusal.contains("transferId")) __builtin_trap();
    (void)bus.send(e->from.stream_id, MessageType::file_ack, refusal, std::nullopt, now);
    if (offered)
      (void)bus.send(e->from.stream_id, MessageType::file_ack,
                     file_ack_received(offered.value(), "f"), std::nullopt, now);
    if (auto cmd = parse_share_command(e.value())) {
      if (!cmd->ok() && cmd->error().detail.empty()) __builtin_trap();
      if (cmd->ok() && !share_command_payload(cmd->value())) __builtin_trap();
      (void)bus.respond(
          e.value(),
          cmd->ok() ? Json{{"result", cmd->value().path}} : Json{{"error", cmd->error().detail}},
          now);
    }
  }
  for (int i = 0; i < 1000; ++i) {
    auto t = bus.poll_transmit();
    if (!t) break;
    if (!parse_envelope(ByteView(std::string_view(*t->text))))
      __builtin_trap();  // we only emit valid envelopes
    bus.handle_transmit_result(t->token, (i + size) % 3 != 0, 0);
  }
  bus.handle_timeout(now + 3'600'000);
  (void)drain_events(bus);
  if (bus.queued_total() > kMaxQueuedPerPeer * kMaxQueuedPeers) __builtin_trap();
  if (bus.history(1000, "").size() > kHistoryCapacity) __builtin_trap();
  return 0;
}
