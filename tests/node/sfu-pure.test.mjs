// The pure parts of web/sfu: the --rtc-file parser (every field, typo, bound and bad value with an
// error that names the fix), the client's base URL and its answers to a misbehaving server
// (oversized, not JSON, cut off), and the camera's test pattern read back from its own pixels.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import {
  createRealtimeClient,
  normalizeBaseUrl,
  MAX_RESPONSE_BYTES,
} from '../../web/sfu/client.js';
import { MAX_RTC_FILE_BYTES, parseRtcFile } from '../../web/sfu/rtc-file.js';
import { barX, createDrawer, patternLayout, readPattern, stampAge } from '../../web/sfu/pattern.js';

const good = { appId: 'a'.repeat(32), appSecret: 'b'.repeat(64) };
const parse = (v) => parseRtcFile(typeof v === 'string' ? v : JSON.stringify(v));
const refused = (v, re) => {
  const r = parse(v);
  assert.equal(r.ok, false, `accepted: ${JSON.stringify(v)}`);
  assert.match(r.error, /^the rtc file: /);
  assert.match(r.error, re);
};

test('rtc file: the app alone, with a TURN key, and with a base URL', () => {
  assert.deepEqual(parse(good), {
    ok: true,
    rtc: { ...good, baseUrl: 'https://rtc.live.cloudflare.com' },
  });
  const turn = { turnKeyId: 'c'.repeat(32), turnKeyApiToken: 'd'.repeat(64) };
  assert.deepEqual(parse({ ...good, ...turn }).rtc, {
    ...good,
    ...turn,
    baseUrl: 'https://rtc.live.cloudflare.com',
  });
  assert.equal(
    parse({ ...good, baseUrl: 'http://127.0.0.1:7790' }).rtc.baseUrl,
    'http://127.0.0.1:7790',
  );
  assert.equal(
    parse({ ...good, baseUrl: 'https://rtc.live.cloudflare.com/v1/' }).rtc.baseUrl,
    'https://rtc.live.cloudflare.com',
  );
  assert.equal(parse({ ...good, baseUrl: 'http://[::1]:80' }).rtc.baseUrl, 'http://[::1]');
  assert.equal(
    parseRtcFile('{', { source: '/etc/rtc.json' }).error.startsWith('/etc/rtc.json: '),
    true,
  );
});

test('rtc file: malformed, truncated, oversized and hostile files are refused with the fix named', () => {
  refused('', /not JSON/);
  refused('{"appId": "x", "appSecret"', /not JSON/);
  refused('[]', /one JSON object/);
  refused('null', /one JSON object/);
  refused('"appId"', /one JSON object/);
  refused(' '.repeat(MAX_RTC_FILE_BYTES + 1), /over 65536 bytes/);
  refused({ appSecret: 'x' }, /"appId" is missing.*App ID/);
  refused({ appId: 'x' }, /"appSecret" is missing.*App Secret/);
  refused({ ...good, app_secret: 'x' }, /unknown key "app_secret": did you mean "appSecret"\?/);
  refused({ ...good, APPID: 'x' }, /did you mean "appId"/);
  refused(
    { ...good, region: 'eu' },
    /unknown key "region"; the keys are appId, appSecret, turnKeyId, turnKeyApiToken, baseUrl/,
  );
  refused({ ...good, appId: 7 }, /"appId" must be a string/);
  refused({ ...good, appId: '' }, /"appId" is empty/);
  refused({ ...good, appSecret: 'abc def' }, /whitespace/);
  refused({ ...good, appSecret: 'abc\n' }, /whitespace/);
  refused({ ...good, appSecret: 'x'.repeat(513) }, /at most 512/);
  refused({ ...good, turnKeyId: 'k' }, /"turnKeyId" is set without "turnKeyApiToken"/);
  refused({ ...good, turnKeyApiToken: 't' }, /"turnKeyApiToken" is set without "turnKeyId"/);
  refused({ ...good, turnKeyId: 'k', turnKeyApiToken: 5 }, /must be a string/);
  refused({ ...good, baseUrl: 'rtc.live.cloudflare.com' }, /not a URL/);
  refused({ ...good, baseUrl: 'http://rtc.live.cloudflare.com' }, /must be https/);
  refused({ ...good, baseUrl: 'ftp://127.0.0.1' }, /must be https/);
  refused({ ...good, baseUrl: 'https://u:p@rtc.live.cloudflare.com' }, /credentials/);
  refused({ ...good, baseUrl: 'https://rtc.live.cloudflare.com/?x=1' }, /query/);
  refused({ ...good, baseUrl: 'https://rtc.live.cloudflare.com/v1/apps' }, /origin/);
  refused({ ...good, baseUrl: 5 }, /must be a string/);
  assert.equal(parseRtcFile(undefined).ok, false);
});

test("client: the base URL is an origin; a trailing /v1 is Cloudflare's own spelling", () => {
  assert.equal(
    normalizeBaseUrl('https://rtc.live.cloudflare.com/'),
    'https://rtc.live.cloudflare.com',
  );
  assert.equal(
    normalizeBaseUrl('https://rtc.live.cloudflare.com/v1'),
    'https://rtc.live.cloudflare.com',
  );
  assert.equal(normalizeBaseUrl('http://127.0.0.1:7790'), 'http://127.0.0.1:7790');
});

test('client: requests carry the bearer secret and JSON; a misbehaving server gives error values', async () => {
  const seen = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({
        method: req.method,
        url: req.url,
        auth: req.headers.authorization,
        type: req.headers['content-type'],
        body,
      });
      if (req.url.endsWith('/big')) return res.end('x'.repeat(MAX_RESPONSE_BYTES + 1));
      if (req.url.endsWith('/sessions/html'))
        return res.writeHead(502).end('<html>bad gateway</html>');
      if (req.url.includes('/sessions/cut')) {
        res.writeHead(200, { 'content-length': '100' });
        res.write('{"tracks": [', () => setTimeout(() => res.socket.destroy(), 20));
        return;
      }
      if (req.url.includes('/sessions/err200'))
        return res.end('{"errorCode":"internal_error","errorDescription":"boom"}');
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"sessionId":"s1"}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  try {
    const c = createRealtimeClient({ baseUrl, appId: 'app/1', appSecret: 'sec' });
    assert.deepEqual(await c.newSession({ correlationId: 'r 1' }), {
      ok: true,
      status: 201,
      body: { sessionId: 's1' },
    });
    assert.deepEqual(seen.at(-1), {
      method: 'POST',
      url: '/v1/apps/app%2F1/sessions/new?correlationId=r%201',
      auth: 'Bearer sec',
      type: undefined,
      body: '',
    });
    await c.newTracks('s/2', { tracks: [{ location: 'remote', sessionId: 'x', trackName: 'y' }] });
    assert.deepEqual(seen.at(-1), {
      method: 'POST',
      url: '/v1/apps/app%2F1/sessions/s%2F2/tracks/new',
      auth: 'Bearer sec',
      type: 'application/json',
      body: '{"tracks":[{"location":"remote","sessionId":"x","trackName":"y"}]}',
    });
    const html = await c.getSession('html');
    assert.deepEqual([html.ok, html.status, html.errorCode], [false, 502, 'invalid_response']);
    const cut = await c.getSession('cut');
    assert.deepEqual([cut.ok, cut.errorCode], [false, 'invalid_response']);
    const top = await c.getSession('err200');
    assert.deepEqual(
      [top.ok, top.status, top.errorCode, top.errorDescription],
      [false, 200, 'internal_error', 'boom'],
    );
    const tooBig = await createRealtimeClient({
      baseUrl,
      appId: 'a',
      appSecret: 's',
      fetch: (u, i) => fetch(`${baseUrl}/big`, i),
    }).getSession('x');
    assert.deepEqual([tooBig.ok, tooBig.errorCode], [false, 'response_too_large']);
    const noTurn = await createRealtimeClient({
      baseUrl,
      appId: 'a',
      appSecret: 's',
    }).generateIceServers({ ttl: 60 });
    assert.deepEqual([noTurn.ok, noTurn.status, noTurn.errorCode], [false, 0, 'no_turn_key']);
    const abort = new AbortController();
    abort.abort();
    const cancelled = await c.getSession('x', { signal: abort.signal });
    assert.deepEqual([cancelled.ok, cancelled.status, cancelled.errorCode], [false, 0, 'aborted']);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** The frame as a browser would show it: video-range luma to RGB (grey; chroma left out). */
function toRgba(frame, w, h) {
  const rgba = new Uint8ClampedArray(w * h * 4);
  for (let i = 0; i < w * h; i++)
    rgba[i * 4] = rgba[i * 4 + 1] = rgba[i * 4 + 2] = ((frame[i] - 16) * 255) / 219;
  return rgba;
}

test('pattern: every frame reads back its counter, stamp and bar; a damaged one reads invalid', () => {
  const layout = patternLayout(640, 480);
  const draw = createDrawer(layout);
  const stamp = 1_796_118_306_004;
  for (const counter of [0, 1, 77, 0x5555, 0xffff]) {
    const p = readPattern(toRgba(draw(counter, stamp + counter), 640, 480), 640, 480);
    assert.deepEqual(p, {
      valid: true,
      counter,
      stamp: (stamp + counter) % 2 ** 32,
      barX: barX(layout, counter),
    });
    assert.equal(stampAge(p.stamp, stamp + counter + 40), 40);
  }
  const damaged = draw(12, stamp);
  damaged.fill(235, 0, 640 * 40); // the counter row turned white
  assert.equal(readPattern(toRgba(damaged, 640, 480), 640, 480).valid, false);
  assert.equal(stampAge(5, 2 ** 32 + 10), 5, 'across the 32-bit wrap');
  assert.throws(() => patternLayout(100, 480), /multiple of 32/);
  assert.throws(() => patternLayout(640, 100), /too small/);
});
