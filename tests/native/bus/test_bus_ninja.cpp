// The bus messages whose shapes the public implementation fixes (agent-bus-notes.md § Bus
// messages, § Sizes the public implementation sends): heartbeats, the first announce addressed to
// a transport id, the shared-folder commands, file_ack refusals, and the sizes it sends. Each
// test is written against its behaviour, so each fails with tether's old one.
#include <catch2/catch.hpp>

#include "bus/shares.hpp"
#include "bus/transfer.hpp"
#include "common/base64.hpp"
#include "harness.hpp"

using namespace bus_test;

namespace {

Bus announced(const std::string& self, const std::string& conn, const std::string& peer) {
  Bus b(config(self));
  b.handle_connection_open(conn, 0);
  deliver(b, conn, env("a0", MessageType::announce, ident(peer), std::nullopt));
  pump_all(b);
  drain_events(b);
  return b;
}

}  // namespace

TEST_CASE("bus ping: every ping gets pong {pingId, pingTs, pongTs} to the pinger, now or never") {
  Bus b = announced("me", "ca", "A");
  deliver(b, "ca", env("p1", MessageType::ping, ident("A"), std::nullopt, Json{{"ts", 1234}}, 1234),
          1500);
  auto offers = pump_all(b);
  auto pongs = of_type(offers, MessageType::pong);
  REQUIRE(pongs.size() == 1);
  CHECK(offers[0].conn == "ca");
  CHECK(pongs[0].to == std::string("A"));
  CHECK(pongs[0].from.stream_id == "me");
  CHECK(pongs[0].payload == Json{{"pingId", "p1"}, {"pingTs", 1234}, {"pongTs", 1500}});
  // A ping without a usable payload ts: the envelope's own ts.
  deliver(b, "ca",
          env("p2", MessageType::ping, ident("A"), std::nullopt, Json{{"ts", "soon"}}, 1600), 1700);
  pongs = of_type(pump_all(b), MessageType::pong);
  REQUIRE(pongs.size() == 1);
  CHECK(pongs[0].payload == Json{{"pingId", "p2"}, {"pingTs", 1600}, {"pongTs", 1700}});
  // The ping itself is delivered like any message; the pong is never queued nor kept.
  deliver(b, "ca", env("p3", MessageType::ping, ident("A"), std::nullopt, Json{{"ts", 1}}, 1),
          1800);
  CHECK(of_type(pump_none(b), MessageType::pong, /*accepted_only=*/false).size() == 1);
  CHECK(b.queued("A") == 0);
  CHECK(pump_all(b).empty());
  for (const auto& e : b.history(200, "")) CHECK(e.type != MessageType::pong);
  CHECK(events_of(drain_events(b), EventKind::message).size() == 3);
}

TEST_CASE("bus skill_update: changes the peer's announce field by field, and says so") {
  Bus b(config("me"));
  b.handle_connection_open("ca", 0);
  deliver(b, "ca",
          env("a0", MessageType::announce, ident("A"), std::nullopt,
              Json{{"skills", Json::array({"chat"})},
                   {"status", "online"},
                   {"version", "0.2.2"},
                   {"topics", Json::array({"t"})}}));
  pump_all(b);
  drain_events(b);
  REQUIRE(b.peer("ca"));
  CHECK_FALSE(b.peer("ca")->handoff);
  // As the public implementation applies it: each field present replaces the old one, the rest
  // stay, and a peer that now lists handoff-v1 can take handoffs.
  deliver(b, "ca",
          env("u1", MessageType::skill_update, ident("A"), std::nullopt,
              Json{{"skills", Json::array({"chat", "handoff-v1"})},
                   {"status", "busy"},
                   {"statusDetail", "compiling"}}));
  auto ev = drain_events(b);
  CHECK(events_of(ev, EventKind::rejected).empty());
  CHECK(events_of(ev, EventKind::peer).size() == 1);
  const auto peer = b.peer("ca");
  REQUIRE(peer);
  const Json& a = peer->announce;
  CHECK(a["status"] == "busy");
  CHECK(a["statusDetail"] == "compiling");
  CHECK(a["skills"] == Json::array({"chat", "handoff-v1"}));
  CHECK(a["version"] == "0.2.2");
  CHECK(a["topics"] == Json::array({"t"}));
  CHECK(peer->handoff);
  // A field of the wrong type changes nothing; a payload that is not an object is refused.
  deliver(b, "ca",
          env("u2", MessageType::skill_update, ident("A"), std::nullopt, Json{{"status", 7}}));
  CHECK(b.peer("ca")->announce["status"] == "busy");
  deliver(b, "ca", env("u3", MessageType::skill_update, ident("A"), std::nullopt, Json("busy")));
  auto rej = events_of(drain_events(b), EventKind::rejected);
  REQUIRE(rej.size() == 1);
  CHECK(rej[0].error.code == BusErrorCode::bad_payload);
}

TEST_CASE(
    "bus announce: one addressed to our transport id is ours, and nothing else so addressed is") {
  BusConfig c = config("me");
  c.transport_id = "uuid-of-me";
  Bus b(c);
  b.handle_connection_open("ca", 0);
  pump_all(b);
  deliver(b, "ca",
          env("a0", MessageType::announce, ident("A"), std::string("uuid-of-me"),
              Json{{"skills", Json::array({"handoff-v1"})},
                   {"status", "online"},
                   {"version", "0.2.2"},
                   {"topics", Json::array()}}));
  auto ev = drain_events(b);
  CHECK(events_of(ev, EventKind::rejected).empty());
  REQUIRE(b.peer("ca"));
  CHECK(b.peer("ca")->stream_id == std::string("A"));
  CHECK(b.peer("ca")->handoff);
  // Only an announce: a chat to the transport id, or an announce to somebody else's, is not ours.
  deliver(
      b, "ca",
      env("c1", MessageType::chat, ident("A"), std::string("uuid-of-me"), Json{{"text", "hi"}}));
  deliver(b, "ca", env("a1", MessageType::announce, ident("A"), std::string("uuid-of-you")));
  auto rej = events_of(drain_events(b), EventKind::rejected);
  REQUIRE(rej.size() == 2);
  for (const auto& r : rej) CHECK(r.error.code == BusErrorCode::not_for_us);
  // Without a transport id configured, our stream id is the only address.
  Bus plain(config("me"));
  plain.handle_connection_open("ca", 0);
  deliver(plain, "ca", env("a0", MessageType::announce, ident("A"), std::string("uuid-of-me")));
  CHECK(events_of(drain_events(plain), EventKind::rejected).size() == 1);
}

TEST_CASE(
    "bus shares: the shares, list-files and get-file commands, parsed and built with their "
    "bounds") {
  auto cmd = [](Json payload) {
    return env("c1", MessageType::command, ident("A"), std::string("me"), std::move(payload));
  };
  auto got = parse_share_command(
      cmd(Json{{"command", "get-file"}, {"args", {{"share", "docs"}, {"path", "guide.md"}}}}));
  REQUIRE(got);
  REQUIRE(got->ok());
  CHECK(got->value().kind == ShareCommand::Kind::get_file);
  CHECK(got->value().share == "docs");
  CHECK(got->value().path == "guide.md");
  // As the public implementation reads them: names trimmed and case-insensitive, args trimmed.
  auto list =
      parse_share_command(cmd(Json{{"command", " List-Files "}, {"args", {{"share", " docs "}}}}));
  REQUIRE((list && list->ok()));
  CHECK(list->value().kind == ShareCommand::Kind::list_files);
  CHECK(list->value().share == "docs");
  CHECK(list->value().path.empty());
  // The command name's cheap bound (3 bytes per character): past it, not a share command at all.
  const std::string padded = "get-file" + std::string(3 * kMaxCommandNameChars - 8, ' ');
  CHECK(parse_share_command(
      cmd(Json{{"command", padded}, {"args", {{"share", "d"}, {"path", "p"}}}})));
  CHECK_FALSE(parse_share_command(
      cmd(Json{{"command", padded + " "}, {"args", {{"share", "d"}, {"path", "p"}}}})));
  auto shares = parse_share_command(cmd(Json{{"command", "shares"}}));
  REQUIRE((shares && shares->ok()));
  CHECK(shares->value().kind == ShareCommand::Kind::shares);
  // Not ours: another command, or not a command.
  CHECK_FALSE(parse_share_command(cmd(Json{{"command", "status"}})));
  CHECK_FALSE(parse_share_command(cmd(Json{{"run", "make"}})));
  CHECK_FALSE(parse_share_command(
      env("x", MessageType::chat, ident("A"), std::nullopt, Json{{"command", "shares"}})));
  // Ours with bad arguments: refused with what is missing, to be answered, never ignored.
  for (const Json& bad :
       {Json{{"command", "get-file"}, {"args", {{"share", "docs"}}}},
        Json{{"command", "get-file"}, {"args", {{"share", " "}, {"path", "a"}}}},
        Json{{"command", "list-files"}},
        Json{{"command", "list-files"},
             {"args", {{"share", std::string(kMaxShareNameChars + 1, 's')}}}},
        Json{{"command", "get-file"},
             {"args", {{"share", "d"}, {"path", std::string(kMaxSharePathChars + 1, 'p')}}}}}) {
    INFO(bad.dump());
    auto r = parse_share_command(cmd(bad));
    REQUIRE(r);
    REQUIRE_FALSE(r->ok());
    CHECK(r->error().code != BusErrorCode::bad_field);
    CHECK_FALSE(r->error().detail.empty());
  }
  auto at_bound =
      parse_share_command(cmd(Json{{"command", "get-file"},
                                   {"args",
                                    {{"share", std::string(kMaxShareNameChars, 's')},
                                     {"path", std::string(kMaxSharePathChars, 'p')}}}}));
  REQUIRE((at_bound && at_bound->ok()));
  // Built: exactly the public shape.
  CHECK(share_command_payload({ShareCommand::Kind::get_file, "docs", "a/b.md"}).value() ==
        Json{{"command", "get-file"}, {"args", {{"share", "docs"}, {"path", "a/b.md"}}}});
  CHECK(share_command_payload({ShareCommand::Kind::list_files, "docs", ""}).value() ==
        Json{{"command", "list-files"}, {"args", {{"share", "docs"}}}});
  CHECK(share_command_payload({ShareCommand::Kind::shares, "", ""}).value() ==
        Json{{"command", "shares"}});
  CHECK_FALSE(share_command_payload({ShareCommand::Kind::get_file, "docs", " "}).ok());
  CHECK_FALSE(share_command_payload(
                  {ShareCommand::Kind::get_file, std::string(kMaxShareNameChars + 1, 's'), "a"})
                  .ok());
}

TEST_CASE(
    "bus files: a refused offer, chunk or completion is answered with file_ack {ok: false, "
    "error}") {
  // Named by the refused message's transferId when it has a usable one, else "invalid".
  CHECK(
      file_ack_refusal(Json{{"transferId", "t-123456"}}, "too many incomplete transfers") ==
      Json{{"transferId", "t-123456"}, {"ok", false}, {"error", "too many incomplete transfers"}});
  CHECK(file_ack_refusal(Json{{"transferId", 7}}, "bad")["transferId"] == kUnnamedTransferId);
  // An over-long id is cut to the bound, as the public implementation cuts it (slice(0, 128)),
  // never through a surrogate pair; an empty one names nothing.
  CHECK(file_ack_refusal(Json{{"transferId", std::string(kMaxTransferIdChars + 1, 't')}},
                         "bad")["transferId"] == std::string(kMaxTransferIdChars, 't'));
  CHECK(file_ack_refusal(
            Json{{"transferId", std::string(kMaxTransferIdChars - 1, 't') + "\xF0\x9F\x98\x80"}},
            "bad")["transferId"] == std::string(kMaxTransferIdChars - 1, 't'));
  CHECK(file_ack_refusal(Json{{"transferId", ""}}, "bad")["transferId"] == kUnnamedTransferId);
  CHECK(file_ack_refusal(Json("not an object"), "bad")["transferId"] == kUnnamedTransferId);
  CHECK(file_ack_refusal(Json{{"transferId", "t"}}, "")["error"] == "refused");
  CHECK(file_ack_refusal(Json{{"transferId", "t"}},
                         std::string(kMaxErrorTextBytes + 10, 'e'))["error"]
            .get<std::string>()
            .size() == kMaxErrorTextBytes);
  FileOffer o;
  o.transfer_id = "t1";
  o.name = "a.txt";
  o.mime_type = "text/plain";
  o.kind = "file";
  o.size = 3;
  o.sha256 = std::string(64, 'a');
  CHECK(file_ack_received(o, "a.txt") == Json{{"transferId", "t1"},
                                              {"ok", true},
                                              {"name", "a.txt"},
                                              {"mimeType", "text/plain"},
                                              {"kind", "file"},
                                              {"size", 3},
                                              {"sha256", std::string(64, 'a')},
                                              {"savedPath", "a.txt"}});
}

TEST_CASE(
    "bus files: the sizes the public implementation sends are taken, at the bound and refused one "
    "past") {
  // One-to-one chunks from 1 KiB to 1 MiB, both ways.
  auto offer_with = [](std::int64_t chunk, std::int64_t size) {
    return Json{{"transferId", "t-1"},
                {"name", std::string(kMaxFileNameChars, 'n')},
                {"mimeType", std::string(kMaxMimeTypeChars, 'm')},
                {"kind", "file"},
                {"size", size},
                {"sha256", std::string(64, 'a')},
                {"chunkSize", chunk},
                {"totalChunks", (size + chunk - 1) / chunk}};
  };
  CHECK(parse_file_offer(offer_with(kFileMinChunkSize, 5000), kFileMaxBytes).ok());
  CHECK(parse_file_offer(offer_with(kFileMaxChunkSize, 5'000'000), kFileMaxBytes).ok());
  CHECK_FALSE(parse_file_offer(offer_with(kFileMinChunkSize - 1, 5000), kFileMaxBytes).ok());
  CHECK_FALSE(parse_file_offer(offer_with(kFileMaxChunkSize + 1, 5'000'000), kFileMaxBytes).ok());
  Json long_name = offer_with(kFileMinChunkSize, 10);
  long_name["name"] = std::string(kMaxFileNameChars + 1, 'n');
  CHECK_FALSE(parse_file_offer(long_name, kFileMaxBytes).ok());
  const Bytes data(3 * kFileMaxChunkSize - 5, 0x5a);
  CHECK_FALSE(plan_file_send(ByteView(data), "d.bin", "", "", kFileMinChunkSize - 1, "").ok());
  CHECK_FALSE(plan_file_send(ByteView(data), "d.bin", "", "", kFileMaxChunkSize + 1, "").ok());
  auto plan = plan_file_send(ByteView(data), "d.bin", "", "", kFileMaxChunkSize, "t-big");
  REQUIRE(plan.ok());
  // A 1 MiB chunk's envelope is over kMaxEnvelopeBytes but within the file_chunk bound: it
  // travels, is received and verifies.
  Bus a(config("A"));
  Bus b(config("B"));
  a.handle_connection_open("toB", 0);
  b.handle_connection_open("toA", 0);
  for (const auto& o : pump_all(a)) b.handle_text("toA", ByteView(std::string_view(o.text)), 0);
  for (const auto& o : pump_all(b)) a.handle_text("toB", ByteView(std::string_view(o.text)), 0);
  drain_events(a);
  drain_events(b);
  FileReceiver rx;
  REQUIRE(a.send("B", MessageType::file_offer, file_offer_json(plan->offer), std::nullopt, 1).ok());
  for (std::uint32_t i = 0; i < plan->offer.total_chunks; ++i) {
    auto sent = a.send("B", MessageType::file_chunk,
                       file_chunk_payload(plan->offer, ByteView(data), i), std::nullopt, 1);
    REQUIRE(sent.ok());
    if (i == 0) CHECK(sent->text->size() > kMaxEnvelopeBytes);
    CHECK(sent->text->size() <= kMaxFileChunkEnvelopeBytes);
  }
  REQUIRE(
      a.send("B", MessageType::file_complete, file_complete_payload(plan->offer), std::nullopt, 1)
          .ok());
  for (const auto& o : pump_all(a)) b.handle_text("toA", ByteView(std::string_view(o.text)), 2);
  std::uint64_t got = 0;
  bool complete = false;
  for (const auto& ev : drain_events(b)) {
    REQUIRE(ev.kind == EventKind::message);
    const Envelope& e = *ev.envelope;
    const Json p = e.payload_value();
    if (e.type == MessageType::file_offer) REQUIRE(rx.offer("A", p).ok());
    if (e.type == MessageType::file_chunk) got += rx.chunk("A", p)->data.size();
    if (e.type == MessageType::file_complete) complete = rx.complete("A", p).ok();
  }
  CHECK(got == data.size());
  CHECK(complete);
  // Any other type stays within kMaxEnvelopeBytes, sent or received.
  CHECK_FALSE(a.send("B", MessageType::chat, Json{{"text", std::string(kMaxEnvelopeBytes, 'x')}},
                     std::nullopt, 3)
                  .ok());
}
