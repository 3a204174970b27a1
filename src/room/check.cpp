// The policy check of one envelope (room/check.hpp).
#include "room/check.hpp"

#include "common/json.hpp"

namespace tether::room {

EnvelopeCheck::EnvelopeCheck(std::string_view env_json, std::string_view writer_json,
                             bool has_policy, bool can_write, bool validate)
    : can_write_(can_write), validate_(validate) {
  if (!scan_.parse(env_json, kMaxJsonDepth)) {
    done_ = unreadable_ = true;
    return;
  }
  // The writer compares as the values are: both absent, or the same JSON value.
  const std::uint32_t w = scan_.field(0, "writer");
  const std::string_view env_writer = w == JsonScan::kNone ? std::string_view() : scan_.raw(w);
  if (env_writer != writer_json) {
    done_ = true;
    reason_ = "writer-mismatch";
    return;
  }
  if (!has_policy) {
    done_ = true;
    return;
  }
  const std::uint32_t ops = scan_.field(0, "ops");
  if (!scan_.is_array(ops)) {
    done_ = unreadable_ = true;
    return;
  }
  ops_ = scan_.node(ops).count;
  advance();
}

void EnvelopeCheck::advance() {
  // Skip the questions no function would be asked.
  while (op_ < ops_) {
    if (!asking_validate_ && !can_write_) asking_validate_ = true;
    if (asking_validate_ && !validate_) {
      asking_validate_ = false;
      ++op_;
      continue;
    }
    return;
  }
  done_ = true;
}

std::optional<EnvelopeCheck::Question> EnvelopeCheck::poll_question() const {
  if (done_) return std::nullopt;
  return Question{asking_validate_ ? Question::Kind::validate : Question::Kind::can_write, op_};
}

void EnvelopeCheck::handle_verdict(bool allow) {
  if (done_) return;
  if (!allow) {
    reason_ = asking_validate_ ? "validate" : "can-write";
    done_ = true;
    return;
  }
  if (asking_validate_) {
    asking_validate_ = false;
    ++op_;
  } else {
    asking_validate_ = true;
  }
  advance();
}

}  // namespace tether::room
