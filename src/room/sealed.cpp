// The sealed channel (sealed.hpp).
#include "room/sealed.hpp"

#include <algorithm>

#include "common/base64.hpp"
#include "common/utf8.hpp"

namespace tether::room {

const char* sealed_error_name(SealedError e) {
  using E = SealedError;
  switch (e) {
    case E::none: return "none";
    case E::malformed: return "malformed";
    case E::unknown_version: return "unknown-version";
    case E::wrong_secret: return "wrong-secret";
    case E::tampered: return "tampered";
    case E::replay: return "replay";
    case E::reorder: return "reorder";
    case E::stale: return "stale";
    case E::too_big: return "too-big";
    case E::busy: return "busy";
    case E::unsealed: return "unsealed";
    case E::not_ready: return "not-ready";
    case E::exhausted: return "exhausted";
    case E::crypto: return "crypto";
    case E::wrong_epoch: return "wrong-epoch";
    case E::no_epoch: return "no-epoch";
  }
  return "";
}

const char* sealed_kind_name(SealedKind k) {
  switch (k) {
    case SealedKind::text: return "text";
    case SealedKind::hello: return "hello";
    case SealedKind::answer: return "answer";
  }
  return "";
}

const char* sealed_error_fix(SealedError e) {
  using E = SealedError;
  switch (e) {
    case E::none: return "";
    case E::malformed:
      return "the frame is not a sealed frame (bad base64, too short, or not UTF-8 inside); the "
             "sender runs something else: check its version";
    case E::unknown_version:
      return "the frame's version byte is one this build does not read: upgrade tether on this "
             "side or the sender's";
    case E::wrong_secret:
      return "the sender holds a different room secret (its key id is not ours): give both sides "
             "the same secret (--secret-file or TETHER_ROOM_SECRET)";
    case E::tampered:
      return "the frame did not authenticate: its bytes changed on the way, or it was forged; "
             "the frame was dropped and the session goes on";
    case E::replay: return "a frame delivered before came again (a replay); it was dropped";
    case E::reorder:
      return "a frame came after a newer one from the same sender (reordered on the way); it was "
             "dropped";
    case E::stale:
      return "the frame is older than the replay window or from a retired session of its sender; "
             "it was dropped";
    case E::too_big: return "the frame is larger than the lane's message bound";
    case E::busy:
      return "too many frames, senders or sessions in flight; the frame was not taken (the "
             "caller keeps its message and may retry)";
    case E::unsealed:
      return "the peer sent an unencrypted envelope to an encrypted transport: give it the room "
             "secret too";
    case E::not_ready: return "the keys are still being derived; retry once the transport is ready";
    case E::exhausted:
      return "this session's counter ran out: close the transport and open a new one (a new "
             "session)";
    case E::crypto:
      return "the runtime's cipher failed on this frame (WebCrypto reported an error)";
    case E::wrong_epoch:
      return "the frame was sealed for an earlier run of this receiver (another epoch): a relay "
             "replaying a recorded session, or a frame in flight across our restart; it was "
             "dropped, and the sender is told our epoch";
    case E::no_epoch:
      return "the peer's epoch is not known yet (the sealed handshake with it has not finished; "
             "if it never does, the relay is withholding it): the caller keeps the message and "
             "sends it once the peer is linked";
  }
  return "";
}

const char* sealed_action_name(SealedAction::Kind k) {
  using K = SealedAction::Kind;
  switch (k) {
    case K::derive_key_id: return "derive-key-id";
    case K::derive_key: return "derive-key";
    case K::release_key: return "release-key";
    case K::encrypt: return "encrypt";
    case K::decrypt: return "decrypt";
    case K::transmit: return "transmit";
  }
  return "";
}

const char* sealed_event_name(SealedEvent::Kind k) {
  using K = SealedEvent::Kind;
  switch (k) {
    case K::ready: return "ready";
    case K::text: return "text";
    case K::refused: return "refused";
    case K::linked: return "linked";
  }
  return "";
}

std::size_t sealed_max_plaintext(std::size_t lane_bytes) {
  const std::size_t raw = lane_bytes / 4 * 3;  // what base64 text of lane_bytes decodes to
  return raw > kSealedOverheadBytes ? raw - kSealedOverheadBytes : 0;
}

std::string sealed_secret_error(std::size_t size) {
  if (size < kMinSealedSecretBytes)
    return "the room secret is " + std::to_string(size) + " bytes; it must be at least " +
           std::to_string(kMinSealedSecretBytes) +
           " (e.g. `openssl rand -base64 32` into a file for --secret-file)";
  if (size > kMaxSealedSecretBytes)
    return "the room secret is " + std::to_string(size) + " bytes; at most " +
           std::to_string(kMaxSealedSecretBytes) + " are taken";
  return {};
}

namespace {
void append_u16_be(Bytes& out, std::size_t v) {
  out.push_back(std::uint8_t(v >> 8));
  out.push_back(std::uint8_t(v));
}
void append_u64_be(Bytes& out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) out.push_back(std::uint8_t(v >> (8 * i)));
}
std::uint64_t read_u64_be(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
}
Bytes bytes_of(std::string_view s) {
  return ByteView(s).to_bytes();
}
}  // namespace

Bytes sealed_header_bytes(const SealedHeader& h) {
  Bytes out;
  out.reserve(kSealedHeaderBytes);
  out.push_back(h.version);
  out.push_back(static_cast<std::uint8_t>(h.kind));
  out.insert(out.end(), h.key_id.begin(), h.key_id.end());
  out.insert(out.end(), h.session.begin(), h.session.end());
  out.insert(out.end(), h.epoch.begin(), h.epoch.end());
  append_u64_be(out, h.counter);
  return out;
}

std::string sealed_frame_text(ByteView header_bytes, ByteView body) {
  Bytes all;
  all.reserve(header_bytes.size + body.size);
  append(all, header_bytes);
  append(all, body);
  return base64_encode(ByteView(all));
}

Bytes sealed_nonce(std::uint64_t counter) {
  Bytes out(kSealedNonceBytes - kSealedCounterBytes, 0);
  append_u64_be(out, counter);
  return out;
}

Bytes sealed_aad(ByteView header_bytes, std::string_view room, std::string_view from,
                 std::string_view to) {
  Bytes out;
  out.reserve(header_bytes.size + 6 + room.size() + from.size() + to.size());
  append(out, header_bytes);
  for (std::string_view s : {room, from, to}) {
    append_u16_be(out, s.size());
    append(out, s);
  }
  return out;
}

Bytes sealed_key_info(std::string_view room, std::string_view sender) {
  Bytes out = bytes_of(kSealedKeyInfo);
  for (std::string_view s : {room, sender}) {
    append_u16_be(out, s.size());
    append(out, s);
  }
  return out;
}

ParsedSealedFrame parse_sealed_frame(std::string_view text, std::size_t max_text_bytes) {
  ParsedSealedFrame out;
  if (text.size() > max_text_bytes) {
    out.error = SealedError::too_big;
    return out;
  }
  if (!text.empty() && text.front() == '{') {
    out.error = SealedError::unsealed;
    return out;
  }
  std::optional<Bytes> raw = base64_decode(text);
  if (!raw || raw->size() < kSealedOverheadBytes) {
    out.error = SealedError::malformed;
    return out;
  }
  const std::uint8_t* p = raw->data();
  SealedHeader& h = out.header;
  h.version = p[0];
  if (h.version != kSealedVersion) {
    out.error = SealedError::unknown_version;
    return out;
  }
  if (p[kSealedKindAt] >= kSealedKinds) {
    out.error = SealedError::malformed;
    return out;
  }
  h.kind = static_cast<SealedKind>(p[kSealedKindAt]);
  std::copy(p + kSealedKeyIdAt, p + kSealedKeyIdAt + kSealedKeyIdBytes, h.key_id.begin());
  std::copy(p + kSealedSessionAt, p + kSealedSessionAt + kSealedSessionBytes, h.session.begin());
  std::copy(p + kSealedEpochAt, p + kSealedEpochAt + kSealedEpochBytes, h.epoch.begin());
  h.counter = read_u64_be(p + kSealedCounterAt);
  // A hello or answer carries nothing but its header: its body is the tag alone.
  if (h.counter == 0 || h.counter > kMaxSealedCounter ||
      (h.kind != SealedKind::text && raw->size() != kSealedOverheadBytes)) {
    out.error = SealedError::malformed;
    return out;
  }
  out.header_bytes.assign(p, p + kSealedHeaderBytes);
  out.body.assign(p + kSealedHeaderBytes, p + raw->size());
  return out;
}

SealedChannel::SealedChannel(SealedOptions options)
    : opt_(std::move(options)), max_plaintext_(sealed_max_plaintext(opt_.max_lane_bytes)) {}

SealedAction& SealedChannel::action(SealedAction::Kind k) {
  SealedAction& a = actions_.emplace_back();
  a.kind = k;
  return a;
}

std::optional<SealedAction> SealedChannel::poll_action() {
  if (actions_.empty()) return std::nullopt;
  std::optional<SealedAction> a(std::move(actions_.front()));
  actions_.pop_front();
  return a;
}

std::optional<SealedEvent> SealedChannel::poll_event() {
  if (events_.empty()) return std::nullopt;
  std::optional<SealedEvent> e(std::move(events_.front()));
  events_.pop_front();
  return e;
}

void SealedChannel::refuse(std::string_view peer, SealedError e, std::uint64_t counter) {
  ++stats_.refused;
  SealedEvent& ev = events_.emplace_back();
  ev.kind = SealedEvent::Kind::refused;
  ev.peer = std::string(peer);
  ev.error = e;
  ev.counter = counter;
}

void SealedChannel::handle_start() {
  if (started_) return;
  started_ = true;
  SealedAction& id = action(SealedAction::Kind::derive_key_id);
  id.salt = bytes_of(kSealedKeyIdSalt);
  id.info = bytes_of(kSealedKeyIdInfo);
  SealedAction& own = action(SealedAction::Kind::derive_key);
  own.slot = 0;
  own.salt.assign(opt_.session.begin(), opt_.session.end());
  own.info = sealed_key_info(opt_.room, opt_.self);
}

void SealedChannel::handle_key_id(ByteView key_id) {
  if (key_id_ || key_id.size != kSealedKeyIdBytes) return;
  key_id_.emplace();
  std::copy(key_id.data, key_id.data + key_id.size, key_id_->begin());
  if (ready()) events_.emplace_back().kind = SealedEvent::Kind::ready;
}

void SealedChannel::handle_key(std::uint32_t slot, bool ok) {
  if (slot == 0) {
    if (own_key_ready_ || own_key_failed_) return;
    own_key_ready_ = ok;
    own_key_failed_ = !ok;
    if (ready()) events_.emplace_back().kind = SealedEvent::Kind::ready;
    return;
  }
  // Which sender's session holds the slot: only on a new session (rare), so a walk is fine.
  for (auto& [id, s] : senders_) {
    for (SessionState& st : s.trying) {
      if (st.slot != slot || st.key_ready || st.key_failed) continue;
      st.key_ready = ok;
      st.key_failed = !ok;
      issue_in(slot);
      return;
    }
  }
}

SealedChannel::Sender* SealedChannel::sender(std::string_view id, bool create) {
  auto it = senders_.find(std::string(id));
  if (it != senders_.end()) return &it->second;
  if (!create || senders_.size() >= kMaxSealedSenders) return nullptr;
  Sender& s = senders_[std::string(id)];
  s.id = std::string(id);
  return &s;
}

const SealedChannel::Sender* SealedChannel::find_sender(std::string_view id) const {
  auto it = senders_.find(std::string(id));
  return it == senders_.end() ? nullptr : &it->second;
}

bool SealedChannel::linked(std::string_view peer) const {
  const Sender* s = find_sender(peer);
  return s && s->linked && s->current;
}

SealedChannel::SessionState* SealedChannel::find_session(Sender& s, const Session& session) {
  if (s.current && s.current->session == session) return &*s.current;
  for (SessionState& st : s.trying)
    if (st.session == session) return &st;
  return nullptr;
}

SealedError SealedChannel::seal(std::string_view to, std::string_view text) {
  if (!ready()) return SealedError::not_ready;
  if (to.empty() || to.size() > 0xFFFF) return SealedError::malformed;
  if (text.size() > max_plaintext_) return SealedError::too_big;
  if (!is_valid_utf8(ByteView(text))) return SealedError::malformed;
  const Sender* s = find_sender(to);
  if (!s || !s->linked || !s->current) return SealedError::no_epoch;
  return enqueue(SealedKind::text, to, s->current->session, text);
}

SealedError SealedChannel::greet(std::string_view peer) {
  if (!ready()) return SealedError::not_ready;
  if (peer.empty() || peer.size() > 0xFFFF) return SealedError::malformed;
  Sender* s = sender(peer, true);
  if (!s) return SealedError::busy;
  s->linked = false;
  // Whatever we answered before may have been lost with the lane: answer again.
  if (s->current) s->current->answered = false;
  for (SessionState& st : s->trying) st.answered = false;
  return enqueue(SealedKind::hello, peer, s->current ? s->current->session : Session{}, {});
}

SealedError SealedChannel::enqueue(SealedKind kind, std::string_view to, const Session& epoch,
                                   std::string_view text) {
  if (out_.size() >= kMaxSealedPending || out_bytes_ + text.size() > kMaxSealedPendingBytes)
    return SealedError::busy;
  if (counter_ >= kMaxSealedCounter) return SealedError::exhausted;
  SealedHeader h;
  h.version = kSealedVersion;
  h.kind = kind;
  h.key_id = *key_id_;
  h.session = opt_.session;
  h.epoch = epoch;
  h.counter = ++counter_;
  OutJob& j = out_.emplace_back();
  j.job = next_out_job_++;
  j.kind = kind;
  j.to = std::string(to);
  j.counter = h.counter;
  j.header = sealed_header_bytes(h);
  j.issued = true;
  out_bytes_ += text.size();
  SealedAction& a = action(SealedAction::Kind::encrypt);
  a.job = j.job;
  a.slot = 0;
  a.peer = j.to;
  a.nonce = sealed_nonce(h.counter);
  a.aad = sealed_aad(ByteView(j.header), opt_.room, opt_.self, to);
  a.data = bytes_of(text);
  j.plaintext.resize(text.size());  // only its size is kept, for the pending bound
  if (kind == SealedKind::text)
    ++stats_.sealed;
  else
    ++stats_.hellos_sent;
  return SealedError::none;
}

void SealedChannel::handle_encrypted(std::uint32_t job, bool ok, ByteView ciphertext) {
  if (out_.empty() || job < out_.front().job) return;
  const std::size_t i = job - out_.front().job;
  if (i >= out_.size() || out_[i].done) return;
  OutJob& j = out_[i];
  j.done = true;
  j.ok = ok && ciphertext.size == j.plaintext.size() + kSealedTagBytes;
  if (j.ok) j.body = ciphertext.to_bytes();
  flush_out();
}

void SealedChannel::flush_out() {
  while (!out_.empty() && out_.front().done) {
    OutJob& j = out_.front();
    if (j.ok) {
      SealedAction& a = action(SealedAction::Kind::transmit);
      a.frame = j.kind;
      a.peer = j.to;
      a.text = sealed_frame_text(ByteView(j.header), ByteView(j.body));
    } else {
      refuse(j.to, SealedError::crypto, j.counter);
    }
    out_bytes_ -= j.plaintext.size();
    out_.pop_front();
  }
}

void SealedChannel::open(std::string_view from, std::string_view text) {
  InJob& j = in_.emplace_back();
  j.job = next_in_job_++;
  j.from = std::string(from);
  j.done = true;  // until a decrypt is due
  ParsedSealedFrame f = parse_sealed_frame(text, opt_.max_lane_bytes);
  j.counter = f.header.counter;
  j.kind = f.header.kind;
  j.epoch = f.header.epoch;
  if (f.error != SealedError::none) {
    j.error = f.error;
  } else if (!key_id_ || f.header.key_id != *key_id_) {
    j.error = key_id_ ? SealedError::wrong_secret : SealedError::not_ready;
  } else if (in_.size() > kMaxSealedPending || in_bytes_ + f.body.size() > kMaxSealedPendingBytes ||
             from.empty() || from.size() > 0xFFFF) {
    j.error = from.empty() ? SealedError::malformed : SealedError::busy;
  } else if (Sender* s = sender(from, true); !s) {
    j.error = SealedError::busy;
  } else if (std::find(s->retired.begin(), s->retired.end(), f.header.session) !=
             s->retired.end()) {
    j.error = SealedError::stale;
  } else {
    SessionState* st = find_session(*s, f.header.session);
    if (!st) {
      if (!make_room_for_session(*s)) {
        j.error = SealedError::busy;
      } else {
        SessionState& fresh = s->trying.emplace_back();
        fresh.session = f.header.session;
        fresh.slot = new_slot();
        SealedAction& a = action(SealedAction::Kind::derive_key);
        a.slot = fresh.slot;
        a.salt.assign(fresh.session.begin(), fresh.session.end());
        a.info = sealed_key_info(opt_.room, from);
        st = &fresh;
      }
    }
    if (st) {
      j.session = f.header.session;
      j.slot = st->slot;
      j.bytes = f.body.size();
      j.nonce = sealed_nonce(f.header.counter);
      j.aad = sealed_aad(ByteView(f.header_bytes), opt_.room, from, opt_.self);
      j.body = std::move(f.body);
      j.done = false;
      in_bytes_ += j.bytes;
      if (st->key_failed) {
        j.done = true;
        j.error = SealedError::crypto;
      } else if (st->key_ready || (s->current && &*s->current == st)) {
        j.issued = true;
        SealedAction& a = action(SealedAction::Kind::decrypt);
        a.job = j.job;
        a.slot = j.slot;
        a.peer = j.from;
        a.nonce = std::move(j.nonce);
        a.aad = std::move(j.aad);
        a.data = std::move(j.body);
      }
    }
  }
  flush_in();
}

bool SealedChannel::make_room_for_session(Sender& s) {
  if (s.trying.size() + (s.current ? 1 : 0) < kMaxSessionsPerSender) return true;
  // Sessions seen only in frames not bound to our epoch (a relay replaying old ones, say) must not
  // keep a real new session out: the oldest one no frame waits on goes. Only on a new session.
  for (auto it = s.trying.begin(); it != s.trying.end(); ++it) {
    if (!it->key_ready && !it->key_failed) continue;
    const std::uint32_t slot = it->slot;
    if (std::any_of(in_.begin(), in_.end(), [&](const InJob& j) { return j.slot == slot; }))
      continue;
    action(SealedAction::Kind::release_key).slot = slot;
    s.trying.erase(it);
    return true;
  }
  return false;
}

void SealedChannel::issue_in(std::uint32_t slot) {
  bool failed = false;
  for (auto& [id, s] : senders_) {
    (void)id;
    for (const SessionState& st : s.trying)
      if (st.slot == slot) failed = st.key_failed;
  }
  for (InJob& j : in_) {
    if (j.issued || j.done || j.slot != slot) continue;
    if (failed) {
      j.done = true;
      j.error = SealedError::crypto;
      continue;
    }
    j.issued = true;
    SealedAction& a = action(SealedAction::Kind::decrypt);
    a.job = j.job;
    a.slot = j.slot;
    a.peer = j.from;
    a.nonce = std::move(j.nonce);
    a.aad = std::move(j.aad);
    a.data = std::move(j.body);
  }
  flush_in();
}

void SealedChannel::handle_decrypted(std::uint32_t job, bool ok, ByteView plaintext) {
  if (in_.empty() || job < in_.front().job) return;
  const std::size_t i = job - in_.front().job;
  if (i >= in_.size() || in_[i].done || !in_[i].issued) return;
  InJob& j = in_[i];
  j.done = true;
  j.ok = ok && plaintext.size + kSealedTagBytes == j.bytes;
  if (!j.ok) {
    j.error = SealedError::tampered;
  } else if (!is_valid_utf8(plaintext)) {
    j.error = SealedError::malformed;
  } else {
    j.text = std::string(plaintext.as_chars());
  }
  flush_in();
}

void SealedChannel::flush_in() {
  while (!in_.empty() && in_.front().done) {
    deliver(in_.front());
    in_bytes_ -= in_.front().bytes;
    in_.pop_front();
  }
}

void SealedChannel::drop_trying(const InJob& j) {
  Sender* s = sender(j.from, false);
  if (!s) return;
  auto it = std::find_if(s->trying.begin(), s->trying.end(),
                         [&](const SessionState& st) { return st.session == j.session; });
  if (it == s->trying.end()) return;
  for (const InJob& other : in_)
    if (&other != &j && other.slot == it->slot) return;
  action(SealedAction::Kind::release_key).slot = it->slot;
  s->trying.erase(it);
}

void SealedChannel::deliver(InJob& j) {
  if (j.error != SealedError::none) {
    refuse(j.from, j.error, j.counter);
    // A session that never authenticated is dropped after a forged frame, unless other frames
    // wait on it: forged sessions must not use up a sender's room for a real restart.
    if (j.error == SealedError::tampered || j.error == SealedError::crypto) drop_trying(j);
    return;
  }
  Sender* s = sender(j.from, false);
  if (!s || std::find(s->retired.begin(), s->retired.end(), j.session) != s->retired.end()) {
    refuse(j.from, SealedError::stale, j.counter);
    return;
  }
  SessionState* st = find_session(*s, j.session);
  if (!st) {
    refuse(j.from, SealedError::stale, j.counter);
    return;
  }
  // Fresh: bound to this run of ours, so sealed after the sender heard from us since we started.
  const bool fresh = j.epoch == opt_.session && j.epoch != Session{};
  if (!fresh) {
    // Sealed before we started (a replay of a recorded session), or by a sender that does not know
    // our epoch yet: nothing is delivered, and the sender is told our epoch once per session (a
    // hello when we do not know that session live yet, so it answers and links us too).
    if (j.kind == SealedKind::text)
      refuse(j.from, SealedError::wrong_epoch, j.counter);
    else
      ++stats_.hellos_opened;
    if (!st->answered) {
      const bool live = s->linked && s->current && &*s->current == st;
      if (enqueue(live ? SealedKind::answer : SealedKind::hello, j.from, j.session, {}) ==
          SealedError::none)
        st->answered = true;
    }
    return;
  }
  if (!s->current || &*s->current != st) {
    // A fresh frame of a new session of this sender: it is the sender now (a restart), and every
    // older session is retired.
    auto it = std::find_if(s->trying.begin(), s->trying.end(),
                           [&](const SessionState& t) { return t.session == j.session; });
    if (s->current) {
      s->retired.push_back(s->current->session);
      if (s->retired.size() > kMaxRetiredSessions) s->retired.pop_front();
      action(SealedAction::Kind::release_key).slot = s->current->slot;
    }
    s->current = *it;
    s->trying.erase(it);
  }
  SessionState& cur = *s->current;
  if (j.counter <= cur.highest) {
    const std::uint64_t behind = cur.highest - j.counter;
    if (behind >= kSealedReplayWindow)
      refuse(j.from, SealedError::stale, j.counter);
    else if (cur.window >> behind & 1)
      refuse(j.from, SealedError::replay, j.counter);
    else
      refuse(j.from, SealedError::reorder, j.counter);
    return;
  }
  const std::uint64_t ahead = j.counter - cur.highest;
  cur.window = ahead >= kSealedReplayWindow ? 1 : (cur.window << ahead | 1);
  cur.highest = j.counter;
  if (!s->linked) {
    s->linked = true;
    SealedEvent& e = events_.emplace_back();
    e.kind = SealedEvent::Kind::linked;
    e.peer = j.from;
    e.counter = j.counter;
  }
  if (j.kind != SealedKind::text) {
    ++stats_.hellos_opened;
    if (j.kind == SealedKind::hello) enqueue(SealedKind::answer, j.from, cur.session, {});
    return;
  }
  ++stats_.opened;
  SealedEvent& e = events_.emplace_back();
  e.kind = SealedEvent::Kind::text;
  e.peer = j.from;
  e.text = std::move(j.text);
  e.counter = j.counter;
}

}  // namespace tether::room
