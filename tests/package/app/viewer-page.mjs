// Chromium: a page that imports `@tether-rt/tether/cockpit-viewer` and no other glue subpath,
// bundled by esbuild from the installed package. The subpath brings the module it runs on (its JS
// in the bundle); the .wasm is the package's `./tether.wasm` export, compiled and handed over as a
// bundled app does.
import wasmUrl from '@tether-rt/tether/tether.wasm';
import { connectViewer, loadViewer } from '@tether-rt/tether/cockpit-viewer';

window.result = (async () => {
  const wasmModule = await WebAssembly.compileStreaming(fetch(wasmUrl));
  const { mod, wire } = await loadViewer({ wasmModule });
  const events = [];
  const viewer = connectViewer(
    mod,
    wire,
    { version: wire.limits.protocolVersion, wsUrl: 'ws://127.0.0.1:9/ws/viewer' },
    { event: (e) => events.push(e) },
  );
  // Not started, so not connected: the session core answers, and nothing leaves the page.
  const publish = viewer.publish('chat', new TextEncoder().encode('hi'), 'm1');
  const stopped = viewer.stopped;
  viewer.close();
  return { viewer: { protocolVersion: wire.limits.protocolVersion, publish, stopped } };
})().then(
  (r) => ({ ok: true, ...r }),
  (e) => ({ ok: false, error: String(e?.stack ?? e) }),
);
