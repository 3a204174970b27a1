#include "mailbox/mailbox.hpp"

#include <algorithm>

#include "common/json.hpp"
#include "common/sha256.hpp"

namespace tether::mailbox {
namespace {

std::string hash_hex(std::string_view text) {
  return to_hex(sha256(ByteView(text)));
}

std::string ok_body(Json j) {
  Json out{{"ok", true}};
  for (auto& [k, v] : j.items()) out[k] = std::move(v);
  return to_json(out);
}

Json pair_json(const Pairing& p) {
  Json j{{"pair", p.pair},
         {"name", p.name},
         {"state", pair_state_name(p.state)},
         {"createdAt", p.created}};
  if (p.state == PairState::pending) j["expiresAt"] = p.created + kPendingPairTtlMs;
  if (p.state != PairState::pending) j["changedAt"] = p.changed;
  return j;
}

}  // namespace

// ---- the change a request makes, applied as one Persist ------------------------------------

// key -> value, or nullopt for a delete; a later write of a key replaces an earlier one, so a
// record stored and forgotten within one sweep is only deleted.
struct ChangeSet {
  std::map<std::string, std::optional<std::string>> ops;
  void put(std::string key, std::string value) { ops[std::move(key)] = std::move(value); }
  void del(std::string key) { ops[std::move(key)] = std::nullopt; }
};

// ---- start-up ---------------------------------------------------------------------------------

bool Mailbox::load_record(std::string_view key, std::string_view value) {
  auto skip = [&](std::string why) {
    events_.push(
        Event{Event::Kind::record_skipped, std::string(key.substr(0, 64)), std::move(why)});
    return false;
  };
  auto decoded = decode_record(key, value);
  if (!decoded) return skip(decoded.error());
  Record& r = decoded.value();
  if (auto* m = std::get_if<Meta>(&r)) {
    meta_ = std::move(*m);
    return true;
  }
  if (auto* p = std::get_if<Pairing>(&r)) {
    // Storage never legitimately holds more than the core allows: a bound here keeps a damaged
    // or hostile store from growing the core's memory past its limits.
    if (pairs_.size() >= kMaxPairs + kMaxRevokedPairs) return skip("more pairings than the limit");
    if (pair_by_key_.count(p->key_hash)) return skip("a second pairing with the same key");
    pair_by_key_[p->key_hash] = p->pair;
    pairs_[p->pair] = std::move(*p);
    return true;
  }
  if (auto* c = std::get_if<Code>(&r)) {
    if (codes_.size() >= kMaxOpenCodes) return skip("more pairing codes than the limit");
    codes_[c->hash] = std::move(*c);
    return true;
  }
  auto& m = std::get<Message>(r);
  if (messages_.size() >= kMaxRecords) return skip("more message records than the limit");
  if (messages_.count(m.seq)) return skip("a second record for this seq");
  if (by_sender_id_.count({m.pair, m.id})) return skip("a second record for this sender's id");
  if (m.text) {
    if (with_text_.size() >= kMaxStoredMessages ||
        stored_bytes_ + m.text->size() > kMaxStoredBytes) {
      return skip("more stored text than the limit");
    }
    stored_bytes_ += m.text->size();
    with_text_.insert(m.seq);
  }
  clock_ = std::max(clock_, m.stored);
  by_sender_id_[{m.pair, m.id}] = m.seq;
  messages_.emplace(m.seq, std::move(m));
  return true;
}

void Mailbox::loaded(TimeMs now) {
  clock_ = std::max(clock_, now);
  if (!meta_) {
    if (!messages_.empty() || !pairs_.empty() || !codes_.empty()) {
      events_.push(Event{Event::Kind::record_skipped, meta_key(),
                         "records without the mailbox's meta record; the mailbox is treated as "
                         "absent"});
    }
    messages_.clear();
    with_text_.clear();
    by_sender_id_.clear();
    stored_bytes_ = 0;
    pairs_.clear();
    pair_by_key_.clear();
    codes_.clear();
    return;
  }
  if (!messages_.empty() && messages_.rbegin()->first >= meta_->next_seq) {
    meta_->next_seq = messages_.rbegin()->first + 1;  // written with the next change
  }
  expire(clock_);
}

// ---- inputs -----------------------------------------------------------------------------------

void Mailbox::handle_request(RequestId request, std::string_view method, std::string_view target,
                             std::string_view authorization, ByteView body, ByteView entropy,
                             TimeMs now) {
  clock_ = std::max(clock_, now);
  if (failed_) {
    ApiError e = api_error(ErrorCode::storage_failed,
                           "the mailbox's storage failed and it is being reloaded");
    e.retry_after_ms = 1000;
    actions_.push(Respond{request, error_status(e.code), error_body(e), e.retry_after_ms});
    return;
  }
  if (held_.size() >= kMaxHeldOutputs) {
    ApiError e = api_error(ErrorCode::busy,
                           std::to_string(held_.size()) + " responses are waiting for storage",
                           kMaxHeldOutputs);
    e.retry_after_ms = 1000;
    actions_.push(Respond{request, error_status(e.code), error_body(e), e.retry_after_ms});
    return;
  }
  auto parsed = parse_request(method, target, authorization, body);
  if (!parsed) {
    respond_error(request, parsed.error());
    return;
  }
  // Expiry is exact whenever the host's timer fires: a request never sees text past retention.
  expire(clock_);
  dispatch(request, parsed.value(), entropy);
}

void Mailbox::handle_persisted(std::uint64_t token, bool ok, TimeMs now) {
  clock_ = std::max(clock_, now);
  if (failed_ || token == 0 || token > next_token_ || token <= acked_through_) return;
  if (!ok) {
    fail("a write (persist " + std::to_string(token) + ") failed");
    return;
  }
  acked_early_.insert(token);
  while (acked_early_.count(acked_through_ + 1)) {
    acked_early_.erase(acked_through_ + 1);
    ++acked_through_;
  }
  release();
}

void Mailbox::handle_reader_closed(ReaderId reader, TimeMs now) {
  clock_ = std::max(clock_, now);
  readers_.erase(reader);
}

ReaderId Mailbox::restore_reader(TimeMs now) {
  clock_ = std::max(clock_, now);
  if (failed_ || !meta_ || readers_.size() >= kMaxReaders) return 0;
  const ReaderId r = next_reader_++;
  readers_.insert(r);
  return r;
}

void Mailbox::handle_timeout(TimeMs now) {
  clock_ = std::max(clock_, now);
  if (failed_) return;
  expire(clock_);
}

Timeout Mailbox::poll_timeout() const {
  if (failed_ || !meta_) return std::nullopt;
  Timeout t;
  if (!with_text_.empty()) t = earliest(t, messages_.at(*with_text_.begin()).text_expires());
  if (!messages_.empty()) t = earliest(t, messages_.begin()->second.record_expires());
  for (const auto& [hash, code] : codes_) t = earliest(t, code.expires);
  for (const auto& [id, p] : pairs_) {
    if (p.state == PairState::pending) t = earliest(t, p.created + kPendingPairTtlMs);
    if (p.state == PairState::revoked) t = earliest(t, p.changed + kRevokedRetentionMs);
  }
  return t;
}

// ---- routes -----------------------------------------------------------------------------------

void Mailbox::dispatch(RequestId request, ApiRequest& req, ByteView entropy) {
  const Route route = req.where.route;
  const bool needs_entropy =
      route == Route::create || route == Route::pair || route == Route::issue_code;
  if (needs_entropy && entropy.size < kEntropyBytes) {
    respond_error(
        request, api_error(ErrorCode::internal,
                           "the host passed " + std::to_string(entropy.size) +
                               " random bytes; each request needs " + std::to_string(kEntropyBytes),
                           kEntropyBytes));
    return;
  }
  if (route == Route::create) {
    create(request, entropy);
    return;
  }
  if (!meta_ || req.where.mailbox != meta_->id) {
    respond_error(request, api_error(ErrorCode::unknown_mailbox,
                                     "no mailbox has the id " + shown(req.where.mailbox)));
    return;
  }
  if (route == Route::pair) {
    pair(request, req, entropy);
    return;
  }
  if (route == Route::send || route == Route::status) {
    auto from = check_sender(req.auth);
    if (!from) {
      respond_error(request, from.error());
      return;
    }
    if (route == Route::send)
      send(request, *from.value(), req);
    else
      status(request, *from.value(), req.where.message_id);
    return;
  }
  if (auto e = check_owner(req.auth)) {
    respond_error(request, *e);
    return;
  }
  switch (route) {
    case Route::info: info(request); break;
    case Route::issue_code: issue_code(request, entropy); break;
    case Route::list_pairs: list_pairs(request); break;
    case Route::accept_pair: accept_pair(request, req.where.pair); break;
    case Route::unpair: unpair(request, req.where.pair); break;
    case Route::list: list(request, req); break;
    case Route::ack: ack(request, req); break;
    case Route::stream: stream(request, req); break;
    default: break;  // handled above
  }
}

// Hashes are compared, never keys: a timing difference says something about a hash, which
// reveals nothing about a 256-bit key.
std::optional<ApiError> Mailbox::check_owner(const Credential& c) const {
  switch (c.kind) {
    case KeyKind::none:
      return api_error(ErrorCode::bad_key,
                       "this route needs the owner key (Authorization: Bearer mbo_...)");
    case KeyKind::malformed:
      return api_error(ErrorCode::bad_key,
                       "the Authorization header is not `Bearer <key>` with a mailbox key "
                       "(mbo_ or mbs_ and 64 hex characters)");
    case KeyKind::sender:
      return api_error(ErrorCode::bad_key, "this is a sender key; this route needs the owner key");
    case KeyKind::owner:
      if (hash_hex(c.key) != meta_->owner_hash) {
        return api_error(ErrorCode::bad_key, "this owner key does not open mailbox " + meta_->id);
      }
      return std::nullopt;
  }
  return std::nullopt;
}

Result<const Pairing*, ApiError> Mailbox::check_sender(const Credential& c) const {
  switch (c.kind) {
    case KeyKind::none:
      return err(api_error(ErrorCode::unpaired_sender,
                           "no sender key: only senders paired with this mailbox may deposit "
                           "or ask for status"));
    case KeyKind::malformed:
      return err(api_error(ErrorCode::bad_key,
                           "the Authorization header is not `Bearer <key>` with a mailbox key "
                           "(mbo_ or mbs_ and 64 hex characters)"));
    case KeyKind::owner:
      return err(api_error(ErrorCode::bad_key,
                           "this is the owner key; sending and status take a sender key (pair "
                           "with the mailbox to get one)"));
    case KeyKind::sender: break;
  }
  auto k = pair_by_key_.find(hash_hex(c.key));
  if (k == pair_by_key_.end()) {
    return err(
        api_error(ErrorCode::bad_key, "this sender key does not belong to mailbox " + meta_->id));
  }
  const Pairing& p = pairs_.at(k->second);
  if (p.state == PairState::pending) {
    return err(api_error(ErrorCode::unpaired_sender,
                         "pair request " + p.pair + " is waiting for the owner to accept it"));
  }
  if (p.state == PairState::revoked) {
    return err(api_error(ErrorCode::unpaired_sender,
                         "the owner revoked pairing " + p.pair + "; pair again to send"));
  }
  return &p;
}

std::optional<ApiError> Mailbox::take_flood_token(const std::string& pair) {
  Bucket& b = buckets_[pair];
  if (b.last < 0) b.last = clock_;
  const TimeMs refills = (clock_ - b.last) / kFloodRefillMs;
  if (refills > 0) {
    b.tokens = static_cast<std::uint32_t>(
        std::min<TimeMs>(kFloodBurst, static_cast<TimeMs>(b.tokens) + refills));
    b.last += refills * kFloodRefillMs;
  }
  if (b.tokens == kFloodBurst) b.last = clock_;  // a full bucket banks no further credit
  if (b.tokens == 0) {
    ApiError e = api_error(ErrorCode::flood,
                           "this sender sent " + std::to_string(kFloodBurst) +
                               " messages in a burst; after that it may send one every " +
                               std::to_string(kFloodRefillMs) + " ms",
                           kFloodBurst);
    e.retry_after_ms = b.last + kFloodRefillMs - clock_;
    return e;
  }
  --b.tokens;
  return std::nullopt;
}

void Mailbox::create(RequestId request, ByteView entropy) {
  if (meta_) {
    respond_error(request, api_error(ErrorCode::mailbox_exists,
                                     "mailbox " + meta_->id + " already exists here"));
    return;
  }
  const std::string owner_key =
      std::string(kOwnerKeyPrefix) + to_hex(entropy.sub(kMailboxIdBytes, kKeyBytes));
  meta_ = Meta{mailbox_id_for(entropy), hash_hex(owner_key), clock_, 1};
  ChangeSet ch;
  ch.put(meta_key(), encode_record(*meta_));
  commit(std::move(ch));
  respond(request, 201,
          ok_body(Json{{"mailbox", meta_->id}, {"ownerKey", owner_key}, {"createdAt", clock_}}));
}

void Mailbox::info(RequestId request) {
  std::size_t active = 0, pending = 0;
  for (const auto& [id, p] : pairs_) {
    active += p.state == PairState::active;
    pending += p.state == PairState::pending;
  }
  respond(request, 200,
          ok_body(Json{{"mailbox", meta_->id},
                       {"createdAt", meta_->created},
                       {"storedMessages", with_text_.size()},
                       {"storedBytes", stored_bytes_},
                       {"records", messages_.size()},
                       {"pairs", active},
                       {"pendingPairs", pending},
                       {"readers", readers_.size()},
                       {"cursor", meta_->next_seq - 1}}));
}

void Mailbox::issue_code(RequestId request, ByteView entropy) {
  if (codes_.size() >= kMaxOpenCodes) {
    respond_error(request, api_error(ErrorCode::too_many_pairs,
                                     std::to_string(codes_.size()) +
                                         " pairing codes are open, the most a mailbox holds",
                                     kMaxOpenCodes));
    return;
  }
  const std::string code = std::string(kCodePrefix) + to_hex(entropy.sub(0, kCodeBytes));
  Code c{hash_hex(code), clock_ + kCodeTtlMs};
  ChangeSet ch;
  ch.put(code_key(c.hash), encode_record(c));
  codes_[c.hash] = c;
  commit(std::move(ch));
  respond(request, 201, ok_body(Json{{"code", code}, {"expiresAt", c.expires}}));
}

void Mailbox::pair(RequestId request, ApiRequest& req, ByteView entropy) {
  std::size_t live = 0, pending = 0;
  for (const auto& [id, p] : pairs_) {
    live += p.state != PairState::revoked;
    pending += p.state == PairState::pending;
  }
  const Code* code = nullptr;
  if (!req.code.empty()) {
    auto it = codes_.find(hash_hex(req.code));
    if (it == codes_.end() || it->second.expires <= clock_) {
      respond_error(request, api_error(ErrorCode::bad_code,
                                       "this pairing code is unknown, already used or expired"));
      return;
    }
    code = &it->second;
  } else if (pending >= kMaxPendingPairs) {
    respond_error(request,
                  api_error(ErrorCode::too_many_pairs,
                            std::to_string(pending) + " pair requests already wait for the owner",
                            kMaxPendingPairs));
    return;
  }
  if (live >= kMaxPairs) {
    respond_error(request, api_error(ErrorCode::too_many_pairs,
                                     "the mailbox has " + std::to_string(live) +
                                         " pairings, the most it holds",
                                     kMaxPairs));
    return;
  }
  Pairing p;
  p.pair = to_hex(entropy.sub(0, kPairIdBytes));
  const std::string key =
      std::string(kSenderKeyPrefix) + to_hex(entropy.sub(kPairIdBytes, kKeyBytes));
  p.key_hash = hash_hex(key);
  if (pairs_.count(p.pair) || pair_by_key_.count(p.key_hash)) {
    respond_error(request, api_error(ErrorCode::internal,
                                     "the host's random bytes repeated an earlier pairing"));
    return;
  }
  p.name = std::move(req.name);
  p.state = code ? PairState::active : PairState::pending;
  p.created = p.changed = clock_;
  ChangeSet ch;
  ch.put(pair_key(p.pair), encode_record(p));
  if (code) {
    ch.del(code_key(code->hash));
    codes_.erase(code->hash);  // single use
  }
  pair_by_key_[p.key_hash] = p.pair;
  Json body = pair_json(p);
  body["senderKey"] = key;
  pairs_[p.pair] = std::move(p);
  commit(std::move(ch));
  respond(request, 201, ok_body(std::move(body)));
}

void Mailbox::list_pairs(RequestId request) {
  Json list = Json::array();
  for (const auto& [id, p] : pairs_) list.push_back(pair_json(p));
  respond(request, 200, ok_body(Json{{"pairs", std::move(list)}}));
}

void Mailbox::accept_pair(RequestId request, const std::string& pair) {
  auto it = pairs_.find(pair);
  if (it == pairs_.end() || it->second.state == PairState::revoked) {
    respond_error(request,
                  api_error(ErrorCode::unknown_pair,
                            it == pairs_.end()
                                ? "no pairing or pair request has the id " + pair
                                : "pairing " + pair + " was revoked; the sender must pair again"));
    return;
  }
  Pairing& p = it->second;
  if (p.state == PairState::pending) {
    p.state = PairState::active;
    p.changed = clock_;
    ChangeSet ch;
    ch.put(pair_key(p.pair), encode_record(p));
    commit(std::move(ch));
  }
  respond(request, 200, ok_body(Json{{"pair", pair_json(p)}}));
}

void Mailbox::unpair(RequestId request, const std::string& pair) {
  auto it = pairs_.find(pair);
  if (it == pairs_.end()) {
    respond_error(request, api_error(ErrorCode::unknown_pair, "no pairing has the id " + pair));
    return;
  }
  Pairing& p = it->second;
  if (p.state != PairState::revoked) {
    p.state = PairState::revoked;
    p.changed = clock_;
    buckets_.erase(p.pair);
    ChangeSet ch;
    ch.put(pair_key(p.pair), encode_record(p));
    Json body = pair_json(p);
    evict_revoked(ch);
    commit(std::move(ch));
    respond(request, 200, ok_body(Json{{"pair", std::move(body)}}));
    return;
  }
  respond(request, 200, ok_body(Json{{"pair", pair_json(p)}}));
}

void Mailbox::send(RequestId request, const Pairing& from, ApiRequest& req) {
  if (auto e = take_flood_token(from.pair)) {
    respond_error(request, *e);
    return;
  }
  const std::string text_hash = hash_hex(req.text);
  auto seen = by_sender_id_.find({from.pair, req.id});
  if (seen != by_sender_id_.end()) {
    const Message& m = messages_.at(seen->second);
    if (m.text_hash != text_hash) {
      respond_error(
          request, api_error(ErrorCode::id_conflict, "message id " + shown(req.id) +
                                                         " was already used for a different text"));
      return;
    }
    respond(request, 200,
            ok_body(Json{{"id", m.id},
                         {"seq", m.seq},
                         {"status", status_name(m.status)},
                         {"duplicate", true},
                         {"storedAt", m.stored},
                         {"expiresAt", m.text_expires()}}));
    return;
  }
  if (with_text_.size() >= kMaxStoredMessages) {
    respond_error(request, api_error(ErrorCode::mailbox_full,
                                     "the mailbox holds " + std::to_string(with_text_.size()) +
                                         " unread messages, the most it keeps",
                                     kMaxStoredMessages));
    return;
  }
  if (stored_bytes_ + req.text.size() > kMaxStoredBytes) {
    respond_error(request, api_error(ErrorCode::mailbox_full,
                                     "the mailbox holds " + std::to_string(stored_bytes_) +
                                         " bytes of unread text; this message would pass the "
                                         "limit",
                                     kMaxStoredBytes));
    return;
  }
  ChangeSet ch;
  if (messages_.size() >= kMaxRecords) {
    // Full of records: forget the oldest one that no longer holds text (its status and its
    // duplicate check go with it). Fewer than kMaxRecords hold text, so one exists.
    for (auto it = messages_.begin(); it != messages_.end(); ++it) {
      if (!it->second.text) {
        forget_message(it, ch);
        break;
      }
    }
  }
  Message m;
  m.seq = meta_->next_seq++;
  m.pair = from.pair;
  m.sender_name = from.name;
  m.id = std::move(req.id);
  m.text_hash = text_hash;
  stored_bytes_ += req.text.size();
  m.text = std::move(req.text);
  m.status = Status::stored;
  m.stored = clock_;
  ch.put(message_key(m.seq), encode_record(m));
  ch.put(meta_key(), encode_record(*meta_));
  with_text_.insert(m.seq);
  by_sender_id_[{m.pair, m.id}] = m.seq;
  const Message& stored = messages_.emplace(m.seq, std::move(m)).first->second;
  commit(std::move(ch));
  respond(request, 201,
          ok_body(Json{{"id", stored.id},
                       {"seq", stored.seq},
                       {"status", "stored"},
                       {"duplicate", false},
                       {"storedAt", stored.stored},
                       {"expiresAt", stored.text_expires()}}));
  if (!readers_.empty()) {
    const std::string frame = "{\"t\":\"message\",\"message\":" + message_json(stored) + "}";
    for (const ReaderId reader : readers_) hold(Push{reader, frame});
  }
}

void Mailbox::list(RequestId request, const ApiRequest& req) {
  std::string items;
  std::size_t count = 0, bytes = 0;
  std::int64_t cursor = req.since;
  bool more = false;
  for (auto it = with_text_.upper_bound(req.since); it != with_text_.end(); ++it) {
    const Message& m = messages_.at(*it);
    if (count == req.limit || (count > 0 && bytes + m.text->size() > kMaxListBytes)) {
      more = true;
      break;
    }
    if (count > 0) items += ',';
    items += message_json(m);
    bytes += m.text->size();
    cursor = m.seq;
    ++count;
  }
  respond(request, 200,
          "{\"ok\":true,\"messages\":[" + items + "],\"cursor\":" + std::to_string(cursor) +
              ",\"more\":" + (more ? "true" : "false") + "}");
}

void Mailbox::ack(RequestId request, const ApiRequest& req) {
  Json updated = Json::array(), unchanged = Json::array(), unknown = Json::array();
  ChangeSet ch;
  for (std::int64_t seq : req.seqs) {
    auto it = messages_.find(seq);
    if (it == messages_.end()) {
      unknown.push_back(seq);
      continue;
    }
    Message& m = it->second;
    bool moved = false;
    if (req.ack_status == Status::delivered && m.status == Status::stored) {
      m.status = Status::delivered;
      m.delivered = clock_;
      moved = true;
    } else if (req.ack_status == Status::read &&
               (m.status == Status::stored || m.status == Status::delivered)) {
      if (m.delivered < 0) m.delivered = clock_;  // read implies delivered
      m.status = Status::read;
      m.read = clock_;
      drop_text(m);  // read text leaves the mailbox; the status record stays
      moved = true;
    }
    (moved ? updated : unchanged).push_back(seq);
    if (moved) ch.put(message_key(seq), encode_record(m));
  }
  commit(std::move(ch));
  respond(request, 200,
          ok_body(Json{{"status", status_name(req.ack_status)},
                       {"updated", std::move(updated)},
                       {"unchanged", std::move(unchanged)},
                       {"unknown", std::move(unknown)}}));
}

void Mailbox::status(RequestId request, const Pairing& from, const std::string& id) {
  auto seen = by_sender_id_.find({from.pair, id});
  if (seen == by_sender_id_.end()) {
    respond_error(request, api_error(ErrorCode::unknown_message,
                                     "this sender has no message with the id " + shown(id)));
    return;
  }
  const Message& m = messages_.at(seen->second);
  Json j{{"id", m.id}, {"seq", m.seq}, {"status", status_name(m.status)}, {"storedAt", m.stored}};
  if (m.delivered >= 0) j["deliveredAt"] = m.delivered;
  if (m.read >= 0) j["readAt"] = m.read;
  j["expiresAt"] = m.text_expires();
  j["forgottenAt"] = m.record_expires();
  respond(request, 200, ok_body(std::move(j)));
}

void Mailbox::stream(RequestId request, const ApiRequest& req) {
  if (readers_.size() >= kMaxReaders) {
    respond_error(request, api_error(ErrorCode::too_many_readers,
                                     std::to_string(readers_.size()) +
                                         " readers are connected, the most a mailbox pushes to",
                                     kMaxReaders));
    return;
  }
  const ReaderId r = next_reader_++;
  readers_.insert(r);
  hold(AcceptReader{request, r});
  // Everything still held after the reader's cursor, then `ready`, then live messages.
  std::int64_t cursor = req.since;
  for (auto it = with_text_.upper_bound(req.since); it != with_text_.end(); ++it) {
    hold(Push{r, "{\"t\":\"message\",\"message\":" + message_json(messages_.at(*it)) + "}"});
    cursor = *it;
  }
  hold(Push{r, "{\"t\":\"ready\",\"cursor\":" + std::to_string(cursor) + "}"});
}

// ---- expiry -----------------------------------------------------------------------------------

void Mailbox::expire(TimeMs now) {
  ChangeSet ch;
  // Text at seven days (exactly: kept at retention - 1 ms, gone at retention).
  while (!with_text_.empty()) {
    Message& m = messages_.at(*with_text_.begin());
    if (m.text_expires() > now) break;
    if (m.status == Status::stored) m.status = Status::expired;  // it never reached the owner
    drop_text(m);
    ch.put(message_key(m.seq), encode_record(m));
  }
  while (!messages_.empty() && messages_.begin()->second.record_expires() <= now) {
    forget_message(messages_.begin(), ch);
  }
  for (auto it = codes_.begin(); it != codes_.end();) {
    if (it->second.expires <= now) {
      ch.del(code_key(it->first));
      it = codes_.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<std::string> lapsed;
  for (const auto& [id, p] : pairs_) {
    if ((p.state == PairState::pending && p.created + kPendingPairTtlMs <= now) ||
        (p.state == PairState::revoked && p.changed + kRevokedRetentionMs <= now)) {
      lapsed.push_back(id);
    }
  }
  for (const std::string& id : lapsed) forget_pair(id, ch);
  if (!ch.ops.empty()) commit(std::move(ch));
}

void Mailbox::drop_text(Message& m) {
  if (!m.text) return;
  stored_bytes_ -= m.text->size();
  with_text_.erase(m.seq);
  m.text.reset();
}

void Mailbox::forget_message(std::map<std::int64_t, Message>::iterator it, ChangeSet& ch) {
  drop_text(it->second);
  by_sender_id_.erase({it->second.pair, it->second.id});
  ch.del(message_key(it->first));
  messages_.erase(it);
}

void Mailbox::forget_pair(const std::string& pair, ChangeSet& ch) {
  auto it = pairs_.find(pair);
  if (it == pairs_.end()) return;
  pair_by_key_.erase(it->second.key_hash);
  buckets_.erase(pair);
  ch.del(pair_key(pair));
  pairs_.erase(it);
}

void Mailbox::evict_revoked(ChangeSet& ch) {
  std::size_t revoked = 0;
  for (const auto& [id, p] : pairs_) revoked += p.state == PairState::revoked;
  while (revoked > kMaxRevokedPairs) {
    const Pairing* oldest = nullptr;
    for (const auto& [id, p] : pairs_) {
      if (p.state == PairState::revoked && (!oldest || p.changed < oldest->changed)) oldest = &p;
    }
    forget_pair(oldest->pair, ch);
    --revoked;
  }
}

// ---- output -----------------------------------------------------------------------------------

void Mailbox::commit(ChangeSet ch) {
  if (ch.ops.empty()) return;
  Persist p;
  p.token = ++next_token_;
  for (auto& [key, value] : ch.ops) {
    if (value)
      p.puts.push_back(Put{key, std::move(*value)});
    else
      p.deletes.push_back(key);
  }
  actions_.push(std::move(p));
}

void Mailbox::hold(Action action) {
  held_.push_back(Held{next_token_, std::move(action)});
  release();
}

void Mailbox::respond(RequestId request, int status, std::string body, TimeMs retry_after_ms) {
  hold(Respond{request, status, std::move(body), retry_after_ms});
}

void Mailbox::respond_error(RequestId request, const ApiError& e) {
  respond(request, error_status(e.code), error_body(e), e.retry_after_ms);
}

void Mailbox::release() {
  while (!held_.empty() && held_.front().after <= acked_through_) {
    actions_.push(std::move(held_.front().action));
    held_.pop_front();
  }
}

void Mailbox::fail(std::string detail) {
  failed_ = true;
  // Writes queued behind the failed one are withdrawn: storage keeps exactly what was
  // acknowledged, which is what the rebuilt core will load.
  PollQueue<Action> kept;
  while (auto a = actions_.poll()) {
    if (!std::holds_alternative<Persist>(*a)) kept.push(std::move(*a));
  }
  actions_ = std::move(kept);
  const ApiError e =
      api_error(ErrorCode::storage_failed, "the write behind this request did not reach storage (" +
                                               detail + "); nothing it did was kept");
  for (Held& h : held_) {
    if (auto* r = std::get_if<Respond>(&h.action)) {
      actions_.push(Respond{r->request, error_status(e.code), error_body(e), 1000});
    } else if (auto* a = std::get_if<AcceptReader>(&h.action)) {
      actions_.push(Respond{a->request, error_status(e.code), error_body(e), 1000});
    }
  }
  held_.clear();
  for (const ReaderId reader : readers_) {
    actions_.push(CloseReader{reader, 1011, "the mailbox's storage failed; reconnect"});
  }
  readers_.clear();
  events_.push(Event{Event::Kind::storage_failed, "", std::move(detail)});
}

std::string Mailbox::message_json(const Message& m) const {
  Json j{{"seq", m.seq},
         {"id", m.id},
         {"from", Json{{"pair", m.pair}, {"name", m.sender_name}}},
         {"text", m.text ? *m.text : std::string()},
         {"status", status_name(m.status)},
         {"storedAt", m.stored},
         {"expiresAt", m.text_expires()}};
  return to_json(j);
}

std::map<std::string, std::string> Mailbox::snapshot() const {
  std::map<std::string, std::string> out;
  if (!meta_) return out;
  out[meta_key()] = encode_record(*meta_);
  for (const auto& [id, p] : pairs_) out[pair_key(id)] = encode_record(p);
  for (const auto& [hash, c] : codes_) out[code_key(hash)] = encode_record(c);
  for (const auto& [seq, m] : messages_) out[message_key(seq)] = encode_record(m);
  return out;
}

}  // namespace tether::mailbox
