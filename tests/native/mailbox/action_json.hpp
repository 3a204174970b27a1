// One mailbox action as JSON, the shape fixtures/mailbox/conversation.json records: shared by the
// fixture generator (tests/fixtures/mailbox_fixtures.cpp) and the native replay, so the two cannot
// describe an action differently.
#pragma once
#include <variant>

#include "common/json.hpp"
#include "mailbox/mailbox.hpp"

namespace tether::mailbox::test {

inline Json action_json(const Action& a) {
  if (auto* p = std::get_if<Persist>(&a)) {
    Json puts = Json::array();
    for (const Put& put : p->puts) puts.push_back(Json::array({put.key, put.value}));
    return Json{{"kind", "persist"}, {"token", p->token}, {"puts", puts}, {"deletes", p->deletes}};
  }
  if (auto* r = std::get_if<Respond>(&a)) {
    return Json{{"kind", "respond"},
                {"request", r->request},
                {"status", r->status},
                {"body", r->body},
                {"retryAfterMs", r->retry_after_ms}};
  }
  if (auto* acc = std::get_if<AcceptReader>(&a)) {
    return Json{{"kind", "accept"}, {"request", acc->request}, {"reader", acc->reader}};
  }
  if (auto* push = std::get_if<Push>(&a)) {
    return Json{{"kind", "push"}, {"reader", push->reader}, {"text", push->text}};
  }
  const auto& c = std::get<CloseReader>(a);
  return Json{{"kind", "close"}, {"reader", c.reader}, {"code", c.code}, {"reason", c.reason}};
}

}  // namespace tether::mailbox::test
