// Checks the numbered Deno workarounds of cockpit-wire-protocol.md against the Deno running this
// script, over real WebTransport on loopback, and prints one line per check. The results are
// recorded in web/host/README.md. Run: deno run -A --unstable-net web/host/probe-workarounds.js
import { listenWebTransport, makeCertificate, pinnedHashes } from './cert.js';

const cert = await makeCertificate();
const { hex } = cert;
const { endpoint, listener } = listenWebTransport({ cert });
const port = endpoint.addr.port;
const results = {};
const withTimeout = (p, ms) =>
  Promise.race([p, new Promise((r) => setTimeout(() => r('timeout'), ms))]);

const serverSide = (async () => {
  const wt = await Deno.upgradeWebTransport(await (await listener.incoming()).accept());
  await wt.ready;
  results.url = wt.url;
  // 1: client-to-server unidirectional payload.
  const uniReader = wt.incomingUnidirectionalStreams.getReader();
  const uni = await withTimeout(uniReader.read(), 3000);
  if (uni === 'timeout') results.w1 = 'no stream';
  else {
    const r = uni.value.getReader();
    const got = await withTimeout(r.read(), 3000);
    results.w1 =
      got === 'timeout'
        ? 'payload never delivered (still needed)'
        : `payload delivered (${got.value?.length} bytes)`;
  }
  // 8: default reader on an incoming bidirectional stream.
  const biReader = wt.incomingBidirectionalStreams.getReader();
  const bi = await withTimeout(biReader.read(), 3000);
  if (bi === 'timeout') results.w8 = 'no stream';
  else {
    const got = await withTimeout(bi.value.readable.getReader().read(), 3000);
    results.w8 =
      got === 'timeout'
        ? 'default reader never delivers (still needed)'
        : 'default reader delivers';
  }
  // 2: FIN after writer.close() on a server-opened unidirectional stream.
  const s = await wt.createUnidirectionalStream();
  const w = s.getWriter();
  await w.write(new Uint8Array([1, 2, 3]));
  await w.close();
  // 10: resets racing acceptance on wt.incomingBidirectionalStreams must not kill the accept loop.
  let good = false;
  const loop = (async () => {
    for (;;) {
      const next = await biReader.read().catch((e) => ({ error: e }));
      if (next.error) return `accept loop died: ${next.error?.message ?? next.error}`;
      if (next.done) return 'accept loop ended';
      next.value.readable
        .getReader({ mode: 'byob' })
        .read(new Uint8Array(64))
        .then(
          (r) => {
            if (r.value?.[0] === 42) good = true;
          },
          () => {},
        );
    }
  })();
  const verdict = await withTimeout(
    new Promise((r) => {
      const t = setInterval(() => {
        if (good) {
          clearInterval(t);
          r('ok');
        }
      }, 20);
    }),
    8000,
  );
  results.w10 =
    verdict === 'ok' ? 'accept loop survived 50 raced resets' : await withTimeout(loop, 100);
  await new Promise((r) => setTimeout(r, 500));
  return wt;
})();

const client = new WebTransport(`https://127.0.0.1:${port}/viewer`, {
  serverCertificateHashes: pinnedHashes(hex),
});
await client.ready;
const u = await client.createUnidirectionalStream();
const uw = u.getWriter();
await uw.write(new Uint8Array([9, 9, 9, 9]));
const b = await client.createBidirectionalStream();
const bw = b.writable.getWriter();
await bw.write(new Uint8Array([7, 7]));
const inc = await client.incomingUnidirectionalStreams.getReader().read();
const rr = inc.value.getReader();
const first = await rr.read();
const t0 = Date.now();
const end = await withTimeout(rr.read(), 3000);
results.w2 =
  end === 'timeout'
    ? 'writer.close() sent no FIN within 3 s (still needed)'
    : end.done
      ? `FIN arrived after ${Date.now() - t0} ms`
      : 'more data';
results.w2 += ` (first read ${first.value?.length} bytes)`;
for (let i = 0; i < 50; i++) {
  const s = await client.createBidirectionalStream();
  const w = s.writable.getWriter();
  w.write(new Uint8Array([1])).catch(() => {});
  w.abort(1).catch(() => {});
}
await new Promise((r) => setTimeout(r, 300));
const goodStream = await client.createBidirectionalStream();
await goodStream.writable.getWriter().write(new Uint8Array([42]));
await serverSide;
console.log(JSON.stringify({ deno: Deno.version.deno, ...results }, null, 1));
client.close();
endpoint.close();
Deno.exit(0);
