#!/usr/bin/env node
// The local SFU's command line (docs/webrtc-video.md): Cloudflare Realtime's API subset on loopback,
// forwarding real media. Prints its credentials and a ready line; Ctrl-C stops it.
//
//   node web/sfu/server.js [--port 7790] [--host 127.0.0.1] [--rtc-file-out FILE]
//     [--app-id ID --app-secret S] [--turn-key-id ID --turn-key-api-token T]
//     [--track-timeout-ms 30000] [--session-idle-ms 30000] [--media-address 127.0.0.1]
//     [--turn-url URL ...  --turn-secret S] [--admin] [--verbose]
import { writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { startSfu, SESSION_IDLE_MS, TRACK_TIMEOUT_MS } from './sfu.js';

const USAGE =
  'flags: --port N --host ADDR --rtc-file-out FILE --app-id ID --app-secret S --turn-key-id ID --turn-key-api-token T ' +
  '--track-timeout-ms MS --session-idle-ms MS --media-address ADDR --turn-url URL --turn-secret S --admin --verbose --unsafe-non-loopback';

function parseFlags(args) {
  const f = {
    port: 7790,
    host: '127.0.0.1',
    turnUrls: [],
    trackTimeoutMs: TRACK_TIMEOUT_MS,
    sessionIdleMs: SESSION_IDLE_MS,
  };
  const numbers = {
    '--port': 'port',
    '--track-timeout-ms': 'trackTimeoutMs',
    '--session-idle-ms': 'sessionIdleMs',
  };
  const strings = {
    '--host': 'host',
    '--rtc-file-out': 'rtcFileOut',
    '--app-id': 'appId',
    '--app-secret': 'appSecret',
    '--turn-key-id': 'turnKeyId',
    '--turn-key-api-token': 'turnKeyApiToken',
    '--media-address': 'mediaAddress',
    '--turn-secret': 'turnSecret',
  };
  const bools = {
    '--admin': 'admin',
    '--verbose': 'verbose',
    '--unsafe-non-loopback': 'unsafeNonLoopback',
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const next = () => {
      if (i + 1 >= args.length) die(`${a} needs a value; ${USAGE}`);
      return args[++i];
    };
    if (a === '--help') {
      console.log(`node web/sfu/server.js [flags]: the local SFU (docs/webrtc-video.md)\n${USAGE}`);
      process.exit(0);
    } else if (a in numbers) {
      const n = Number(next());
      if (!Number.isInteger(n) || n < 0) die(`${a} takes a whole number, not ${args[i]}`);
      f[numbers[a]] = n;
    } else if (a in strings) f[strings[a]] = next();
    else if (a in bools) f[bools[a]] = true;
    else if (a === '--turn-url') f.turnUrls.push(next());
    else die(`unknown flag ${a}; ${USAGE}`);
  }
  if (f.port > 65535) die('--port must be 0..65535');
  if (!f.trackTimeoutMs || !f.sessionIdleMs)
    die('--track-timeout-ms and --session-idle-ms must be at least 1');
  if ((f.appId === undefined) !== (f.appSecret === undefined))
    die('--app-id and --app-secret go together');
  if ((f.turnKeyId === undefined) !== (f.turnKeyApiToken === undefined))
    die('--turn-key-id and --turn-key-api-token go together');
  const loopback = (h) => h === '127.0.0.1' || h === '::1';
  if ((!loopback(f.host) || (f.mediaAddress && !loopback(f.mediaAddress))) && !f.unsafeNonLoopback)
    die(
      `refusing to listen on ${f.host}: the SFU binds loopback unless --unsafe-non-loopback is given`,
    );
  return f;
}

function die(message) {
  console.error(`tether sfu: ${message}`);
  process.exit(2);
}

const hex = (n) => randomBytes(n).toString('hex');
const f = parseFlags(process.argv.slice(2));
const app = { appId: f.appId ?? hex(16), appSecret: f.appSecret ?? hex(32) };
const turnKey = {
  turnKeyId: f.turnKeyId ?? hex(16),
  turnKeyApiToken: f.turnKeyApiToken ?? hex(32),
};

let sfu;
try {
  sfu = await startSfu({
    host: f.host,
    port: f.port,
    apps: [app],
    turnKeys: [turnKey],
    admin: f.admin,
    trackTimeoutMs: f.trackTimeoutMs,
    sessionIdleMs: f.sessionIdleMs,
    mediaAddress: f.mediaAddress ?? (f.host === '::1' ? '127.0.0.1' : f.host),
    turnUrls: f.turnUrls,
    ...(f.turnSecret ? { turnSecret: f.turnSecret } : {}),
    log: f.verbose ? (line) => console.log(`tether sfu: ${line}`) : () => {},
  });
} catch (e) {
  die(
    e.code === 'EADDRINUSE'
      ? `port ${f.port} is taken: pick another --port (0 picks a free one)`
      : `could not start: ${e.message}`,
  );
}

if (f.rtcFileOut)
  writeFileSync(f.rtcFileOut, `${JSON.stringify(sfu.rtcFile, null, 2)}\n`, { mode: 0o600 });
console.log(
  `tether sfu: app ${app.appId}, TURN key ${turnKey.turnKeyId}; tracks are collected after ${f.trackTimeoutMs} ms without media; ` +
    `media on ${sfu.sfu.mediaAddress}; admin endpoints ${f.admin ? 'on' : 'off'}` +
    (f.rtcFileOut
      ? `; credentials in ${f.rtcFileOut} (pass it to the relay as --rtc-file)`
      : f.appSecret
        ? ''
        : `; app secret ${app.appSecret}, TURN key API token ${turnKey.turnKeyApiToken} (--rtc-file-out FILE keeps them out of the log)`),
);
console.log(`tether sfu ready: ${sfu.url}`);

for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, async () => {
    await sfu.close();
    process.exit(0);
  });
