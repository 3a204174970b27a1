// `tether agent join`: starts the detached sidecar (web/agent/sidecar.js) for the state dir and
// waits until it is in the room, or until the relay says why it cannot be (web/agent/sidecar/
// link.js names the answer). Settings are saved in the state dir, so a later `join` needs none;
// the ticket is kept apart from them (a 0600 file) and never printed.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureDirs } from '../store.js';
import {
  files,
  lockHolder,
  readJson,
  readSecret,
  readTicket,
  writeJson,
  writeSecret,
  writeTicket,
} from '../state.js';
import { validateWakeOptions } from '../wake.js';
import { splitTicket } from '../sidecar/link.js';
import { CannotConnect, fail, sleep } from '../cli/context.js';
import { msFlag, parseDuration } from '../cli/values.js';
import { stopSidecar } from './leave.js';

const SIDECAR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'sidecar.js');
const JOIN_WAIT_DEFAULT = '15s';
const PROGRESS_EVERY_MS = 2000;
const NO_REPORT_GRACE_MS = 15_000;
const SAME = ['id', 'room', 'relay', 'transport'];

export default {
  name: 'join',
  usage:
    '--relay ws://HOST:PORT/ --room ROOM --id ID [--ticket TICKET] [--secret-file FILE] [--name N] [--role R] [--transport relay|http|webrtc] [--wake CMD] [--wait 15s]',
  summary: 'start the sidecar and join the room (later joins reuse the saved settings)',
  details: [
    'The ticket comes from $TETHER_TICKET (or --ticket, but a command line shows in `ps` and',
    "npm's debug log keeps it), else the one saved by an earlier join.",
    "A deployment mints tickets on its own server (tickets.mintTicket with the relay's secret);",
    'for a local relay, `tether rooms ticket --room ROOM --id ID` mints one from $TICKET_SECRET.',
    'A new ticket for a running sidecar restarts it with that ticket.',
    'The room secret (--secret-file FILE, else $TETHER_ROOM_SECRET, else the saved one) seals every',
    'envelope end to end: the relay sees only ciphertext (docs/agent-bus.md § Encrypted relay',
    'transport). Every member needs the same secret; without one the relay reads every envelope.',
    'Exit 3: the relay refused us for a reason retrying will not fix (the message says which).',
  ].join('\n'),
  options: {
    relay: {
      type: 'string',
      value: 'URL',
      help: "the room relay's base ws:// or wss:// URL (the agent adds /rooms/ROOM)",
    },
    room: { type: 'string', value: 'ROOM', help: 'the room to join' },
    id: {
      type: 'string',
      value: 'ID',
      help: (l) =>
        `our stream id in the room (at most ${l?.maxStreamIdChars ?? 'the bus core’s'} characters)`,
    },
    ticket: {
      type: 'string',
      value: 'TICKET',
      help: 'the room ticket (default: $TETHER_TICKET, else the saved one); prefer $TETHER_TICKET: a command line shows in `ps` and npm logs it',
    },
    'secret-file': {
      type: 'string',
      value: 'FILE',
      help: 'a file holding the room secret (its whole content; at least 16 bytes): envelopes are sealed end to end',
    },
    secret: {
      type: 'string',
      value: 'SECRET',
      help: 'the room secret itself; prefer --secret-file or $TETHER_ROOM_SECRET: a command line shows in `ps`',
    },
    'no-secret': { type: 'boolean', help: 'forget a saved room secret (envelopes go unencrypted)' },
    name: { type: 'string', value: 'N', help: 'display name (default: the id)' },
    role: { type: 'string', value: 'R', help: 'role announced to peers (default: agent)' },
    transport: {
      type: 'string',
      value: 'relay|http|webrtc',
      help:
        'relay: envelopes through the room relay over a WebSocket (default); http: the same through ' +
        'the relay over HTTP POST and long-poll, where a WebSocket cannot open; webrtc: data channels',
    },
    'webrtc-bind': { type: 'string', value: 'ADDR', help: 'local address for --transport webrtc' },
    wake: { type: 'string', value: 'CMD', help: 'shell command run when new mail arrives' },
    'wake-min-interval-ms': {
      type: 'string',
      value: 'MS',
      help: 'at most one wake per MS (0: no limit)',
    },
    'wake-delay-ms': { type: 'string', value: 'MS', help: 'wait MS after mail before waking' },
    'no-wake': { type: 'boolean', help: 'forget a saved --wake' },
    wait: {
      type: 'string',
      value: 'DURATION',
      help: `how long to wait for the room before leaving the sidecar retrying (default ${JOIN_WAIT_DEFAULT})`,
    },
  },
  async run(ctx) {
    const { dir, v } = ctx;
    const waitMs = parseDuration('--wait', v.wait ?? JOIN_WAIT_DEFAULT);
    const { cfg, ticket } = settings(ctx);
    const secret = await roomSecret(ctx);
    const f = files(dir);
    const holder = lockHolder(dir);
    if (holder !== null) {
      const st = await ctx.rpc('status').catch(() => null);
      const same =
        st &&
        SAME.every((k) => st[k] === (k === 'transport' ? (cfg.transport ?? 'relay') : cfg[k]));
      if (!same)
        fail(
          `a sidecar (pid ${holder}) already runs for ${dir}; run \`tether agent leave --dir ${dir}\` first to change its settings`,
        );
      if (ticket === readTicket(dir) && secret === readSecret(dir))
        return already(ctx, holder, cfg, st);
      // Only the ticket or the secret is new (the old ticket expired, say): restart with it.
      ctx.progress(`restarting sidecar pid ${holder} with the new ticket or room secret`);
      await stopSidecar(ctx.rpc, holder);
    }
    writeJson(f.config, cfg);
    if (ticket) writeTicket(dir, ticket);
    else fs.rmSync(f.ticket, { force: true });
    if (secret) writeSecret(dir, secret);
    else fs.rmSync(f.secret, { force: true });
    ensureDirs(dir);
    fs.rmSync(f.endpoint, { force: true });
    const child = startSidecar(dir);
    await waitForRoom(ctx, cfg, child, waitMs);
  },
};

/** The settings to start with: the saved ones, updated by this join's flags, checked. */
function settings({ dir, v, needBus }) {
  const limits = needBus().limits;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const saved = readJson(files(dir).config) ?? {};
  if (saved.id && v.id && saved.id !== v.id) {
    fail(
      `${dir} holds the state of '${saved.id}', not '${v.id}'; use another --dir for a second identity`,
    );
  }
  const cfg = { ...saved };
  if (v['webrtc-bind'] !== undefined) cfg.webrtcBind = v['webrtc-bind'];
  for (const k of ['relay', 'room', 'id', 'name', 'role', 'transport'])
    if (v[k] !== undefined) cfg[k] = v[k];
  if (cfg.transport !== undefined && !['relay', 'http', 'webrtc'].includes(cfg.transport)) {
    fail(
      `--transport is relay (envelopes through the room relay), http (the same over HTTP, where a WebSocket cannot open) or webrtc (data channels); got '${cfg.transport}'`,
    );
  }
  if (!cfg.relay || !cfg.room || !cfg.id)
    fail(
      'join needs --relay ws://HOST:PORT/, --room ROOM and --id ID the first time (they are saved in the state dir)',
    );
  if (!/^wss?:\/\/[^/]/.test(cfg.relay))
    fail(`--relay must be a ws:// or wss:// URL (got '${cfg.relay}')`);
  let inUrl;
  try {
    ({ relay: cfg.relay, ticket: inUrl } = splitTicket(cfg.relay));
  } catch {
    fail(`--relay must be a ws:// or wss:// URL (got '${cfg.relay}')`);
  }
  if (cfg.id.length > limits.maxStreamIdChars || /[\u0000-\u001f]/.test(cfg.id))
    fail(`--id must be at most ${limits.maxStreamIdChars} characters without control characters`);
  if (v.wake !== undefined) {
    try {
      cfg.wake = validateWakeOptions({
        command: v.wake,
        minIntervalMs: msFlag('--wake-min-interval-ms', v['wake-min-interval-ms']),
        delayMs: msFlag('--wake-delay-ms', v['wake-delay-ms']),
      });
    } catch (err) {
      fail(err.message);
    }
  } else if (v['wake-min-interval-ms'] !== undefined || v['wake-delay-ms'] !== undefined) {
    fail('--wake-min-interval-ms and --wake-delay-ms need --wake CMD');
  } else if (v['no-wake']) delete cfg.wake;
  const given = v.ticket ?? process.env.TETHER_TICKET ?? inUrl ?? undefined;
  const from = v.ticket !== undefined ? '--ticket' : '$TETHER_TICKET';
  if (given === '')
    fail(
      `${from} is empty (did the command that mints it fail? \`tether rooms ticket\` says why on stderr)`,
    );
  if (given !== undefined && !/^[\x21-\x7e]{1,4096}$/.test(given))
    fail(`${from} holds spaces or control characters; pass the ticket exactly as minted`);
  return { cfg, ticket: given ?? readTicket(dir) };
}

/**
 * The room secret this join uses: --secret-file, --secret, $TETHER_ROOM_SECRET, else the saved
 * one (--no-secret: none). Checked against the sealed channel's bounds; never echoed.
 */
async function roomSecret({ dir, v }) {
  if (v['no-secret']) return null;
  let given;
  let from;
  if (v['secret-file'] !== undefined) {
    from = `--secret-file ${v['secret-file']}`;
    try {
      given = fs.readFileSync(v['secret-file'], 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      fail(
        `cannot read ${from}: ${err.code ?? err.message}; give a readable file holding the room secret`,
      );
    }
  } else if (v.secret !== undefined) {
    from = '--secret';
    given = v.secret;
  } else if (process.env.TETHER_ROOM_SECRET !== undefined) {
    from = '$TETHER_ROOM_SECRET';
    given = process.env.TETHER_ROOM_SECRET;
  }
  if (given === undefined) return readSecret(dir);
  // The core's bounds (loaded only when a secret is given: the WASM module is not small).
  const { sealedSecretError } = await import('../../glue/sealed.js');
  const bad = sealedSecretError(given);
  if (bad) fail(`${from}: ${bad}`);
  return given;
}

function already(ctx, pid, cfg, st) {
  const base = { ok: true, already: true, pid, id: cfg.id, room: cfg.room, dir: ctx.dir };
  if (st.connected) {
    ctx.out(base, `already joined room '${cfg.room}' as '${cfg.id}' (sidecar pid ${pid})`);
    return;
  }
  const failure = st.link?.failure;
  if (failure && !failure.retryable)
    throw new CannotConnect(
      `sidecar pid ${pid} runs but is not in room '${cfg.room}': ${failure.message}`,
    );
  ctx.out(
    { ...base, connected: false, failure: failure ?? null },
    `sidecar pid ${pid} runs but is not in room '${cfg.room}' yet${failure ? `: ${failure.message}` : ''}; it keeps retrying`,
  );
}

function startSidecar(dir) {
  const f = files(dir);
  const logFd = fs.openSync(f.log, 'a', 0o600);
  // The sidecar reads the ticket from its file; it is not handed on to its children (wake hooks).
  const { TETHER_TICKET, TETHER_ROOM_SECRET, ...env } = process.env;
  /** @type {import('node:child_process').ChildProcess & {exitedWith: string | number | null}} */
  const child = Object.assign(
    spawn(process.execPath, [SIDECAR, '--dir', dir], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env,
    }),
    { exitedWith: null },
  );
  fs.closeSync(logFd);
  child.once('exit', (code, sig) => (child.exitedWith = sig ?? code));
  child.unref();
  return child;
}

/**
 * Until the sidecar is in the room (exit 0), the relay refuses us for a reason retrying cannot
 * fix (the sidecar is stopped, exit 3), or `waitMs` has passed with at least one attempt made
 * (exit 0: the sidecar keeps retrying, and the output says why it is not in yet).
 */
async function waitForRoom(ctx, cfg, child, waitMs) {
  const { dir } = ctx;
  const f = files(dir);
  const started = Date.now();
  let shown = 0;
  for (;;) {
    if (child.exitedWith !== null) {
      const tail = fs.readFileSync(f.log, 'utf8').trim().split('\n').slice(-5).join('\n');
      fail(
        `the sidecar exited (${child.exitedWith}) while starting:\n${tail}\n(full log: ${f.log})`,
      );
    }
    const ep = readJson(f.endpoint);
    const st =
      ep && ep.pid === child.pid ? await ctx.rpc('status', {}, ep).catch(() => null) : null;
    const base = { ok: true, pid: child.pid, id: cfg.id, room: cfg.room, dir };
    if (st?.connected) {
      ctx.out(
        { ...base, roster: st.roster },
        `joined room '${cfg.room}' as '${cfg.id}' (sidecar pid ${child.pid}; ${st.roster.length} other peer(s) online)`,
      );
      return;
    }
    const failure = st?.link?.failure ?? null;
    if (failure && !failure.retryable) {
      await stopSidecar((cmd, args) => ctx.rpc(cmd, args, ep), child.pid);
      throw new CannotConnect(
        `cannot join room '${cfg.room}' via ${cfg.relay}: ${failure.message} (the sidecar was stopped; log: ${f.log})`,
      );
    }
    const waited = Date.now() - started;
    // Past the wait, answer once the first attempt has reported (a loaded machine may take a
    // while to start the sidecar); a transport that reports nothing (webrtc) gets a grace period.
    if (waited > waitMs && (failure || waited > waitMs + NO_REPORT_GRACE_MS)) {
      ctx.out(
        { ...base, connected: false, failure },
        `sidecar pid ${child.pid} started but is not in room '${cfg.room}' yet${failure ? `: ${failure.message}` : ''}; it keeps retrying (\`tether agent status\` shows why; log: ${f.log})`,
      );
      return;
    }
    if (waited - shown >= PROGRESS_EVERY_MS) {
      shown = waited;
      ctx.progress(
        `waiting for the sidecar to join '${cfg.room}' via ${cfg.relay}... ${Math.round(waited / 1000)} s${failure ? ` (${failure.message})` : ''}`,
      );
    }
    await sleep(100);
  }
}
