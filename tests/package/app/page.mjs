// Chromium: the browser-safe subpaths, bundled by esbuild from the installed package. The WASM
// module is the package's `./tether.wasm` export (esbuild's file loader gives its URL), compiled
// once and handed to every loader, as a bundled app does.
import wasmUrl from '@tether-rt/tether/tether.wasm';
import { exercise, memoryFolder } from './usage.mjs';

async function zlib(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

window.result = (async () => {
  const wasmModule = await WebAssembly.compileStreaming(fetch(wasmUrl));
  return exercise({
    load: { wasmModule },
    folder: async () => memoryFolder(),
    readSaved: async (folder, name) => folder.bytes(name),
    costmapZlib: await zlib(Uint8Array.of(0, 50, 100, 255)),
  });
})().then(
  (r) => ({ ok: true, ...r }),
  (e) => ({ ok: false, error: String(e?.stack ?? e) }),
);
