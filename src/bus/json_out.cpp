// See json_out.hpp.
#include "bus/json_out.hpp"

namespace tether::bus {

Json error_json(const BusError& e) {
  return Json{{"ok", false},
              {"code", std::string(bus_error_name(e.code))},
              {"field", e.field},
              {"detail", e.detail}};
}

Json identity_json(const Identity& id) {
  return Json{{"streamId", id.stream_id},
              {"role", id.role},
              {"name", id.name},
              {"instanceId", id.instance_id}};
}

Json peer_json(const PeerInfo& p) {
  return Json{{"peer", p.conn},
              {"streamId", p.stream_id ? Json(*p.stream_id) : Json(nullptr)},
              {"identity", p.identity ? identity_json(*p.identity) : Json(nullptr)},
              {"open", p.open},
              {"queued", p.queued},
              {"announce", p.announce},
              {"handoff", p.handoff}};
}

Json outgoing_handoff_json(const OutgoingHandoff& h) {
  return Json{{"id", h.id},
              {"to", h.to},
              {"expiresAt", h.expires_at},
              {"attempts", h.attempts},
              {"nextAttemptMs", h.next_attempt_ms ? Json(*h.next_attempt_ms) : Json(nullptr)},
              {"envelope", envelope_to_json(h.envelope)}};
}

Json event_json(const Event& e, const Bus& bus) {
  switch (e.kind) {
    case EventKind::message:
      return Json{{"kind", "message"},
                  {"envelope", envelope_to_json(*e.envelope)},
                  {"peer", e.conn},
                  {"replayed", e.replayed}};
    case EventKind::rejected: {
      Json j = error_json(e.error);
      return Json{{"kind", "rejected"}, {"error", j}, {"peer", e.conn}};
    }
    case EventKind::handoff: {
      const Envelope& h = *e.envelope;
      Json scratch;
      const Json& p = h.payload_dom(scratch);  // check_handoff made it {request, expiresAt}
      return Json{{"kind", "handoff"},
                  {"envelope", envelope_to_json(h)},
                  {"request", p["request"]},
                  {"expiresAt", p["expiresAt"]},
                  {"key", e.key},
                  {"peer", e.conn}};
    }
    case EventKind::handoff_stored:
      return Json{{"kind", "handoffStored"}, {"handoff", outgoing_handoff_json(*e.handoff)}};
    case EventKind::handoff_expired:
      return Json{{"kind", "handoffExpired"}, {"handoff", outgoing_handoff_json(*e.handoff)}};
    case EventKind::confirmation:
      return Json{{"kind", "confirmation"},
                  {"messageId", e.message_id},
                  {"from", e.peer_stream},
                  {"type", std::string(message_type_name(e.envelope->type))},
                  {"forType", std::string(message_type_name(e.for_type))},
                  {"envelope", envelope_to_json(*e.envelope)}};
    case EventKind::peer: {
      auto p = bus.peer(e.conn);
      PeerInfo gone;
      gone.conn = e.conn;
      return Json{{"kind", "peer"}, {"peer", peer_json(p ? *p : gone)}};
    }
  }
  return nullptr;
}

void append_event_json(std::string& out, const Event& e, const Bus& bus) {
  if (e.kind != EventKind::message || !e.envelope) {
    append_json(out, event_json(e, bus), JsonNumbers::js_double);
    return;
  }
  out += "{\"kind\":\"message\",\"envelope\":";
  // The payload as received: the text kept in the envelope, or the text that came with a DOM
  // one; written from the DOM only when the envelope came through the DOM path.
  if (!e.payload_text.empty())
    append_envelope_json(out, *e.envelope, e.payload_text);
  else
    append_envelope_as_received(out, *e.envelope);
  out += ",\"peer\":";
  append_json_string(out, e.conn);
  out += e.replayed ? ",\"replayed\":true}" : ",\"replayed\":false}";
}

Json receipt_json(const Receipt& r, const Envelope& e, std::string_view request_id,
                  std::string_view peer) {
  const char* kind = r.kind == Receipt::Kind::ack                ? "ack"
                     : r.kind == Receipt::Kind::command_response ? "command_response"
                                                                 : "handoff_stored";
  return Json{{"kind", kind},
              {"requestId", std::string(request_id)},
              {"peer", std::string(peer)},
              {"ok", r.ok},
              {"envelope", envelope_to_json(e)}};
}

std::optional<BusError> check_config(const BusConfig& c) {
  if (auto e = check_identity(c.self, "self")) return e;
  if (c.transport_id)
    if (auto e = check_string(*c.transport_id, kMaxToChars, "transportId")) return e;
  if (!c.announce.is_null() && !c.announce.is_object())
    return bus_error(BusErrorCode::bad_field, "announce",
                     "announce is an object {skills[], status, version, topics[]}");
  return std::nullopt;
}

Result<BusConfig, BusError> config_from_json(const Json& j) {
  if (!j.is_object())
    return err(bus_error(BusErrorCode::not_object, "", "options are an object {self, ...}"));
  BusConfig c;
  auto self = j.find("self");
  if (self == j.end() || !self->is_object())
    return err(bus_error(BusErrorCode::missing_field, "self",
                         "self {streamId, role, name, instanceId} is required"));
  auto field = [&](const char* k, std::string& out) {
    auto it = self->find(k);
    if (it != self->end() && it->is_string()) out = it->get<std::string>();
  };
  field("streamId", c.self.stream_id);
  field("role", c.self.role);
  field("name", c.self.name);
  field("instanceId", c.self.instance_id);
  if (auto s = j.find("seed"); s != j.end())
    c.seed = std::uint64_t(json_integer(*s, 0, kMaxSafeInteger).value_or(1));
  if (auto a = j.find("acceptHandoffs"); a != j.end() && a->is_boolean())
    c.accept_handoffs = a->get<bool>();
  if (auto a = j.find("connIsStream"); a != j.end() && a->is_boolean())
    c.conn_is_stream = a->get<bool>();
  if (auto a = j.find("announce"); a != j.end()) c.announce = *a;
  if (auto a = j.find("transportId"); a != j.end() && a->is_string())
    c.transport_id = a->get<std::string>();
  if (auto e = check_config(c)) return err(*e);
  return c;
}

Json limits_json() {
  return Json{{"maxEnvelopeBytes", kMaxEnvelopeBytes},
              {"maxFileChunkEnvelopeBytes", kMaxFileChunkEnvelopeBytes},
              {"maxJsonDepth", kMaxJsonDepth},
              {"maxIdChars", kMaxIdChars},
              {"idRandomBytes", kIdRandomBytes},
              {"maxTypeChars", kMaxTypeChars},
              {"maxStreamIdChars", kMaxStreamIdChars},
              {"maxRoleChars", kMaxRoleChars},
              {"maxNameChars", kMaxNameChars},
              {"maxInstanceIdChars", kMaxInstanceIdChars},
              {"maxToChars", kMaxToChars},
              {"maxTopicChars", kMaxTopicChars},
              {"maxQueuedPerPeer", kMaxQueuedPerPeer},
              {"maxQueuedBytesPerPeer", kMaxQueuedBytesPerPeer},
              {"maxQueuedPeers", kMaxQueuedPeers},
              {"historyCapacity", kHistoryCapacity},
              {"historyMaxRequest", kHistoryMaxRequest},
              {"historyDefaultRequest", kHistoryDefaultRequest},
              {"handoffMaxRequestBytes", kHandoffMaxRequestBytes},
              {"handoffMaxTtlMs", kHandoffMaxTtlMs},
              {"handoffRetryInitialMs", kHandoffRetryInitialMs},
              {"handoffRetryMaxMs", kHandoffRetryMaxMs},
              {"fileMaxBytes", kFileMaxBytes},
              {"fileBrowserMaxBytes", kFileBrowserMaxBytes},
              {"fileReceiverMaxIncomplete", kFileReceiverMaxIncomplete},
              {"fileReceiverMaxPromisedBytes", kFileReceiverMaxPromisedBytes},
              {"fileMinChunkSize", kFileMinChunkSize},
              {"fileMaxChunkSize", kFileMaxChunkSize},
              {"maxErrorTextBytes", kMaxErrorTextBytes},
              {"maxShareNameChars", kMaxShareNameChars},
              {"maxSharePathChars", kMaxSharePathChars},
              {"shareLevelMaxEntries", kShareLevelMaxEntries},
              {"shareListMaxEntries", kShareListMaxEntries},
              {"shareListMaxDepth", kShareListMaxDepth},
              {"fileDefaultChunkSize", kFileDefaultChunkSize}};
}

}  // namespace tether::bus
