// The payload a direct message of a given type carries when it is written as words (the CLI's
// `send` and `respond`, the MCP `send` and `respond` tools), in the shapes a peer acts on
// (docs/agent-bus.md § Payloads with fixed shapes; agent-bus-notes.md § Bus messages whose
// payload the public implementation fixes). A ninja-p2p peer runs a command only when the payload
// names it in a `command` string, and matches an answer to its request only by `requestId`, so
// `{text}` would reach it as neither: a command is `{command, args?}`, an ack `{messageId}`, an
// answer `{requestId, ok, result | error}`; chat and event stay `{text}`.
import { fail } from './cli/context.js';

/**
 * How the caller spells what the refusals point to: the CLI's flags and commands, or the MCP
 * tool's arguments and tools.
 * @typedef {{args: string, respond: string}} Names
 */

/** @type {Names} */
export const CLI_NAMES = Object.freeze({
  args: '--args-json',
  respond: '`tether agent respond PEER REQUEST_ID`',
});

/** @type {Names} */
export const MCP_NAMES = Object.freeze({
  args: 'args',
  respond: 'the respond tool',
});

/** `text` as one word (a command's name, a message id), else a refusal saying what goes there. */
function oneWord(text, type, what, more = '') {
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) fail(`type ${type} needs ${what}${more}`);
  if (words.length > 1)
    fail(`type ${type} takes one word, ${what} (got ${words.length} words)${more}`);
  return words[0];
}

/**
 * The payload of a message of `type` whose words are `text`; `args` (undefined when not given)
 * goes with a command only.
 * @param {string} type
 * @param {string} text
 * @param {{args?: unknown, names: Names}} o
 */
export function typedPayload(type, text, { args, names }) {
  if (args !== undefined && type !== 'command')
    fail(`${names.args} goes with type command only (this message is ${type})`);
  switch (type) {
    case 'command': {
      const command = oneWord(
        text,
        type,
        "the command's name",
        `; give its arguments as JSON with ${names.args}`,
      );
      return args === undefined ? { command } : { command, args };
    }
    case 'ack':
      return { messageId: oneWord(text, type, 'the id of the message it acknowledges') };
    case 'command_response':
      return fail(
        `a command_response answers a command by its id and says whether it worked: use ${names.respond}`,
      );
    default:
      if (!text) fail('give the text to send');
      return { text };
  }
}

/**
 * The answer to command `requestId`: `{requestId, ok: true, result}` (a missing result is null),
 * or `{requestId, ok: false, error}` when `error` is given (non-empty).
 * @param {string} requestId
 * @param {{result?: unknown, error?: string}} outcome
 */
export function responsePayload(requestId, { result, error }) {
  if (!requestId) fail('name the command to answer by its id (as `read` shows it)');
  if (error === undefined) return { requestId, ok: true, result: result ?? null };
  if (result !== undefined) fail('an answer is a result or an error, not both');
  if (!error) fail('give the error text (what went wrong)');
  return { requestId, ok: false, error };
}
