// Where an agent's state lives, and the files that tie CLI invocations to their sidecar:
//   config.json    room, relay, identity and options (written by `join`)
//   sidecar.lock   the running sidecar's pid (created exclusively: one sidecar per state dir)
//   endpoint.json  127.0.0.1 port + bearer token of the sidecar's control API (mode 0600)
//   sidecar.log    the sidecar's own log
//   ticket         the room ticket `join` was given (mode 0600; never printed or logged)
//   room-secret    the room secret that seals envelopes end to end (mode 0600; never printed)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeAtomic } from './store.js';

export function resolveStateDir(flag, env = process.env) {
  const dir = flag ?? env.TETHER_AGENT_DIR ?? path.join(os.homedir(), '.tether', 'agent');
  return path.resolve(dir);
}

export function files(dir) {
  return {
    config: path.join(dir, 'config.json'),
    lock: path.join(dir, 'sidecar.lock'),
    endpoint: path.join(dir, 'endpoint.json'),
    log: path.join(dir, 'sidecar.log'),
    ticket: path.join(dir, 'ticket'),
    secret: path.join(dir, 'room-secret'),
  };
}

export function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

export function pidAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** The pid holding the lock if that process is alive, else null. */
export function lockHolder(dir) {
  let text;
  try {
    text = fs.readFileSync(files(dir).lock, 'utf8');
  } catch {
    return null;
  }
  const pid = Number.parseInt(text, 10);
  return pidAlive(pid) ? pid : null;
}

/**
 * Takes the state dir's lock for this process. A lock left by a dead process is stale and taken
 * over; a live holder is an error naming it.
 */
export function takeLock(dir) {
  const f = files(dir).lock;
  for (let i = 0; i < 3; i++) {
    try {
      const fd = fs.openSync(f, 'wx', 0o600);
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    const holder = lockHolder(dir);
    if (holder !== null && holder !== process.pid) {
      throw new Error(
        `another sidecar (pid ${holder}) already runs for ${dir}; run \`tether agent leave --dir ${dir}\` first`,
      );
    }
    // Stale: its process is gone (killed without cleanup). Remove it and try again.
    try {
      fs.unlinkSync(f);
    } catch {}
  }
  throw new Error(
    `could not take ${f}; another sidecar may be starting for ${dir}. Try again, or remove the file if no sidecar runs`,
  );
}

export function releaseLock(dir) {
  const f = files(dir).lock;
  try {
    if (Number.parseInt(fs.readFileSync(f, 'utf8'), 10) === process.pid) fs.unlinkSync(f);
  } catch {}
}

export function writeJson(file, obj) {
  writeAtomic(file, `${JSON.stringify(obj, null, 2)}\n`);
}

/** The saved room ticket, or null. */
export function readTicket(dir) {
  try {
    return fs.readFileSync(files(dir).ticket, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

export function writeTicket(dir, ticket) {
  writeAtomic(files(dir).ticket, `${ticket}\n`);
}

/** The saved room secret (its exact bytes, as text), or null: envelopes then go unencrypted. */
export function readSecret(dir) {
  try {
    return fs.readFileSync(files(dir).secret, 'utf8') || null;
  } catch {
    return null;
  }
}

export function writeSecret(dir, secret) {
  writeAtomic(files(dir).secret, secret);
}
