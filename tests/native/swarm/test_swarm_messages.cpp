// Swarm message parsing and encoding (agent-bus-and-swarm.md § Swarm transfer, § Untrusted wire
// input; shapes from agent-bus-notes.md): round trips, every refusal, and the SCTP size arithmetic.
#include <catch2/catch.hpp>

#include "common/base64.hpp"
#include "swarm/bitfield.hpp"
#include "swarm/messages.hpp"
#include "swarm/session.hpp"

using namespace tether;
using namespace tether::swarm;

namespace {

const std::string kId(64, 'a');
const std::string kHash = std::string(63, '0') + "1";

Result<Message, Refusal> parse(const std::string& type, const std::string& payload) {
  auto j = parse_json(ByteView(std::string_view(payload)));
  REQUIRE(j.ok());
  return parse_message(type, j.value);
}

MessageError refusal_of(const std::string& type, const std::string& payload) {
  auto m = parse(type, payload);
  REQUIRE_FALSE(m.ok());
  CHECK_FALSE(m.error().detail.empty());
  return m.error().code;
}

std::string hashes_json(std::size_t n, const std::string& h = kHash) {
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) out += (i ? ",\"" : "\"") + h + "\"";
  return out + "]";
}

FileId fid0() {
  return sha256(ByteView(std::string_view("own")));
}

std::vector<ChunkHash> some_hashes(std::uint32_t n) {
  std::vector<ChunkHash> v;
  for (std::uint32_t i = 0; i < n; ++i)
    v.push_back(sha256(ByteView(std::string_view(std::to_string(i)))));
  return v;
}

}  // namespace

TEST_CASE("swarm messages: every type round-trips through its canonical JSON", "[swarm]") {
  const FileId id = sha256(ByteView(std::string_view("file")));
  FileShape shape{4000, 1024, 4};
  auto inline_offer = make_offer(id, "a.bin", "application/octet-stream", shape, some_hashes(4));
  REQUIRE(inline_offer.ok());
  FileShape big{300ull * 65536, 65536, 300};
  auto paged_offer = make_offer(id, "b.bin", "application/octet-stream", big, some_hashes(300));
  REQUIRE(paged_offer.ok());
  CHECK(paged_offer->paged());
  CHECK(paged_offer->pages == 2);
  ManifestPage page{id, 1, 2, 256, *paged_offer->chunk_hashes_hash, some_hashes(44)};
  std::vector<Message> all = {
      inline_offer.value(),
      paged_offer.value(),
      ManifestRequest{id, 256, {0, 1}},
      page,
      Announce{id, 20, {0xff, 0x0f, 0x0a}},
      Announce{id, 13, {0x05, 0x10}},
      Have{id, {1, 2, 3}},
      Request{id, 7, true},
      Request{id, 8, false},
      ChunkMessage{id, 3, {1, 2, 3, 4, 5}},
  };
  for (const auto& m : all) {
    const std::string text = encode_message_text(m);
    INFO(text);
    auto back = parse_message_text(ByteView(std::string_view(text)));
    REQUIRE(back.ok());
    CHECK(message_type(back.value()) == message_type(m));
    CHECK(encode_message_text(back.value()) == text);
  }
  CHECK(encode_payload(Request{id, 7, false}) == "{\"fileId\":\"" + to_hex(id) + "\",\"index\":7}");
  CHECK(encode_payload(Request{id, 7, true}) ==
        "{\"fileId\":\"" + to_hex(id) + "\",\"index\":7,\"bin\":1}");
}

TEST_CASE("swarm messages: offers with inconsistent or oversized shapes are refused", "[swarm]") {
  auto offer = [](const std::string& fields) {
    return "{\"fileId\":\"" + kId + "\",\"name\":\"f\",\"mimeType\":\"x/y\"," + fields + "}";
  };
  const std::string digest_of_nothing = to_hex(sha256(ByteView()));
  // totalChunks must be ceil(size / chunkSize).
  CHECK(refusal_of("swarm_offer",
                   offer("\"size\":2048,\"chunkSize\":1024,\"totalChunks\":3,\"chunkHashes\":" +
                         hashes_json(3))) == MessageError::inconsistent_shape);
  // At most 1,000,000 chunks, refused before anything else is read.
  CHECK(refusal_of("swarm_offer",
                   offer("\"size\":1024001024,\"chunkSize\":1024,\"totalChunks\":1000001,"
                         "\"chunkHashesHash\":\"" +
                         kId + "\",\"manifestPageSize\":256,\"manifestPages\":3907")) ==
        MessageError::too_many_chunks);
  CHECK(refusal_of("swarm_offer", offer("\"size\":10,\"chunkSize\":0,\"totalChunks\":1")) ==
        MessageError::out_of_range);
  // Chunk sizes from 1 KiB to 16 MiB (the public implementation's range), at the bounds and one
  // past.
  CHECK(refusal_of("swarm_offer", offer("\"size\":10,\"chunkSize\":1023,\"totalChunks\":1")) ==
        MessageError::out_of_range);
  CHECK(refusal_of("swarm_offer", offer("\"size\":10,\"chunkSize\":16777217,\"totalChunks\":1")) ==
        MessageError::out_of_range);
  for (const char* chunk : {"1024", "16777216"})
    CHECK(parse("swarm_offer", offer("\"size\":10,\"chunkSize\":" + std::string(chunk) +
                                     ",\"totalChunks\":1,\"chunkHashes\":" + hashes_json(1)))
              .ok());
  CHECK(refusal_of("swarm_offer", offer("\"size\":-1,\"chunkSize\":10,\"totalChunks\":1")) ==
        MessageError::bad_field);
  CHECK(refusal_of("swarm_offer", offer("\"size\":1.5,\"chunkSize\":10,\"totalChunks\":1")) ==
        MessageError::bad_field);
  // Inline lists: one per chunk (checked before the list is read), lowercase SHA-256, and
  // matching any digest given.
  CHECK(refusal_of("swarm_offer",
                   offer("\"size\":307200,\"chunkSize\":1024,\"totalChunks\":300,\"chunkHashes\":" +
                         hashes_json(301))) == MessageError::inconsistent_shape);
  CHECK(refusal_of("swarm_offer",
                   offer("\"size\":3072,\"chunkSize\":1024,\"totalChunks\":3,\"chunkHashes\":" +
                         hashes_json(2))) == MessageError::inconsistent_shape);
  CHECK(refusal_of("swarm_offer",
                   offer("\"size\":1024,\"chunkSize\":1024,\"totalChunks\":1,\"chunkHashes\":" +
                         hashes_json(1, std::string(63, '0') + "A"))) == MessageError::bad_hash);
  CHECK(refusal_of("swarm_offer",
                   offer("\"size\":1024,\"chunkSize\":1024,\"totalChunks\":1,\"chunkHashes\":" +
                         hashes_json(1) + ",\"chunkHashesHash\":\"" + kId + "\"")) ==
        MessageError::bad_hash);
  // Paged offers: a digest, and a page count that matches.
  CHECK(refusal_of("swarm_offer", offer("\"size\":1024000,\"chunkSize\":1024,\"totalChunks\":1000,"
                                        "\"manifestPageSize\":256,\"manifestPages\":4")) ==
        MessageError::missing_field);
  CHECK(
      refusal_of(
          "swarm_offer",
          offer("\"size\":1024000,\"chunkSize\":1024,\"totalChunks\":1000,\"chunkHashesHash\":\"" +
                kId + "\",\"manifestPageSize\":256,\"manifestPages\":5")) ==
      MessageError::inconsistent_shape);
  CHECK(
      refusal_of(
          "swarm_offer",
          offer("\"size\":1024000,\"chunkSize\":1024,\"totalChunks\":1000,\"chunkHashesHash\":\"" +
                kId + "\",\"manifestPageSize\":257,\"manifestPages\":4")) ==
      MessageError::out_of_range);
  CHECK(refusal_of("swarm_offer", "{\"fileId\":\"" + std::string(64, 'A') + "\"}") ==
        MessageError::bad_hash);
  // Names up to 1,024 UTF-16 units (as JavaScript counts: an emoji is two), MIME types up to 256.
  auto named = [&](const std::string& name, const std::string& mime) {
    return "{\"fileId\":\"" + kId + "\",\"name\":\"" + name + "\",\"mimeType\":\"" + mime +
           "\",\"size\":0,\"chunkSize\":1024,\"totalChunks\":0,\"chunkHashes\":[]}";
  };
  std::string emoji;
  for (int i = 0; i < 512; ++i) emoji += "\xF0\x9F\x98\x80";
  CHECK(parse("swarm_offer", named(std::string(1024, 'n'), std::string(256, 'm'))).ok());
  CHECK(parse("swarm_offer", named(emoji, "x")).ok());
  CHECK(refusal_of("swarm_offer", named(std::string(1025, 'n'), "x")) ==
        MessageError::out_of_range);
  CHECK(refusal_of("swarm_offer", named(emoji + "n", "x")) == MessageError::out_of_range);
  CHECK(refusal_of("swarm_offer", named("n", std::string(257, 'm'))) == MessageError::out_of_range);
  CHECK(refusal_of("swarm_offer", named("  ", "x")) == MessageError::bad_field);
  CHECK(refusal_of("swarm_offer", named("", "x")) == MessageError::bad_field);
  // Blank as JavaScript's trim() sees it: the public implementation refuses such a name, so we
  // never offer one, and refuse it as well. Any other character makes a name.
  for (const char* blank :
       {"\xC2\xA0", "\xE3\x80\x80", "\xEF\xBB\xBF", "\xE2\x80\xA8 \xE1\x9A\x80"}) {
    INFO(blank);
    CHECK(refusal_of("swarm_offer", named(blank, "x")) == MessageError::bad_field);
    CHECK_FALSE(make_offer(fid0(), blank, "x/y", FileShape{10, 1024, 1}, some_hashes(1)).ok());
  }
  CHECK(parse("swarm_offer", named("\xC2\xA0"
                                   "a"
                                   "\xE3\x80\x80",
                                   "x"))
            .ok());
  CHECK(parse("swarm_offer", named("\xE2\x80\x8B", "x")).ok());  // U+200B is not whitespace
  // We never offer what the public implementation would refuse.
  const FileId fid = sha256(ByteView(std::string_view("own")));
  CHECK_FALSE(make_offer(fid, "f", "x/y", FileShape{10, 1023, 1}, some_hashes(1)).ok());
  CHECK_FALSE(
      make_offer(fid, std::string(1025, 'n'), "x/y", FileShape{10, 1024, 1}, some_hashes(1)).ok());
  CHECK_FALSE(make_offer(fid, " ", "x/y", FileShape{10, 1024, 1}, some_hashes(1)).ok());
  CHECK(
      make_offer(fid, std::string(1024, 'n'), "x/y", FileShape{10, 1024, 1}, some_hashes(1)).ok());
  // An empty file is a valid offer with an empty list.
  CHECK(parse("swarm_offer",
              offer("\"size\":0,\"chunkSize\":1024,\"totalChunks\":0,\"chunkHashesHash\":\"" +
                    digest_of_nothing + "\",\"manifestPageSize\":256,\"manifestPages\":0"))
            .ok());
}

TEST_CASE("swarm messages: an unsolicited million-chunk offer parses without a manifest",
          "[swarm]") {
  const std::string p =
      "{\"fileId\":\"" + kId +
      "\",\"name\":\"big\",\"mimeType\":\"x/y\",\"size\":65536000000,\"chunkSize\":65536,"
      "\"totalChunks\":1000000,\"chunkHashesHash\":\"" +
      kId + "\",\"manifestPageSize\":256,\"manifestPages\":3907}";
  CHECK(p.size() < 400);  // the offer stays small whatever the file's size
  auto m = parse("swarm_offer", p);
  REQUIRE(m.ok());
  const Offer& o = std::get<Offer>(m.value());
  CHECK(o.paged());
  CHECK(o.inline_hashes.capacity() == 0);  // nothing allocated until somebody asks for the file
}

TEST_CASE("swarm messages: hostile manifest pages and requests are refused at parse", "[swarm]") {
  auto page = [](const std::string& fields) {
    return "{\"fileId\":\"" + kId + "\",\"chunkHashesHash\":\"" + kId + "\"," + fields + "}";
  };
  CHECK(refusal_of("swarm_manifest_page",
                   page("\"page\":0,\"totalPages\":2,\"pageSize\":256,\"hashes\":" +
                        hashes_json(257))) == MessageError::too_many_hashes);
  CHECK(refusal_of("swarm_manifest_page",
                   page("\"page\":0,\"totalPages\":2,\"pageSize\":4,\"hashes\":" +
                        hashes_json(5))) == MessageError::too_many_hashes);
  CHECK(refusal_of("swarm_manifest_page",
                   page("\"page\":2,\"totalPages\":2,\"pageSize\":4,\"hashes\":" +
                        hashes_json(4))) == MessageError::out_of_range);
  CHECK(refusal_of("swarm_manifest_page",
                   page("\"page\":0,\"totalPages\":2,\"pageSize\":4,\"hashes\":" +
                        hashes_json(3))) == MessageError::inconsistent_shape);
  CHECK(refusal_of("swarm_manifest_page",
                   page("\"page\":1,\"totalPages\":2,\"pageSize\":4,\"hashes\":[]")) ==
        MessageError::inconsistent_shape);
  CHECK(refusal_of("swarm_manifest_page",
                   page("\"page\":0,\"totalPages\":1,\"pageSize\":4,\"hashes\":[\"" + kId +
                        "\",7]")) == MessageError::bad_hash);
  CHECK(parse("swarm_manifest_page",
              page("\"page\":1,\"totalPages\":2,\"pageSize\":4,\"hashes\":" + hashes_json(3)))
            .ok());
  // A request for more pages than one answer may carry.
  CHECK(
      refusal_of("swarm_manifest_request",
                 "{\"fileId\":\"" + kId +
                     "\",\"pageSize\":256,\"pages\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}") ==
      MessageError::out_of_range);
  CHECK(refusal_of("swarm_request", "{\"fileId\":\"" + kId + "\",\"index\":1000000}") ==
        MessageError::out_of_range);
  CHECK(refusal_of("swarm_request", "{\"fileId\":\"" + kId + "\",\"index\":\"1\"}") ==
        MessageError::bad_field);
  CHECK(refusal_of("swarm_have", "{\"fileId\":\"" + kId + "\",\"indexes\":\"1\"}") ==
        MessageError::missing_field);
  // Up to 4,096 indexes in one swarm_have (what the public implementation sends), refused past it.
  auto have_of = [](std::size_t n) {
    std::string many = "[";
    for (std::size_t i = 0; i < n; ++i) many += (i ? "," : "") + std::to_string(999'000 - i);
    return "{\"fileId\":\"" + kId + "\",\"indexes\":" + many + "]}";
  };
  auto at_bound = parse("swarm_have", have_of(kMaxHaveIndexes));
  REQUIRE(at_bound.ok());
  CHECK(std::get<Have>(at_bound.value()).indexes.size() == kMaxHaveIndexes);
  CHECK(refusal_of("swarm_have", have_of(kMaxHaveIndexes + 1)) == MessageError::out_of_range);
  CHECK(std::get<Have>(parse("swarm_have", "{\"fileId\":\"" + kId + "\",\"index\":5}").value())
            .indexes == std::vector<std::uint32_t>{5});
}

TEST_CASE("swarm messages: bitfields and base64 chunks are bounded before decoding", "[swarm]") {
  auto ann = [](const std::string& fields) {
    return "{\"fileId\":\"" + kId + "\"," + fields + "}";
  };
  CHECK(parse("swarm_announce",
              ann("\"totalChunks\":20,\"chunks\":\"" + base64_encode(Bytes{1, 2, 3}) + "\""))
            .ok());
  CHECK(refusal_of("swarm_announce",
                   ann("\"totalChunks\":20,\"chunks\":\"" + base64_encode(Bytes{1, 2}) + "\"")) ==
        MessageError::inconsistent_shape);
  CHECK(refusal_of("swarm_announce",
                   ann("\"totalChunks\":20,\"chunks\":\"" + base64_encode(Bytes(400, 0)) + "\"")) ==
        MessageError::out_of_range);
  CHECK(refusal_of("swarm_announce", ann("\"totalChunks\":20,\"chunks\":\"AB$=\"")) ==
        MessageError::bad_field);
  // A ranged announce (tether's old extension) is not a whole bitfield: refused, as the public
  // implementation refuses it.
  CHECK(refusal_of("swarm_announce",
                   ann("\"totalChunks\":2000,\"firstChunk\":1000,\"chunks\":\"AA==\"")) ==
        MessageError::inconsistent_shape);
  CHECK(parse("swarm_announce",
              ann("\"totalChunks\":20,\"chunks\":\"" + base64_encode(Bytes{0, 0, 0x0f}) + "\""))
            .ok());
  CHECK(parse("swarm_announce", ann("\"totalChunks\":0,\"chunks\":\"\"")).ok());
  CHECK(refusal_of("swarm_announce", ann("\"totalChunks\":1000001,\"chunks\":\"\"")) ==
        MessageError::out_of_range);
  const std::string huge((std::size_t(kMaxChunkSize) + 2) / 3 * 4 + 4, 'A');
  CHECK(refusal_of("swarm_chunk", "{\"fileId\":\"" + kId + "\",\"index\":0,\"data\":\"" + huge +
                                      "\"}") == MessageError::out_of_range);
  CHECK(refusal_of("swarm_chunk", "{\"fileId\":\"" + kId + "\",\"index\":0,\"data\":\"A\"}") ==
        MessageError::bad_field);
  // Not ours: another layer's message, or JSON that is not a swarm message at all.
  CHECK(refusal_of("chat", "{}") == MessageError::unknown_type);
  CHECK(refusal_of("swarm_bogus", "{}") == MessageError::unknown_type);
  CHECK(refusal_of("swarm_have", "[]") == MessageError::not_object);
  CHECK(parse_message_text(ByteView(std::string_view("{\"type\":\"swarm_have\""))).error().code ==
        MessageError::not_json);
  CHECK(parse_message_text(ByteView(std::string_view("{\"payload\":{}}"))).error().code ==
        MessageError::missing_field);
}

TEST_CASE("swarm messages: the binary-lane frame", "[swarm]") {
  const FileId id = sha256(ByteView(std::string_view("f")));
  const Bytes chunk = {9, 8, 7};
  const Bytes frame = encode_chunk_frame(id, 0x01020304 % kMaxChunks, ByteView(chunk));
  REQUIRE(frame.size() == 43);
  CHECK(frame[0] == 0x4e);
  CHECK(frame[1] == 0x4a);
  CHECK(frame[2] == 1);
  CHECK(frame[3] == 1);
  auto f = parse_chunk_frame(ByteView(frame));
  REQUIRE(f);
  CHECK(f->file_id == id);
  CHECK(f->index == 0x01020304 % kMaxChunks);
  CHECK(f->data.to_bytes() == chunk);
  // Index big-endian at bytes 36..39.
  const Bytes one = encode_chunk_frame(id, 1, ByteView(chunk));
  CHECK((one[36] == 0 && one[37] == 0 && one[38] == 0 && one[39] == 1));
  // Somebody else's traffic is ignored, not an error.
  Bytes other = frame;
  other[3] = 2;
  CHECK_FALSE(parse_chunk_frame(ByteView(other)));
  CHECK_FALSE(parse_chunk_frame(ByteView(frame.data(), 39)));
  other = frame;
  other[36] = 0xff;  // index over kMaxChunks
  CHECK_FALSE(parse_chunk_frame(ByteView(other)));
}

TEST_CASE("swarm messages: 64 KiB chunks against the negotiated SCTP message limit", "[swarm]") {
  // § What was measured: at the 64 KB default a base64 chunk is 85 KB and would be refused by a
  // peer negotiating the 65,536 every implementation must support. So is the binary frame: its
  // 40-byte header takes it 40 bytes over.
  const FileId id{};
  const std::size_t b64 = encode_payload(ChunkMessage{id, 999'999, Bytes(65536, 0)}).size();
  CHECK(b64 == 87'486);
  CHECK(base64_chunk_payload_bytes(65536, 999'999) == b64);
  CHECK(encode_payload(ChunkMessage{id, 0, Bytes(10, 0)}).size() ==
        base64_chunk_payload_bytes(10, 0));
  CHECK_FALSE(chunk_fits_base64(65536, kMinSctpMessageSize));
  CHECK_FALSE(chunk_fits_binary(65536, kMinSctpMessageSize));
  CHECK(encode_chunk_frame(id, 0, ByteView(Bytes(65536, 0))).size() == 65'576);
  // Chromium's 262,144 carries both.
  CHECK(chunk_fits_base64(65536, 262'144));
  CHECK(chunk_fits_binary(65536, 262'144));
  // The largest chunks a 65,536-byte peer can take, per lane.
  CHECK(max_chunk_size_binary(kMinSctpMessageSize) == 65'496);
  CHECK(chunk_fits_binary(65'496, kMinSctpMessageSize));
  CHECK_FALSE(chunk_fits_binary(65'497, kMinSctpMessageSize));
  const std::uint32_t b64_max = max_chunk_size_base64(kMinSctpMessageSize);
  CHECK(b64_max == 42'930);
  CHECK(chunk_fits_base64(b64_max, kMinSctpMessageSize));
  CHECK_FALSE(chunk_fits_base64(b64_max + 3, kMinSctpMessageSize));
  // Control messages: a full manifest page and a full inline offer fit the smallest limit.
  const FileId fid = sha256(ByteView(std::string_view("x")));
  ManifestPage page{fid, 0, 2, 256, fid, some_hashes(256)};
  CHECK(encode_payload(page).size() <= max_payload_bytes(kMinSctpMessageSize));
  auto offer =
      make_offer(fid, std::string(kMaxFileNameChars, 'n'), std::string(kMaxMimeTypeChars, 'm'),
                 FileShape{256ull * 65536, 65536, 256}, some_hashes(256));
  REQUIRE(offer.ok());
  CHECK_FALSE(offer->paged());
  CHECK(encode_payload(offer.value()).size() <= max_payload_bytes(kMinSctpMessageSize));
  // The 250 MB file of § Why the manifest is paged: its old offer was ~275 KB; ours is tiny.
  auto big = make_offer(fid, "f", "x/y", FileShape{250'000'000, 65536, 3815}, some_hashes(3815));
  REQUIRE(big.ok());
  CHECK(big->paged());
  CHECK(encode_payload(big.value()).size() < 400);
  CHECK(3815 * 67 > 250'000);  // what one hash per chunk inline would have cost
  // A whole million-chunk bitfield fits one message at 262,144 but not at 65,536 (that peer gets
  // swarm_have lists; see the session tests). The arithmetic matches the encoder.
  CHECK(announce_fits(kMaxChunks, 262'144));
  CHECK_FALSE(announce_fits(kMaxChunks, kMinSctpMessageSize));
  for (std::uint32_t n : {0u, 1u, 13u, 4096u, kMaxChunks})
    CHECK(encode_payload(Announce{fid, n, Bytes(Bitfield::wire_bytes(n), 0)}).size() ==
          announce_payload_bytes(n));
}

// What the public implementation reads leniently (swarm-manager.ts handleRequest, handleHave,
// handleAnnounce, handleManifestRequest, parseOfferPayload) is read the same way: a value it would
// ignore never costs the rest of the message.
TEST_CASE("swarm messages: a bin other than 1 is a plain request, never a refusal", "[swarm]") {
  auto bin_of = [](const std::string& bin) {
    auto m = parse("swarm_request", "{\"fileId\":\"" + kId + "\",\"index\":3,\"bin\":" + bin + "}");
    REQUIRE(m.ok());
    CHECK(std::get<Request>(m.value()).index == 3);
    return std::get<Request>(m.value()).bin;
  };
  CHECK(bin_of("1"));
  CHECK(bin_of("1.0"));
  for (const char* plain : {"0", "2", "-1", "true", "\"1\"", "null", "[1]", "1.5"}) {
    INFO(plain);
    CHECK_FALSE(bin_of(plain));
  }
}

TEST_CASE("swarm messages: a have's or a page request's bad entries are skipped, the rest kept",
          "[swarm]") {
  auto have = parse("swarm_have", "{\"fileId\":\"" + kId +
                                      "\",\"indexes\":[4,-1,\"5\",6.5,1000000,null,{},999999,4]}");
  REQUIRE(have.ok());
  CHECK(std::get<Have>(have.value()).indexes == std::vector<std::uint32_t>{4, 999'999, 4});
  // Still bounded before anything is kept: more than 4,096 entries is refused whatever they hold.
  std::string many = "[";
  for (std::size_t i = 0; i <= kMaxHaveIndexes; ++i) many += i ? ",\"x\"" : "\"x\"";
  CHECK(refusal_of("swarm_have", "{\"fileId\":\"" + kId + "\",\"indexes\":" + many + "]}") ==
        MessageError::out_of_range);
  // A list that is not an array gives way to `index`, as the public implementation reads it.
  auto single = parse("swarm_have", "{\"fileId\":\"" + kId + "\",\"indexes\":7,\"index\":9}");
  REQUIRE(single.ok());
  CHECK(std::get<Have>(single.value()).indexes == std::vector<std::uint32_t>{9});
  auto req = parse("swarm_manifest_request",
                   "{\"fileId\":\"" + kId + "\",\"pageSize\":256,\"pages\":[0,\"1\",-2,2.5,3]}");
  REQUIRE(req.ok());
  CHECK(std::get<ManifestRequest>(req.value()).pages == std::vector<std::uint32_t>{0, 3});
}

TEST_CASE("swarm messages: bits set past totalChunks are ignored and cleared", "[swarm]") {
  auto ann = [](std::uint32_t total, const Bytes& bits) {
    auto m = parse("swarm_announce", "{\"fileId\":\"" + kId +
                                         "\",\"totalChunks\":" + std::to_string(total) +
                                         ",\"chunks\":\"" + base64_encode(bits) + "\"}");
    REQUIRE(m.ok());
    return std::get<Announce>(m.value()).bits;
  };
  CHECK(ann(20, Bytes{0x01, 0x80, 0xf1}) == Bytes{0x01, 0x80, 0x01});
  CHECK(ann(13, Bytes{0xff, 0xff}) == Bytes{0xff, 0x1f});
  CHECK(ann(16, Bytes{0xff, 0xff}) == Bytes{0xff, 0xff});
  // The length is still exact: a bitfield is whole or refused.
  CHECK(refusal_of("swarm_announce", "{\"fileId\":\"" + kId +
                                         "\",\"totalChunks\":20,\"chunks\":\"" +
                                         base64_encode(Bytes{0xff, 0xff}) + "\"}") ==
        MessageError::inconsistent_shape);
}

TEST_CASE("swarm messages: an inline list longer than 256 is accepted and kept as a paged offer",
          "[swarm]") {
  const auto list = some_hashes(300);
  std::string json = "[";
  for (const auto& h : list) json += (json.size() > 1 ? ",\"" : "\"") + to_hex(h) + "\"";
  json += "]";
  auto offer = [&](const std::string& extra) {
    return "{\"fileId\":\"" + kId +
           "\",\"name\":\"f\",\"mimeType\":\"x/y\",\"size\":307200,\"chunkSize\":1024,"
           "\"totalChunks\":300,\"chunkHashes\":" +
           json + extra + "}";
  };
  auto m = parse("swarm_offer", offer(""));
  REQUIRE(m.ok());
  const Offer& o = std::get<Offer>(m.value());
  CHECK(o.paged());
  CHECK(o.page_size == kMaxPageHashes);
  CHECK(o.pages == 2);
  CHECK(o.chunk_hashes_hash == chunk_hashes_digest(list));
  CHECK(o.inline_hashes.empty());  // a remembered offer stays small
  // Its digest still has to match when given.
  CHECK(parse("swarm_offer",
              offer(",\"chunkHashesHash\":\"" + to_hex(chunk_hashes_digest(list)) + "\""))
            .ok());
  CHECK(refusal_of("swarm_offer", offer(",\"chunkHashesHash\":\"" + kId + "\"")) ==
        MessageError::bad_hash);
  // Inline hashes win over page fields and over a digest that is not one, as there.
  auto both = parse("swarm_offer", "{\"fileId\":\"" + kId +
                                       "\",\"name\":\"f\",\"mimeType\":\"x/y\",\"size\":1024,"
                                       "\"chunkSize\":1024,\"totalChunks\":1,\"chunkHashes\":" +
                                       hashes_json(1) +
                                       ",\"chunkHashesHash\":null,\"manifestPageSize\":256,"
                                       "\"manifestPages\":1}");
  REQUIRE(both.ok());
  CHECK_FALSE(std::get<Offer>(both.value()).paged());
  CHECK(std::get<Offer>(both.value()).inline_hashes.size() == 1);
}
