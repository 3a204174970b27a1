// fixtures/room/sealed.json (written by the C++ side, `make fixtures`) checked with the real
// WebCrypto of this runtime and through the WASM build's sealed channel (web/glue/sealed.js):
// HKDF gives the pinned key id and session key, AES-256-GCM over the pinned nonce and AAD gives
// the pinned frames, the glue runs the pinned epoch handshake and seals the same bytes, and every
// received sequence, to a receiver of the pinned session (its epoch), gives the pinned texts,
// refusals, links and answers (tests/native/room/test_sealed_fixtures.cpp checks the file
// natively).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { createSealer, sealedSuite } from '../../web/glue/sealed.js';
import { waitFor } from './lib/agent-harness.mjs';

const f = JSON.parse(fs.readFileSync(new URL('../../fixtures/room/sealed.json', import.meta.url)));
const b64 = (s) => new Uint8Array(Buffer.from(s, 'base64'));
const enc = new TextEncoder();
const { subtle } = globalThis.crypto;

test('sealed fixtures: WebCrypto derives the pinned key id and key and seals the pinned frames', async () => {
  const suite = sealedSuite();
  assert.equal(suite.headerBytes, f.limits.headerBytes);
  const base = await subtle.importKey('raw', enc.encode(f.secret), 'HKDF', false, ['deriveBits']);
  const hkdf = (salt, info, bits) =>
    subtle.deriveBits({ name: 'HKDF', hash: suite.hash, salt, info }, base, bits);
  const keyId = new Uint8Array(await hkdf(enc.encode(f.keyIdSalt), enc.encode(f.keyIdInfo), 64));
  assert.deepEqual(keyId, b64(f.keyId));
  const raw = new Uint8Array(await hkdf(b64(f.seal.session), b64(f.seal.keyInfo), 256));
  assert.deepEqual(raw, b64(f.seal.key));
  const key = await subtle.importKey('raw', raw, suite.cipher, false, ['encrypt', 'decrypt']);
  for (const fr of f.seal.frames) {
    const frame = b64(fr.frame);
    const header = frame.subarray(0, suite.headerBytes);
    assert.equal(header[0], f.limits.version);
    assert.equal(suite.keyIdAt, f.limits.keyIdAt);
    assert.deepEqual(header.subarray(suite.keyIdAt, suite.keyIdAt + suite.keyIdBytes), keyId);
    // The recipient's epoch (its session), inside the header the AAD covers.
    assert.deepEqual(
      header.subarray(f.limits.epochAt, f.limits.epochAt + suite.epochBytes),
      b64(f.seal.handshake.peerSession),
    );
    const params = { name: suite.cipher, iv: b64(fr.nonce), additionalData: b64(fr.aad) };
    const body = new Uint8Array(await subtle.encrypt(params, key, enc.encode(fr.text)));
    assert.deepEqual(body, frame.subarray(suite.headerBytes), `frame ${fr.counter}`);
    const back = await subtle.decrypt(params, key, frame.subarray(suite.headerBytes));
    assert.equal(new TextDecoder().decode(back), fr.text);
  }
});

test('sealed fixtures: the WASM sealed channel runs the pinned handshake, seals the pinned frames and gives the pinned outcomes', async () => {
  const sent = [];
  const linked = [];
  const alice = await createSealer(
    {
      room: f.room,
      selfId: f.seal.from,
      secret: f.secret,
      maxLaneBytes: 256 * 1024,
      session: b64(f.seal.session),
    },
    {
      transmit: (peer, frame) => sent.push([peer, frame]),
      text() {},
      refused() {},
      linked: (peer) => linked.push(peer),
    },
  );
  const hs = f.seal.handshake;
  assert.equal(alice.seal(hs.peer, 'too early'), 'no-epoch');
  assert.equal(alice.greet(hs.peer), 'none');
  await waitFor('the greeting', () => sent.length === 1);
  alice.open(hs.peer, hs.peerHello);
  await waitFor('the answer', () => sent.length === 2);
  assert.deepEqual(sent, [
    [hs.peer, hs.greet],
    [hs.peer, hs.answer],
  ]);
  assert.deepEqual(linked, [hs.peer]);
  assert.equal(alice.linked(hs.peer), true);
  for (const fr of f.seal.frames) assert.equal(alice.seal(fr.to, fr.text), 'none');
  await waitFor('frames sealed', () => sent.length === 2 + f.seal.frames.length);
  assert.deepEqual(
    sent.slice(2),
    f.seal.frames.map((fr) => [fr.to, fr.frame]),
  );
  alice.close();
  assert.ok(f.open.length >= 16);
  for (const c of f.open) {
    const got = [];
    const sends = [];
    const rx = await createSealer(
      {
        room: f.room,
        selfId: c.receiver.self,
        secret: f.secret,
        maxLaneBytes: 256 * 1024,
        session: b64(c.receiver.session),
      },
      {
        transmit: (peer, frame, kind) => sends.push(kind),
        text: (peer, text) => got.push(`text:${text}`),
        refused: (err) => got.push(`refused:${err.code}`),
        linked: (peer) => got.push(`linked:${peer}`),
      },
    );
    for (const fr of c.frames) rx.open(c.from, fr);
    // A last frame that is refused at once: outcomes come in order, so once it is in, all are;
    // and every handshake frame the receiver queued by then is counted (its transmit follows).
    rx.open(c.from, '@@@');
    await waitFor(c.name, () => got.at(-1) === 'refused:malformed' && got.length > c.expect.length);
    await waitFor(`${c.name}: answers`, () => sends.length === rx.stats().hellosSent);
    assert.deepEqual(got.slice(0, -1), c.expect, c.name);
    assert.deepEqual(sends, c.sends, c.name);
    rx.close();
  }
});
