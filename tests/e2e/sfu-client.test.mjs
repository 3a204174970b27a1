// The Realtime API client (web/sfu/client.js) and the rtc-file parser in the three runtimes a
// relay host runs in: Node, Deno and workerd (Miniflare), each against the same local SFU, with
// the same answers and error values. Inside a private network namespace (tests/e2e/lib/netns.mjs).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { inNetns } from './lib/netns.mjs';

if (inNetns(import.meta.url)) {
  const { Miniflare } = await import('miniflare');
  const { startSfu } = await import('../../web/sfu/sfu.js');
  const { exercise } = await import('./lib/sfu_client_exercise.js');
  const { workerdOptions } = await import('./lib/edge.mjs');
  const { repoDir } = await import('./lib/fixtures.mjs');

  let sfu;
  let rtcText;
  let mf;
  before(async () => {
    sfu = await startSfu({});
    rtcText = JSON.stringify(sfu.rtcFile);
  });
  after(async () => {
    await mf?.dispose();
    await sfu?.close();
  });

  const expected = {
    newSession: { ok: true, status: 201, keys: ['sessionId'] },
    getSession: { ok: true, status: 200, body: { tracks: [], dataChannels: [] } },
    closeUnknownMid: { ok: true, status: 200, trackError: 'close_track_error' },
    pullMissing: { ok: true, status: 200, trackError: 'not_found_track_error' },
    turn: { ok: true, status: 201 },
    gone: { ok: false, status: 410, errorCode: 'session_error' },
    badTtl: { ok: false, status: 406, errorCode: 'invalid_params' },
    wrongSecret: { ok: false, status: 401, errorCode: 'unauthorized' },
    unknownOp: { ok: false, status: 0, errorCode: 'unknown_op' },
    unreachable: { ok: false, status: 0, errorCode: 'network_error' },
  };

  test(
    'Node: every call answers as Cloudflare would, errors as values',
    { timeout: 60_000 },
    async () => {
      assert.deepEqual(await exercise(rtcText), expected);
    },
  );

  test('Deno: the same client gives the same answers', { timeout: 90_000 }, async () => {
    const deno = `${repoDir}node_modules/.bin/deno`;
    const child = spawn(
      deno,
      [
        'run',
        '--no-lock',
        '--no-prompt',
        '--allow-net=127.0.0.1',
        `${repoDir}tests/e2e/deno/sfu_client.js`,
        rtcText,
      ],
      {
        env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise((r) => child.on('exit', r));
    assert.equal(code, 0, err);
    const { runtime, report } = JSON.parse(out.trim().split('\n').at(-1));
    assert.equal(runtime, 'deno');
    assert.deepEqual(report, expected);
  });

  test('workerd: the same client gives the same answers', { timeout: 90_000 }, async () => {
    mf = new Miniflare({
      ...workerdOptions(`${repoDir}tests/e2e/workerd/sfu_client_worker.js`),
      bindings: { RTC: rtcText },
    });
    await mf.ready;
    const res = await mf.dispatchFetch('http://127.0.0.1/');
    const { runtime, report } = await res.json();
    assert.equal(runtime, 'workerd');
    assert.deepEqual(report, expected);
  });
}
