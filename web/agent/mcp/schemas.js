// The input schemas of the `tether mcp` tools (docs/mcp.md § Tools), in zod as the MCP SDK takes
// them. Every bound is the one the bus core enforces, read from its exports (`bus().limits`,
// src/bus/limits.hpp) or from the module that checks it (the swarm file id, the read count), never
// written here again. Each refusal is worded as what is wrong and what to send instead; the SDK
// answers it as a tool error (`isError`) and the server goes on serving.
import { z } from 'zod';
import { READ_TAKE_DEFAULT, READ_TAKE_MAX } from '../commands/read.js';
import { FILE_ID_RE } from '../sidecar/swarm.js';

/** UTF-8 bytes of `value` as JSON text: how the bus counts a handoff request and an envelope. */
export const jsonBytes = (value) => Buffer.byteLength(JSON.stringify(value) ?? '');

const noNul = (s) => !s.includes('\u0000');

/**
 * How deep `value` nests (a container counts 1), walked without recursion and given up past
 * `limit`: a hostile payload ten thousand arrays deep must not cost a stack overflow to refuse.
 */
export function jsonDepth(value, limit) {
  let deepest = 0;
  const stack = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (d > deepest) deepest = d;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}

/**
 * A strict object: an argument the tool does not take is refused by name, with the ones it takes
 * (a misspelt `peer` must not become a message to nobody).
 */
export function strictArgs(shape) {
  const names = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unknown argument${iss.keys.length > 1 ? 's' : ''} ${iss.keys.map((k) => `'${k}'`).join(', ')}: this tool takes ${names.length ? names.join(', ') : 'no arguments'}`
        : iss.code === 'invalid_type'
          ? 'the arguments must be a JSON object'
          : undefined,
  });
}

/** A non-empty string of at most `max` UTF-16 code units (as the core counts) without NUL. */
function boundedString(what, max, hint) {
  return z
    .string({ error: `${what} must be a string${hint ? ` (${hint})` : ''}` })
    .min(1, { error: `${what} is empty${hint ? `; give ${hint}` : ''}` })
    .max(max, { error: `${what} is longer than ${max} characters, the bus core's bound` })
    .refine(noNul, { error: `${what} holds a NUL character, which the bus refuses` });
}

/** A whole number in [min, max]. */
function count(what, min, max) {
  return z
    .number({ error: `${what} must be a number from ${min} to ${max}` })
    .int({ error: `${what} must be a whole number from ${min} to ${max}` })
    .min(min, { error: `${what} must be at least ${min}` })
    .max(max, { error: `${what} must be at most ${max}` });
}

/**
 * The fields the tools are made of, from the bus core's `limits` and the types it lets a client
 * send directly (`directSendTypes`).
 * @param {import('../../glue/bus.d.ts').BusLimits} limits
 * @param {readonly string[]} sendTypes
 */
export function fields(limits, sendTypes) {
  const envelopeMax = limits.maxEnvelopeBytes;
  const peer = boundedString('peer', limits.maxToChars, 'a peer id from the peers tool').describe(
    "the peer's id in the room (the peers tool lists them)",
  );
  const topic = boundedString('topic', limits.maxTopicChars)
    .optional()
    .describe('a topic for the receiver to filter on');
  // The whole envelope is bounded; text that alone is over the bound can never be sent.
  const tooBig = (what, n) =>
    `${what} is ${n} bytes as JSON, and one message carries at most ${envelopeMax} bytes of JSON in all: send less, or offer the rest as a file with swarm_offer`;
  const text = z
    .string({ error: 'text must be a string' })
    .min(1, { error: 'text is empty; give the text to send' })
    .max(envelopeMax, { error: tooBig('text', `over ${envelopeMax}`) })
    .superRefine((s, ctx) => {
      if (s.length > envelopeMax) return; // refused above, without encoding it
      const n = jsonBytes(s);
      if (n > envelopeMax) ctx.addIssue({ code: 'custom', message: tooBig('text', n) });
    })
    .describe('the message text (sent as payload {text})');
  // The payload sits one level inside the envelope, whose nesting the core bounds; a command's
  // args and an answer's result one level inside the payload.
  const payloadDepthMax = limits.maxJsonDepth - 1;
  const fits = (what, depthMax) => (v, ctx) => {
    if (jsonDepth(v, depthMax) > depthMax)
      return ctx.addIssue({
        code: 'custom',
        message: `${what} nests more than ${depthMax} levels deep, the most an envelope carries: flatten it`,
      });
    const n = jsonBytes(v);
    if (n > envelopeMax) ctx.addIssue({ code: 'custom', message: tooBig(what, n) });
  };
  const payload = z
    .record(z.string(), z.unknown(), { error: 'payload must be a JSON object' })
    .superRefine(fits('payload', payloadDepthMax))
    .describe('a JSON object to send as the payload, instead of {text}');
  const inPayload = (what) => z.unknown().superRefine(fits(what, payloadDepthMax - 1));
  return {
    peer,
    topic,
    text,
    payload,
    type: z
      .enum(/** @type {[string, ...string[]]} */ ([...sendTypes]), {
        error: `type must be one of ${sendTypes.join(', ')}`,
      })
      .optional()
      .describe(
        `the message type: ${sendTypes.join(', ')} (default chat). With text, a command is sent as {command: text, args?}, an ack as {messageId: text}; answer a command with the respond tool`,
      ),
    args: inPayload('args')
      .optional()
      .describe("with type command: the command's args (any JSON value)"),
    result: inPayload('result')
      .optional()
      .describe('what the command produced (any JSON value; default null)'),
    error: z
      .string({ error: 'error must be a string: what went wrong' })
      .min(1, { error: 'error is empty; say what went wrong' })
      .max(envelopeMax, { error: tooBig('error', `over ${envelopeMax}`) })
      .optional()
      .describe('the command failed: why (sent as {ok: false, error} instead of a result)'),
    take: count('take', 0, READ_TAKE_MAX)
      .optional()
      .describe(
        `at most this many messages, oldest first (default ${READ_TAKE_DEFAULT}; 0 returns none)`,
      ),
    historyCount: count('count', 1, limits.historyMaxRequest)
      .optional()
      .describe(
        `how many recent messages to ask for (at most ${limits.historyMaxRequest}; default ${limits.historyDefaultRequest})`,
      ),
    handoffRequest: z
      .string({ error: 'request must be a string: the work to hand off' })
      .min(1, { error: 'request is empty; describe the work to hand off' })
      .superRefine((s, ctx) => {
        const n = jsonBytes(s);
        if (n > limits.handoffMaxRequestBytes)
          ctx.addIssue({
            code: 'custom',
            message: `request is ${n} bytes as a JSON string, over the ${limits.handoffMaxRequestBytes} a handoff carries: put the detail in a file (swarm_offer) and hand off its id`,
          });
      })
      .describe(`the work, at most ${limits.handoffMaxRequestBytes} bytes as a JSON string`),
    expiresInMs: count('expires_in_ms', 1, limits.handoffMaxTtlMs)
      .optional()
      .describe(
        `give up after this many milliseconds (default and most: ${limits.handoffMaxTtlMs}, ${limits.handoffMaxTtlMs / 3_600_000} hours)`,
      ),
    requestId: boundedString(
      'request_id',
      limits.maxIdChars,
      'the id send or handoff returned',
    ).describe('the id of our message or handoff (what send or handoff returned)'),
    commandId: boundedString(
      'request_id',
      limits.maxIdChars,
      'the id of the command, as read shows it',
    ).describe("the id of the peer's command being answered (its envelope id, as read shows it)"),
    path: z
      .string({ error: 'path must be a string: a file path' })
      .min(1, { error: 'path is empty; give the file to offer' })
      .refine(noNul, { error: 'path holds a NUL character' })
      .describe(
        "the file to offer (an absolute path; a relative one resolves against the server's working directory)",
      ),
    fileId: z
      .string({ error: 'file_id must be a string: the id swarm_offer or swarm_list gave' })
      .regex(FILE_ID_RE, {
        error:
          "file_id is the file's SHA-256 in 64 lowercase hex characters, as swarm_offer and swarm_list give it",
      })
      .describe("the file's id (its SHA-256 in hex, from swarm_offer or swarm_list)"),
    folder: z
      .string({ error: 'to must be a string: the folder to save into' })
      .min(1, { error: 'to is empty; give the folder to save into' })
      .refine(noNul, { error: 'to holds a NUL character' })
      .describe('the folder to save the file into (an absolute path)'),
    flag: (what, help) =>
      z
        .boolean({ error: `${what} must be true or false` })
        .optional()
        .describe(help),
  };
}
