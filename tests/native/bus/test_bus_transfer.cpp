// The simple one-to-one transfer (agent-bus-and-swarm.md § Simple one-to-one transfer).
#include <catch2/catch.hpp>

#include "bus/transfer.hpp"
#include "harness.hpp"

using namespace bus_test;

namespace {

Bytes file_of(std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = std::uint8_t(i * 31 + 7);
  return b;
}

}  // namespace

TEST_CASE("bus transfer: a file crosses chunk by chunk and verifies") {
  Bytes f = file_of(10'000);
  auto plan = plan_file_send(ByteView(f), "notes.bin", "", "", 4096, "t1");
  REQUIRE(plan.ok());
  const FileOffer& o = plan->offer;
  CHECK(o.total_chunks == 3);
  CHECK(o.mime_type == "application/octet-stream");
  CHECK(o.sha256 == to_hex(sha256(ByteView(f))));
  FileReceiver rx;
  REQUIRE(rx.offer("S", file_offer_json(o)).ok());
  CHECK(rx.incomplete() == 1);
  CHECK(rx.promised_bytes() == 10'000);
  Bytes assembled;
  for (std::uint32_t i = 0; i < o.total_chunks; ++i) {
    auto c = rx.chunk("S", file_chunk_payload(o, ByteView(f), i));
    REQUIRE(c.ok());
    CHECK(c->offset == assembled.size());
    assembled.insert(assembled.end(), c->data.begin(), c->data.end());
  }
  auto done = rx.complete("S", file_complete_payload(o));
  REQUIRE(done.ok());
  CHECK(assembled == f);
  CHECK(rx.incomplete() == 0);
  CHECK(rx.promised_bytes() == 0);
}

TEST_CASE("bus transfer: the sender caps files at 256 MiB") {
  // A view that claims the size without memory behind it: the cap is checked before any read.
  Bytes one(1);
  ByteView huge(one.data(), kFileMaxBytes + 1);
  auto r = plan_file_send(huge, "big", "", "", 65536, "t");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == BusErrorCode::file_too_large);
}

TEST_CASE("bus transfer: receiver limits (16 incomplete, 512 MiB promised, per-file cap)") {
  auto offer = [](const std::string& id, std::uint64_t size) {
    FileOffer o;
    o.transfer_id = id;
    o.name = "f";
    o.mime_type = "x/y";
    o.kind = "file";
    o.size = size;
    o.sha256 = std::string(64, 'a');
    o.chunk_size = 65536;
    o.total_chunks = std::uint32_t((size + 65535) / 65536);
    return file_offer_json(o);
  };
  FileReceiver rx;
  for (int i = 0; i < 16; ++i) REQUIRE(rx.offer("S", offer("t" + std::to_string(i), 1000)).ok());
  CHECK(rx.offer("S", offer("t16", 1000)).error().code == BusErrorCode::too_many_transfers);
  FileReceiver rx2;
  REQUIRE(rx2.offer("S", offer("a", 256ULL << 20)).ok());
  REQUIRE(rx2.offer("S", offer("b", 200ULL << 20)).ok());
  CHECK(rx2.offer("S", offer("c", 100ULL << 20)).error().code == BusErrorCode::over_promised);
  CHECK(rx2.offer("S", offer("a", 1)).error().code == BusErrorCode::duplicate_transfer);
  CHECK(rx2.offer("S", offer("d", (256ULL << 20) + 1)).error().code ==
        BusErrorCode::file_too_large);
  FileReceiver browser(ReceiverLimits{kFileBrowserMaxBytes, 16, kFileReceiverMaxPromisedBytes});
  CHECK(browser.offer("S", offer("e", kFileBrowserMaxBytes + 1)).error().code ==
        BusErrorCode::file_too_large);
  CHECK(browser.offer("S", offer("e", kFileBrowserMaxBytes)).ok());
}

TEST_CASE("bus transfer: hostile offers and chunks are refused") {
  Bytes f = file_of(5000);
  auto plan = plan_file_send(ByteView(f), "f.bin", "", "", 2048, "t1");
  REQUIRE(plan.ok());
  const FileOffer o = plan->offer;
  Json bad = file_offer_json(o);
  bad["totalChunks"] = 2;
  CHECK(FileReceiver().offer("S", bad).error().field == "payload.totalChunks");
  bad = file_offer_json(o);
  bad["name"] = "../etc/passwd";
  CHECK(FileReceiver().offer("S", bad).error().field == "payload.name");
  for (const char* name : {"..", ".", "a/b"}) {
    bad["name"] = name;
    CHECK(FileReceiver().offer("S", bad).error().field == "payload.name");
  }
  // A backslash is an ordinary character of a POSIX name (the public implementation sends such
  // names as they are): taken, and made safe by whoever writes the file.
  Json odd = file_offer_json(o);
  odd["name"] = "notes\\2026.txt";
  CHECK(FileReceiver().offer("S", odd).ok());
  bad = file_offer_json(o);
  bad["sha256"] = std::string(64, 'A');
  CHECK(FileReceiver().offer("S", bad).error().field == "payload.sha256");
  bad = file_offer_json(o);
  bad["chunkSize"] = kFileMaxChunkSize + 1;
  CHECK(FileReceiver().offer("S", bad).error().field == "payload.chunkSize");

  FileReceiver rx;
  REQUIRE(rx.offer("S", file_offer_json(o)).ok());
  // Another peer cannot feed or complete it.
  CHECK(rx.chunk("X", file_chunk_payload(o, ByteView(f), 0)).error().code ==
        BusErrorCode::not_owner);
  CHECK(rx.complete("X", file_complete_payload(o)).error().code == BusErrorCode::not_owner);
  CHECK(rx.chunk("S", Json{{"transferId", "nope"}}).error().code == BusErrorCode::unknown_transfer);
  // Out of order from the owner: refused and the transfer is aborted.
  CHECK(rx.chunk("S", file_chunk_payload(o, ByteView(f), 1)).error().code ==
        BusErrorCode::bad_chunk);
  CHECK(rx.incomplete() == 0);

  REQUIRE(rx.offer("S", file_offer_json(o)).ok());
  Json short_chunk = file_chunk_payload(o, ByteView(f), 0);
  short_chunk["data"] = "AAAA";
  CHECK(rx.chunk("S", short_chunk).error().code == BusErrorCode::bad_chunk);

  // Tampered bytes: every chunk has the right length, the hash catches it.
  REQUIRE(rx.offer("S", file_offer_json(o)).ok());
  Bytes tampered = f;
  tampered[4000] ^= 1;
  for (std::uint32_t i = 0; i < o.total_chunks; ++i)
    REQUIRE(rx.chunk("S", file_chunk_payload(o, ByteView(tampered), i)).ok());
  CHECK(rx.complete("S", file_complete_payload(o)).error().code == BusErrorCode::sha256_mismatch);
  CHECK(rx.incomplete() == 0);

  // Completing early fails too.
  REQUIRE(rx.offer("S", file_offer_json(o)).ok());
  REQUIRE(rx.chunk("S", file_chunk_payload(o, ByteView(f), 0)).ok());
  CHECK(rx.complete("S", file_complete_payload(o)).error().code == BusErrorCode::bad_chunk);
}

TEST_CASE("bus transfer: an empty file has no chunks") {
  Bytes none;
  auto plan = plan_file_send(ByteView(none), "empty", "text/plain", "file", 1024, "t0");
  REQUIRE(plan.ok());
  CHECK(plan->offer.total_chunks == 0);
  FileReceiver rx;
  REQUIRE(rx.offer("S", file_offer_json(plan->offer)).ok());
  CHECK(rx.complete("S", file_complete_payload(plan->offer)).ok());
}

TEST_CASE("bus transfer: the chunk size planned for a transport's message limit fits it") {
  CHECK(file_chunk_size_for(0) == kFileDefaultChunkSize);
  CHECK(file_chunk_size_for(std::uint64_t(1) << 40) == kFileDefaultChunkSize);
  CHECK(file_chunk_size_for(100) == kFileMinChunkSize);
  // The data channel limit a far end that states none gets, and a sealed relay lane's size: the
  // largest chunk whose envelope, every header string at its bound and escaped, still fits.
  const std::string worst_id(kMaxTransferIdChars, '"');  // each escaped as \"
  for (std::uint64_t limit : {16'384, 65'536, 262'144}) {
    const std::uint32_t size = file_chunk_size_for(limit);
    INFO("limit " << limit << ", chunk " << size);
    CHECK(size % 1024 == 0);
    CHECK(size >= kFileMinChunkSize);
    CHECK(size <= kFileDefaultChunkSize);
    Bytes data = file_of(size);
    auto plan = plan_file_send(ByteView(data), "f.bin", "", "", size, worst_id);
    REQUIRE(plan.ok());
    Envelope e = env(std::string(128, '\x01'), MessageType::file_chunk,
                     Identity{std::string(128, '\x01'), std::string(64, '\x01'),
                              std::string(256, '\x01'), std::string(128, '\x01')},
                     std::string(128, '\x01'), file_chunk_payload(plan->offer, ByteView(data), 0));
    auto text = encode_envelope(e);
    REQUIRE(text.ok());
    CHECK(text->size() <= limit);
  }
}
