// The sealed channel for JavaScript (src/room/sealed.hpp): the encrypted relay transport's frames.
// The core decides the frame, the HKDF inputs, the nonce, the authenticated data, the order and
// the replay rule; this file runs it through the one driver (web/glue/driver.js) and carries out
// its cipher actions with WebCrypto (crypto.subtle: Node, Deno, browsers and workerd alike) on
// exactly the bytes each action names, then feeds the results back (docs/design.md rule 4). The
// room secret never enters WASM memory: only the HKDF base key made from it, held by WebCrypto.
import { createDriver } from './driver.js';
import { loadTetherModule, loadedTetherModule } from './load.js';
import { textBytes } from './text-bytes.js';

let mod = null;
if (globalThis.process?.versions?.node || globalThis.Deno)
  mod = await loadTetherModule({}, 'sealed');

function ready() {
  if (!mod) {
    mod = loadedTetherModule('sealed');
    if (!mod) {
      throw new Error(
        'tether/peer: the WASM module is not loaded; `await initPeer({ wasmModule })` (or any tether loader) first',
      );
    }
  }
  return mod;
}

/** The sealed frame's suite and bounds, as the core defines them. */
export function sealedSuite() {
  return ready().sealedSuite();
}

/** The largest plaintext a lane of `laneBytes` carries once sealed. */
export function sealedMaxPlaintext(laneBytes) {
  return ready().sealedMaxPlaintext(laneBytes);
}

/** The secret as bytes: a string is its UTF-8, bytes are taken as they are. */
function secretBytes(secret) {
  if (typeof secret === 'string') return textBytes(secret);
  if (ArrayBuffer.isView(secret))
    return new Uint8Array(secret.buffer, secret.byteOffset, secret.byteLength);
  if (secret instanceof ArrayBuffer) return new Uint8Array(secret);
  throw new TypeError('the room secret must be a string or bytes');
}

/** What is wrong with a secret, or '' (its size against the core's bounds). */
export function sealedSecretError(secret) {
  return ready().sealedSecretError(secretBytes(secret).length);
}

/**
 * A refusal as an Error with its code (`wrong-secret`, `tampered`, `replay`, `wrong-epoch`, ...).
 * @returns {import('./sealed.d.ts').SealedRefusal}
 */
function refusalError(room, e) {
  const err = new Error(
    `encrypted relay transport, room '${room}', frame ${e.counter || '?'} from '${e.peer}' refused (${e.code}): ${e.fix}`,
  );
  return Object.assign(err, { code: e.code, peer: e.peer });
}

/**
 * @param {import('./sealed.d.ts').SealerOptions} options
 * @param {import('./sealed.d.ts').SealerHost} host
 * @returns {Promise<import('./sealed.d.ts').Sealer>}
 */
export async function createSealer(options, host) {
  const m = ready();
  const subtle = options.crypto?.subtle ?? globalThis.crypto?.subtle;
  if (!subtle) throw new TypeError('createSealer: no WebCrypto (crypto.subtle) in this runtime');
  const bytes = secretBytes(options.secret);
  const bad = m.sealedSecretError(bytes.length);
  if (bad) throw new TypeError(`the room secret: ${bad}`);
  const suite = m.sealedSuite();
  const base = await subtle.importKey(
    'raw',
    /** @type {Uint8Array<ArrayBuffer>} */ (bytes),
    'HKDF',
    false,
    ['deriveBits', 'deriveKey'],
  );
  // A fresh random session per sealer: a restarted sender never reuses a nonce under one key.
  // options.session pins it for golden vectors only (reusing one with live traffic would).
  const session = new Uint8Array(suite.sessionBytes);
  if (options.session) session.set(options.session.subarray(0, suite.sessionBytes));
  else (options.crypto ?? globalThis.crypto).getRandomValues(session);
  const core = new m.SealedCore(
    String(options.room),
    String(options.selfId),
    session,
    Number(options.maxLaneBytes),
  );
  const room = String(options.room);
  const keys = new Map();
  const stage = (buf) => {
    const view = new Uint8Array(buf);
    const at = core.staging(view.length);
    m.HEAPU8.set(view, at);
    return view.length;
  };
  let readyResolve, readyReject;
  const readyP = new Promise((res, rej) => {
    readyResolve = res;
    readyReject = rej;
  });
  let closed = false;
  const driver = createDriver(
    {
      pollAction: () => core.pollAction(),
      pollEvent: () => core.pollEvent(),
    },
    {
      perform(a) {
        const hkdf = () => ({ name: 'HKDF', hash: suite.hash, salt: a.salt, info: a.info });
        const gcm = () => ({
          name: suite.cipher,
          iv: a.nonce,
          additionalData: a.aad,
          tagLength: suite.tagBits,
        });
        // Every result goes back in through the driver; a failed cipher call is a result too.
        const back = (fn) => (value) => {
          if (!closed) driver.input(() => fn(value));
        };
        switch (a.kind) {
          case 'derive-key-id':
            subtle.deriveBits(hkdf(), base, suite.keyIdBytes * 8).then(
              back((bits) => core.keyId(stage(bits))),
              (err) => readyReject(err),
            );
            return;
          case 'derive-key':
            subtle
              .deriveKey(hkdf(), base, { name: suite.cipher, length: suite.keyBits }, false, [
                'encrypt',
                'decrypt',
              ])
              .then(
                back((key) => {
                  keys.set(a.slot, key);
                  core.key(a.slot, true);
                }),
                back(() => core.key(a.slot, false)),
              );
            return;
          case 'release-key':
            keys.delete(a.slot);
            return;
          case 'encrypt':
            subtle.encrypt(gcm(), keys.get(a.slot), a.data).then(
              back((ct) => core.encrypted(a.job, true, stage(ct))),
              back(() => core.encrypted(a.job, false, 0)),
            );
            return;
          case 'decrypt':
            subtle.decrypt(gcm(), keys.get(a.slot), a.data).then(
              back((pt) => core.decrypted(a.job, true, stage(pt))),
              back(() => core.decrypted(a.job, false, 0)),
            );
            return;
          case 'transmit':
            host.transmit(a.peer, a.text, a.frame);
            return;
        }
      },
      event(e) {
        if (e.kind === 'ready') readyResolve();
        else if (e.kind === 'text') host.text(e.peer, e.text);
        else if (e.kind === 'linked') host.linked?.(e.peer);
        else host.refused(refusalError(room, e));
      },
    },
    options.driverOptions ?? {},
  );
  driver.input(() => core.start());
  await readyP;
  const names = m.sealedErrorNames();
  return {
    /** Seals text to peer: 'none' when accepted (the frame leaves through host.transmit). */
    seal(peer, text) {
      return names[driver.input(() => core.seal(String(peer), textBytes(text)))];
    },
    /** One lane text from peer: its plaintext reaches host.text, or a refusal host.refused. */
    open(peer, text) {
      driver.input(() => core.open(String(peer), textBytes(text)));
    },
    /** The lane to peer opened: the epoch handshake starts ('none' when its hello is on its way). */
    greet(peer) {
      return names[driver.input(() => core.greet(String(peer)))];
    },
    /** Whether seal(peer) finds the peer's epoch (host.linked said so since the last greet). */
    linked: (peer) => core.linked(String(peer)),
    maxPlaintext: () => core.maxPlaintext(),
    stats: () => core.stats(),
    close() {
      closed = true;
      driver.close();
      keys.clear();
      core.delete();
    },
  };
}
