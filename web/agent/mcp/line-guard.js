// What stands between stdin and the SDK's stdio transport: whole lines only, each at most
// `maxLineBytes`. The transport buffers a line until its newline and, past its own bound, ends
// the session; an agent that pastes a large file into `send` would lose its server for good. Here
// such a line is dropped as it streams (never held whole), and answered with a JSON-RPC error
// when its id can be read from its first or last bytes (clients write it before `params`, as
// Python's does, or last, as the TypeScript SDK's does), so the caller hears why at once and the
// session goes on.
import { Transform } from 'node:stream';

const NL = 0x0a;
const EDGE_BYTES = 160; // of a dropped line's start and end, kept to find its id
const ID = String.raw`"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,128}")`;
// A top-level id ends the line (`..., "id": 42}`); nested ones are followed by more braces.
const LAST_ID = new RegExp(`${ID}\\s*\\}\\s*\\r?$`);
const FIRST_ID = new RegExp(ID);

/** The JSON-RPC id of a request line, from its first and last bytes; undefined if unreadable. */
export function requestId(head, tail) {
  // Before `params` opens, an "id" key can only be the request's own.
  const params = head.indexOf('"params"');
  const m = LAST_ID.exec(tail) ?? FIRST_ID.exec(params < 0 ? head : head.slice(0, params));
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]);
  } catch {
    return undefined;
  }
}

/**
 * @param {{maxLineBytes: number, onDropped: (bytes: number, id: string|number|undefined) => void}} o
 * @returns {Transform} bytes in, complete lines (each with its newline) out
 */
export function lineGuard({ maxLineBytes, onDropped }) {
  let held = []; // the current line, until its newline
  let heldBytes = 0;
  let dropping = false;
  let dropped = 0;
  let head = '';
  let tail = Buffer.alloc(0);
  return new Transform({
    transform(chunk, _enc, done) {
      let i = 0;
      while (i < chunk.length) {
        const nl = chunk.indexOf(NL, i);
        const seg = chunk.subarray(i, nl < 0 ? chunk.length : nl);
        i = nl < 0 ? chunk.length : nl + 1;
        if (!dropping && heldBytes + seg.length > maxLineBytes) {
          dropping = true;
          dropped = heldBytes;
          const start = Buffer.concat([...held, seg.subarray(0, EDGE_BYTES)]);
          head = start.subarray(0, EDGE_BYTES).toString('utf8');
          tail = start.subarray(0, heldBytes).subarray(-EDGE_BYTES);
          held = [];
          heldBytes = 0;
        }
        if (dropping) {
          dropped += seg.length;
          tail = Buffer.concat([tail, seg.subarray(-EDGE_BYTES)]).subarray(-EDGE_BYTES);
        } else {
          held.push(seg);
          heldBytes += seg.length;
        }
        if (nl < 0) continue;
        if (dropping) {
          onDropped(dropped, requestId(head, tail.toString('utf8')));
          dropping = false;
          dropped = 0;
          head = '';
          tail = Buffer.alloc(0);
        } else {
          held.push(Buffer.from([NL]));
          this.push(Buffer.concat(held));
          held = [];
          heldBytes = 0;
        }
      }
      done();
    },
  });
}
