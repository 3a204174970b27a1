// A host for the sealed channel (src/room/sealed.hpp) in native code: it carries out the
// channel's actions with Mbed TLS's HKDF-SHA256 and AES-256-GCM, as web/glue/sealed.js does with
// WebCrypto, so the Catch2 suite and the fixture writer run the real cipher on exactly what the
// core hands out. Used by tests/native/room/test_sealed.cpp and tests/fixtures/sealed_fixtures.cpp.
#pragma once
#include <mbedtls/gcm.h>
#include <mbedtls/hkdf.h>
#include <mbedtls/md.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "room/sealed.hpp"

namespace tether::testing {

inline Bytes hkdf_sha256(const std::string& secret, const Bytes& salt, const Bytes& info,
                         std::size_t n) {
  Bytes out(n);
  mbedtls_hkdf(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), salt.data(), salt.size(),
               reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), info.data(),
               info.size(), out.data(), n);
  return out;
}

// AES-256-GCM seal: ciphertext then the 16-byte tag (WebCrypto's layout).
inline Bytes gcm_seal(const Bytes& key, const Bytes& nonce, const Bytes& aad, const Bytes& data) {
  mbedtls_gcm_context g;
  mbedtls_gcm_init(&g);
  mbedtls_gcm_setkey(&g, MBEDTLS_CIPHER_ID_AES, key.data(), 256);
  Bytes out(data.size() + room::kSealedTagBytes);
  mbedtls_gcm_crypt_and_tag(&g, MBEDTLS_GCM_ENCRYPT, data.size(), nonce.data(), nonce.size(),
                            aad.data(), aad.size(), data.data(), out.data(), room::kSealedTagBytes,
                            out.data() + data.size());
  mbedtls_gcm_free(&g);
  return out;
}

// AES-256-GCM open; false when the tag does not verify.
inline bool gcm_open(const Bytes& key, const Bytes& nonce, const Bytes& aad, const Bytes& body,
                     Bytes& out) {
  if (body.size() < room::kSealedTagBytes) return false;
  const std::size_t n = body.size() - room::kSealedTagBytes;
  mbedtls_gcm_context g;
  mbedtls_gcm_init(&g);
  mbedtls_gcm_setkey(&g, MBEDTLS_CIPHER_ID_AES, key.data(), 256);
  out.assign(n, 0);
  const int rc =
      mbedtls_gcm_auth_decrypt(&g, n, nonce.data(), nonce.size(), aad.data(), aad.size(),
                               body.data() + n, room::kSealedTagBytes, body.data(), out.data());
  mbedtls_gcm_free(&g);
  return rc == 0;
}

struct SealedHost {
  std::string secret;
  room::SealedChannel ch;
  std::map<std::uint32_t, Bytes> keys;
  std::vector<std::pair<std::string, std::string>> sent;  // (to, frame text)
  std::vector<room::SealedKind> sent_kinds;               // what each of `sent` is
  std::vector<room::SealedEvent> events;
  std::vector<room::SealedAction> held;  // crypto actions kept back (hold = true)
  std::vector<std::uint32_t> released;
  bool hold = false;

  SealedHost(std::string s, room::SealedOptions o) : secret(std::move(s)), ch(std::move(o)) {
    ch.handle_start();
    pump();
  }

  void perform(const room::SealedAction& a) {
    using K = room::SealedAction::Kind;
    switch (a.kind) {
      case K::derive_key_id:
        ch.handle_key_id(ByteView(hkdf_sha256(secret, a.salt, a.info, room::kSealedKeyIdBytes)));
        break;
      case K::derive_key:
        keys[a.slot] = hkdf_sha256(secret, a.salt, a.info, room::kSealedKeyBits / 8);
        ch.handle_key(a.slot, true);
        break;
      case K::release_key:
        keys.erase(a.slot);
        released.push_back(a.slot);
        break;
      case K::encrypt: {
        Bytes ct = gcm_seal(keys.at(a.slot), a.nonce, a.aad, a.data);
        ch.handle_encrypted(a.job, true, ByteView(ct));
        break;
      }
      case K::decrypt: {
        Bytes pt;
        const bool ok = keys.count(a.slot) && gcm_open(keys[a.slot], a.nonce, a.aad, a.data, pt);
        ch.handle_decrypted(a.job, ok, ByteView(pt));
        break;
      }
      case K::transmit:
        sent.emplace_back(a.peer, a.text);
        sent_kinds.push_back(a.frame);
        break;
    }
  }

  void pump() {
    for (;;) {
      if (auto a = ch.poll_action()) {
        const bool crypto = a->kind == room::SealedAction::Kind::encrypt ||
                            a->kind == room::SealedAction::Kind::decrypt;
        if (hold && crypto)
          held.push_back(std::move(*a));
        else
          perform(*a);
        continue;
      }
      if (auto e = ch.poll_event()) {
        events.push_back(std::move(*e));
        continue;
      }
      return;
    }
  }

  // Answers the held crypto actions in reverse order (the host may finish them in any order).
  void release_reversed() {
    std::vector<room::SealedAction> h = std::move(held);
    held.clear();
    for (auto it = h.rbegin(); it != h.rend(); ++it) perform(*it);
    pump();
  }

  room::SealedError seal(const std::string& to, const std::string& text) {
    room::SealedError e = ch.seal(to, text);
    pump();
    return e;
  }
  void open(const std::string& from, const std::string& text) {
    ch.open(from, text);
    pump();
  }
};

// Runs the epoch handshake between a and b as two lanes opening would (both greet, and frames go
// back and forth until none is left), then forgets what both sent and saw, so a test starts from
// two linked channels.
inline void link(SealedHost& a, SealedHost& b) {
  const std::string an = a.ch.options().self, bn = b.ch.options().self;
  std::size_t ai = a.sent.size(), bi = b.sent.size();
  a.ch.greet(bn);
  a.pump();
  b.ch.greet(an);
  b.pump();
  for (int round = 0; round < 8 && (ai < a.sent.size() || bi < b.sent.size()); ++round) {
    while (ai < a.sent.size()) {
      const auto sent = a.sent[ai++];
      if (sent.first == bn) b.open(an, sent.second);
    }
    while (bi < b.sent.size()) {
      const auto sent = b.sent[bi++];
      if (sent.first == an) a.open(bn, sent.second);
    }
  }
  a.sent.clear();
  b.sent.clear();
  a.sent_kinds.clear();
  b.sent_kinds.clear();
  a.events.clear();
  b.events.clear();
}

inline room::SealedOptions sealed_options(std::string room, std::string self, std::uint8_t fill) {
  room::SealedOptions o;
  o.room = std::move(room);
  o.self = std::move(self);
  for (std::size_t i = 0; i < o.session.size(); ++i) o.session[i] = std::uint8_t(fill + i);
  return o;
}

}  // namespace tether::testing
