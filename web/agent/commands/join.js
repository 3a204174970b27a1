// `tether agent join`: starts the detached sidecar (web/agent/sidecar.js) for the state dir and
// waits until it is in the room. Settings are saved in the state dir, so a later `join` needs none.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureDirs } from '../store.js';
import { files, lockHolder, readJson, writeJson } from '../state.js';
import { validateWakeOptions } from '../wake.js';
import { fail, sleep } from '../cli/context.js';
import { msFlag } from '../cli/values.js';

const SIDECAR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'sidecar.js');
const JOIN_WAIT_MS = 15_000;

export default {
  name: 'join',
  usage:
    '--relay ws://HOST:PORT/ --room ROOM --id ID [--name N] [--role R] [--transport relay|webrtc] [--wake CMD]',
  summary: 'start the sidecar and join the room (later joins reuse the saved settings)',
  options: {
    relay: { type: 'string', value: 'URL', help: "the room relay's ws:// or wss:// URL" },
    room: { type: 'string', value: 'ROOM', help: 'the room to join' },
    id: {
      type: 'string',
      value: 'ID',
      help: (l) =>
        `our stream id in the room (at most ${l?.maxStreamIdChars ?? 'the bus core’s'} characters)`,
    },
    name: { type: 'string', value: 'N', help: 'display name (default: the id)' },
    role: { type: 'string', value: 'R', help: 'role announced to peers (default: agent)' },
    transport: {
      type: 'string',
      value: 'relay|webrtc',
      help: 'relay: envelopes through the room relay (default); webrtc: data channels',
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
  },
  async run(ctx) {
    const { dir, v, out } = ctx;
    const limits = ctx.needBus().limits;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const f = files(dir);
    const saved = readJson(f.config) ?? {};
    if (saved.id && v.id && saved.id !== v.id) {
      fail(
        `${dir} holds the state of '${saved.id}', not '${v.id}'; use another --dir for a second identity`,
      );
    }
    const cfg = { ...saved };
    if (v['webrtc-bind'] !== undefined) cfg.webrtcBind = v['webrtc-bind'];
    for (const k of ['relay', 'room', 'id', 'name', 'role', 'transport'])
      if (v[k] !== undefined) cfg[k] = v[k];
    if (cfg.transport !== undefined && cfg.transport !== 'relay' && cfg.transport !== 'webrtc') {
      fail(
        `--transport is relay (envelopes through the room relay) or webrtc (data channels); got '${cfg.transport}'`,
      );
    }
    if (!cfg.relay || !cfg.room || !cfg.id)
      fail(
        'join needs --relay ws://HOST:PORT/, --room ROOM and --id ID the first time (they are saved in the state dir)',
      );
    if (!/^wss?:\/\//.test(cfg.relay))
      fail(`--relay must be a ws:// or wss:// URL (got '${cfg.relay}')`);
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
    const holder = lockHolder(dir);
    if (holder !== null) {
      const st = await ctx.rpc('status').catch(() => null);
      if (
        st &&
        st.id === cfg.id &&
        st.room === cfg.room &&
        st.relay === cfg.relay &&
        st.transport === (cfg.transport ?? 'relay')
      ) {
        out(
          { ok: true, already: true, pid: holder, id: cfg.id, room: cfg.room, dir },
          `already joined room '${cfg.room}' as '${cfg.id}' (sidecar pid ${holder})`,
        );
        return;
      }
      fail(
        `a sidecar (pid ${holder}) already runs for ${dir}; run \`tether agent leave --dir ${dir}\` first to change its settings`,
      );
    }
    writeJson(f.config, cfg);
    ensureDirs(dir);
    try {
      fs.unlinkSync(f.endpoint);
    } catch {}
    const logFd = fs.openSync(f.log, 'a', 0o600);
    const child = spawn(process.execPath, [SIDECAR, '--dir', dir], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: process.env,
    });
    fs.closeSync(logFd);
    let exited = null;
    child.once('exit', (code, sig) => (exited = sig ?? code));
    child.unref();
    const started = Date.now();
    let shown = 0;
    while (true) {
      if (exited !== null) {
        const tail = fs.readFileSync(f.log, 'utf8').trim().split('\n').slice(-5).join('\n');
        fail(`the sidecar exited (${exited}) while starting:\n${tail}\n(full log: ${f.log})`);
      }
      const ep = readJson(f.endpoint);
      if (ep && ep.pid === child.pid) {
        const st = await ctx.rpc('status', {}, ep).catch(() => null);
        if (st?.connected) {
          out(
            { ok: true, pid: child.pid, id: cfg.id, room: cfg.room, dir, roster: st.roster },
            `joined room '${cfg.room}' as '${cfg.id}' (sidecar pid ${child.pid}; ${st.roster.length} other peer(s) online)`,
          );
          return;
        }
      }
      const waited = Date.now() - started;
      if (waited > JOIN_WAIT_MS) {
        out(
          { ok: true, pid: child.pid, id: cfg.id, room: cfg.room, dir, connected: false },
          `sidecar pid ${child.pid} started but has not reached ${cfg.relay} yet; it keeps retrying (log: ${f.log})`,
        );
        return;
      }
      if (waited - shown >= 2000) {
        shown = waited;
        ctx.progress(
          `waiting for the sidecar to join '${cfg.room}' via ${cfg.relay}... ${Math.round(waited / 1000)} s`,
        );
      }
      await sleep(100);
    }
  },
};
