// Node and Deno: every subpath from the installed package, the Node-only one (`peer/node`, a
// download folder on a real disk) included. Prints one JSON line for pack.test.mjs.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { nodeFolder } from '@tether-rt/tether/peer/node';
import { exercise } from './usage.mjs';

const dir = await mkdtemp(join(tmpdir(), 'tether-package-dl-'));
try {
  const result = await exercise({
    load: {},
    folder: () => nodeFolder(dir),
    readSaved: async (folder, name) => new Uint8Array(await readFile(join(folder.path, name))),
    costmapZlib: new Uint8Array(deflateSync(Uint8Array.of(0, 50, 100, 255))),
  });
  const runtime = globalThis.Deno ? `deno ${Deno.version.deno}` : `node ${process.version}`;
  const resolved = import.meta.resolve('@tether-rt/tether/wire');
  // The loader the package's glue used (web/glue/load.js beside the entry): which modules it loaded.
  const { loadedTetherModules } = await import(new URL('../load.js', resolved).href);
  console.log(JSON.stringify({ runtime, resolved, modules: loadedTetherModules(), ...result }));
} finally {
  await rm(dir, { recursive: true, force: true });
}
