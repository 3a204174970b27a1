// The refusals of a direct message written as words (the CLI's `send` and `respond`, the MCP
// `send` and `respond` tools), worded for the caller. Which payload a type takes, and what is
// refused, is the bus core's (`typedPayload` and `commandResponse` of tether/bus,
// src/bus/typed_payload.hpp: docs/agent-bus.md § Payloads with fixed shapes): a command is
// `{command, args?}`, an ack `{messageId}`, an answer `{requestId, ok, result | error}`, chat and
// event `{text}`. What stays here is the wording: each refusal names the flag or the argument that
// fixes it.
import { fail } from './cli/context.js';

/**
 * How the caller spells what the refusals point to: the CLI's flags and commands, or the MCP
 * tool's arguments and tools.
 * @typedef {{args: string, result: string, type: string, respond: string, offer: string,
 *   text: string, requestId: string, error: string}} Names
 */

/** @type {Names} */
export const CLI_NAMES = Object.freeze({
  args: '--args-json',
  result: '--result-json',
  type: '--type',
  respond: '`tether agent respond PEER REQUEST_ID`',
  offer: 'send it as a file or swarm transfer (`tether agent swarm offer PATH`)',
  text: 'TEXT',
  requestId: 'REQUEST_ID',
  error: 'the error TEXT',
});

/** @type {Names} */
export const MCP_NAMES = Object.freeze({
  args: 'args',
  result: 'result',
  type: 'type',
  respond: 'the respond tool',
  offer: 'offer the rest as a file with swarm_offer',
  text: 'text',
  requestId: 'request_id',
  error: 'error',
});

/** What the one word of a command or an ack is, and what else may go with it. */
const WORD = {
  command: (names) => ["the command's name", `; give its arguments as JSON with ${names.args}`],
  ack: () => ['the id of the message it acknowledges', ''],
};

const tooLarge = (what, r, names) =>
  `${what} is ${r.count} bytes, and one message carries at most ${r.bound} bytes of JSON in all: send less, or ${names.offer}`;
const tooDeep = (what, r) =>
  `${what} nests more than ${r.bound} levels deep, the most an envelope carries: flatten it`;
const notJson = (what, r) =>
  `${what} must be valid JSON${r.json === 'number_out_of_range' ? ' (a number there is beyond any double, e.g. 1e400)' : r.json === 'invalid_utf8' ? ' (it is not UTF-8)' : ''}`;

/**
 * The words of the core's refusal `r`, for a message of `type`.
 * @param {import('../glue/bus.d.ts').WordsPayload & {ok: false}} r
 * @param {string} type
 * @param {Names} names
 */
function refusal(r, type, names) {
  const [what, more] = WORD[type]?.(names) ?? ['', ''];
  switch (r.code) {
    case 'not_words_type':
      return `${names.type} ${type} is not sent from words: give chat (the default), event, command or ack, or send a JSON payload`;
    case 'use_respond':
      return `a command_response answers a command by its id and says whether it worked: use ${names.respond}`;
    case 'args_not_command':
      return `${names.args} goes with type command only (this message is ${type})`;
    case 'no_word':
      return `type ${type} needs ${what}${more}`;
    case 'many_words':
      return `type ${type} takes one word, ${what} (got ${r.count} words)${more}`;
    case 'no_text':
      return 'give the text to send';
    case 'text_too_large':
      return tooLarge('the text', r, names);
    case 'args_too_large':
      return tooLarge(names.args, r, names);
    case 'args_not_json':
      return notJson(names.args, r);
    case 'args_too_deep':
      return tooDeep(names.args, r);
    case 'no_request_id':
      return 'name the command to answer by its id (as `read` shows it)';
    case 'result_and_error':
      return 'an answer is a result or an error, not both';
    case 'no_error_text':
      return 'give the error text (what went wrong)';
    case 'result_too_large':
      return tooLarge(names.result, r, names);
    case 'result_not_json':
      return notJson(names.result, r);
    case 'result_too_deep':
      return tooDeep(names.result, r);
    case 'id_too_long':
      return type === 'command_response'
        ? `the command's id is ${r.count} characters, and no message id is longer than ${r.bound}: give its id as \`read\` shows it`
        : `type ack takes ${what}, and no message id is longer than ${r.bound} characters (got ${r.count})`;
    case 'nul_in_id':
      return type === 'command_response'
        ? "the command's id holds a NUL character, which no message id does: give its id as `read` shows it"
        : `type ack takes ${what}, and no message id holds a NUL character`;
    case 'not_utf8':
      return `${names[r.input ?? 'text']} is not valid Unicode (it holds a lone surrogate, half of a UTF-16 pair): send well-formed text`;
    default:
      return `the bus core refused the payload (${r.code})`;
  }
}

/** The payload, or the refusal worded for the caller. */
function payloadOr(r, type, names) {
  if (r.ok) return r.payload;
  return fail(refusal(r, type, names));
}

/**
 * The payload of a message of `type` whose words are `text`; `argsJson` (JSON text, undefined
 * when not given) goes with a command only.
 * @param {import('../glue/bus.d.ts').BusApi} api the loaded bus core
 * @param {string} type
 * @param {string} text
 * @param {{argsJson?: string, names: Names}} o
 */
export function typedPayload(api, type, text, { argsJson, names }) {
  return payloadOr(api.typedPayload(type, text, argsJson), type, names);
}

/**
 * The answer to command `requestId`: `{requestId, ok: true, result}` (`resultJson` parsed; a
 * missing result is null), or `{requestId, ok: false, error}` when `error` is given.
 * @param {import('../glue/bus.d.ts').BusApi} api
 * @param {string} requestId
 * @param {{resultJson?: string, error?: string, names: Names}} o
 */
export function responsePayload(api, requestId, { resultJson, error, names }) {
  return payloadOr(
    api.commandResponse(requestId, { resultJson, error }),
    'command_response',
    names,
  );
}
