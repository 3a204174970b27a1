// Embind surface of the sealed channel (src/room/sealed.hpp): the encrypted relay transport's
// frames, sealed and opened by WebCrypto on what the core hands out. Marshalling only
// (docs/design.md rule 4); its own binding because only peers seal (the edge module, which relays
// ciphertext, never needs it). The public API is web/glue/sealed.js, driven by web/glue/driver.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "room/sealed.hpp"

namespace tether::room::bindings {
namespace {

using emscripten::val;

val bytes_copy(const Bytes& b) {
  return val(emscripten::typed_memory_view(b.size(), b.data())).call<val>("slice");
}

class SealedCore {
 public:
  SealedCore(const std::string& room, const std::string& self, const std::string& session,
             double max_lane_bytes)
      : ch_(options(room, self, session, max_lane_bytes)) {}
  // The staging buffer's address once it holds at least n bytes (JS writes a result there).
  double staging(int n) {
    if (staging_.size() < static_cast<std::size_t>(n)) staging_.resize(static_cast<std::size_t>(n));
    return static_cast<double>(reinterpret_cast<std::uintptr_t>(staging_.data()));
  }
  void start() { ch_.handle_start(); }
  void key_id(int len) { ch_.handle_key_id(staged(len)); }
  void key(double slot, bool ok) { ch_.handle_key(static_cast<std::uint32_t>(slot), ok); }
  void encrypted(double job, bool ok, int len) {
    ch_.handle_encrypted(static_cast<std::uint32_t>(job), ok, staged(len));
  }
  void decrypted(double job, bool ok, int len) {
    ch_.handle_decrypted(static_cast<std::uint32_t>(job), ok, staged(len));
  }
  // A SealedError as an int (0: accepted).
  int seal(const std::string& to, const std::string& text) {
    return static_cast<int>(ch_.seal(to, text));
  }
  void open(const std::string& from, const std::string& text) { ch_.open(from, text); }
  // A SealedError as an int (0: the hello is on its way).
  int greet(const std::string& peer) { return static_cast<int>(ch_.greet(peer)); }
  bool linked(const std::string& peer) const { return ch_.linked(peer); }
  val poll_action() {
    std::optional<SealedAction> a = ch_.poll_action();
    if (!a) return val::null();
    val o = val::object();
    o.set("kind", std::string(sealed_action_name(a->kind)));
    o.set("slot", static_cast<double>(a->slot));
    o.set("job", static_cast<double>(a->job));
    using K = SealedAction::Kind;
    switch (a->kind) {
      case K::derive_key_id:
      case K::derive_key:
        o.set("salt", bytes_copy(a->salt));
        o.set("info", bytes_copy(a->info));
        break;
      case K::encrypt:
      case K::decrypt:
        o.set("nonce", bytes_copy(a->nonce));
        o.set("aad", bytes_copy(a->aad));
        o.set("data", bytes_copy(a->data));
        o.set("peer", a->peer);
        break;
      case K::transmit:
        o.set("peer", a->peer);
        o.set("text", a->text);
        o.set("frame", std::string(sealed_kind_name(a->frame)));
        break;
      case K::release_key: break;
    }
    return o;
  }
  val poll_event() {
    std::optional<SealedEvent> e = ch_.poll_event();
    if (!e) return val::null();
    val o = val::object();
    o.set("kind", std::string(sealed_event_name(e->kind)));
    o.set("peer", e->peer);
    if (e->kind == SealedEvent::Kind::text) o.set("text", e->text);
    if (e->kind == SealedEvent::Kind::refused) {
      o.set("code", std::string(sealed_error_name(e->error)));
      o.set("fix", std::string(sealed_error_fix(e->error)));
    }
    o.set("counter", static_cast<double>(e->counter));
    return o;
  }
  bool ready() const { return ch_.ready(); }
  double max_plaintext() const { return static_cast<double>(ch_.max_plaintext()); }
  val stats() const {
    val o = val::object();
    o.set("sealed", static_cast<double>(ch_.stats().sealed));
    o.set("opened", static_cast<double>(ch_.stats().opened));
    o.set("refused", static_cast<double>(ch_.stats().refused));
    o.set("hellosSent", static_cast<double>(ch_.stats().hellos_sent));
    o.set("hellosOpened", static_cast<double>(ch_.stats().hellos_opened));
    return o;
  }

 private:
  static SealedOptions options(const std::string& room, const std::string& self,
                               const std::string& session, double max_lane_bytes) {
    SealedOptions o;
    o.room = room;
    o.self = self;
    std::copy_n(session.begin(), std::min(session.size(), o.session.size()), o.session.begin());
    o.max_lane_bytes = static_cast<std::size_t>(std::max(0.0, max_lane_bytes));
    return o;
  }
  ByteView staged(int len) const {
    return ByteView(staging_.data(),
                    std::min(staging_.size(), static_cast<std::size_t>(std::max(0, len))));
  }
  SealedChannel ch_;
  std::vector<std::uint8_t> staging_;
};

val sealed_suite() {
  val o = val::object();
  o.set("version", static_cast<double>(kSealedVersion));
  o.set("keyIdBytes", static_cast<double>(kSealedKeyIdBytes));
  o.set("sessionBytes", static_cast<double>(kSealedSessionBytes));
  o.set("epochBytes", static_cast<double>(kSealedEpochBytes));
  o.set("keyIdAt", static_cast<double>(kSealedKeyIdAt));
  o.set("headerBytes", static_cast<double>(kSealedHeaderBytes));
  o.set("tagBits", static_cast<double>(kSealedTagBytes * 8));
  o.set("nonceBytes", static_cast<double>(kSealedNonceBytes));
  o.set("keyBits", static_cast<double>(kSealedKeyBits));
  o.set("hash", std::string(kSealedHkdfHash));
  o.set("cipher", std::string(kSealedCipher));
  o.set("replayWindow", static_cast<double>(kSealedReplayWindow));
  o.set("minSecretBytes", static_cast<double>(kMinSealedSecretBytes));
  o.set("maxSecretBytes", static_cast<double>(kMaxSealedSecretBytes));
  return o;
}
val sealed_error_names() {
  val a = val::array();
  for (int i = 0; i < kSealedErrorKinds; ++i)
    a.call<void>("push", std::string(sealed_error_name(static_cast<SealedError>(i))));
  return a;
}
std::string secret_error(double size) {
  return sealed_secret_error(static_cast<std::size_t>(std::max(0.0, size)));
}
double max_plaintext(double lane_bytes) {
  return static_cast<double>(
      sealed_max_plaintext(static_cast<std::size_t>(std::max(0.0, lane_bytes))));
}
std::string error_fix(int code) {
  if (code < 0 || code >= kSealedErrorKinds) return {};
  return sealed_error_fix(static_cast<SealedError>(code));
}

}  // namespace

EMSCRIPTEN_BINDINGS(tether_sealed) {
  emscripten::class_<SealedCore>("SealedCore")
      .constructor<const std::string&, const std::string&, const std::string&, double>()
      .function("staging", &SealedCore::staging)
      .function("start", &SealedCore::start)
      .function("keyId", &SealedCore::key_id)
      .function("key", &SealedCore::key)
      .function("encrypted", &SealedCore::encrypted)
      .function("decrypted", &SealedCore::decrypted)
      .function("seal", &SealedCore::seal)
      .function("open", &SealedCore::open)
      .function("greet", &SealedCore::greet)
      .function("linked", &SealedCore::linked)
      .function("pollAction", &SealedCore::poll_action)
      .function("pollEvent", &SealedCore::poll_event)
      .function("ready", &SealedCore::ready)
      .function("maxPlaintext", &SealedCore::max_plaintext)
      .function("stats", &SealedCore::stats);
  emscripten::function("sealedSuite", &sealed_suite);
  emscripten::function("sealedErrorNames", &sealed_error_names);
  emscripten::function("sealedSecretError", &secret_error);
  emscripten::function("sealedMaxPlaintext", &max_plaintext);
  emscripten::function("sealedErrorFix", &error_fix);
}

}  // namespace tether::room::bindings
