// The local SFU's API against Cloudflare Realtime's shapes (docs/webrtc-video.md § API): answers of
// every call, bearer auth, Cloudflare-shaped errors for bad secrets, unknown apps and sessions,
// malformed, truncated, oversized and hostile bodies (the body bound, MAX_SDP_LEN and
// MAX_RTC_TRACKS from the wire core, enforced before any peer connection is touched), TURN
// credentials, and injected failures. Publishers and subscribers are real werift peers; inside a
// private network namespace (tests/e2e/lib/netns.mjs).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { inNetns } from './lib/netns.mjs';

if (inNetns(import.meta.url)) {
  const { startSfuHarness, stopSfuHarness, ok } = await import('./lib/sfu_harness.mjs');
  const { createPeer } = await import('../../web/sfu/peer.js');
  const { startSfu } = await import('../../web/sfu/sfu.js');
  const { bodyLimit } = await import('../../web/sfu/limits.js');
  const { loadWire } = await import('../../web/glue/wire.js');
  const { MediaStreamTrack } = await import('werift');

  let h;
  let base; // http://127.0.0.1:port/v1/apps/<appId>
  let secret;
  const peers = [];

  before(async () => {
    h = await startSfuHarness({ browser: false });
    base = `${h.sfu.url}/v1/apps/${h.sfu.rtcFile.appId}`;
    secret = h.sfu.rtcFile.appSecret;
  });
  after(async () => {
    for (const pc of peers) await pc.close().catch(() => {});
    if (h) await stopSfuHarness(h);
  });

  /** A raw call: {status, body, headers}; `body` a value (sent as JSON) or a Buffer/string (sent as is). */
  async function call(method, url, { body, token = secret, headers = {} } = {}) {
    const res = await fetch(url, {
      method,
      headers: {
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        'content-type': 'application/json',
        ...headers,
      },
      body:
        body === undefined
          ? undefined
          : typeof body === 'string' || Buffer.isBuffer(body)
            ? body
            : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }

  /** Asserts a Cloudflare-shaped error: exactly {errorCode, errorDescription}, with the status. */
  function isError(res, status, errorCode, mentions) {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['errorCode', 'errorDescription']);
    assert.equal(res.body.errorCode, errorCode);
    assert.ok(res.body.errorDescription.length > 10);
    if (mentions) assert.match(res.body.errorDescription, mentions);
  }

  const newSession = async () => (await call('POST', `${base}/sessions/new`)).body.sessionId;

  /** A werift publisher with `n` sendonly video transceivers: its offer and mids. */
  async function publisher(n = 1) {
    const pc = createPeer({ address: '127.0.0.1' });
    peers.push(pc);
    for (let i = 0; i < n; i++)
      pc.addTransceiver(new MediaStreamTrack({ kind: 'video' }), { direction: 'sendonly' });
    await pc.setLocalDescription(await pc.createOffer());
    return { pc, sdp: pc.localDescription.sdp, mids: pc.getTransceivers().map((t) => t.mid) };
  }

  async function published(trackName = 'cam') {
    const sessionId = await newSession();
    const p = await publisher();
    const res = await call('POST', `${base}/sessions/${sessionId}/tracks/new`, {
      body: {
        sessionDescription: { type: 'offer', sdp: p.sdp },
        tracks: [{ location: 'local', mid: p.mids[0], trackName }],
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await p.pc.setRemoteDescription(res.body.sessionDescription);
    return { sessionId, ...p, res };
  }

  test("the bounds are the wire core's MAX_SDP_LEN and MAX_RTC_TRACKS", async () => {
    const { maxSdpBytes, maxRtcTracks } = (await loadWire()).limits;
    assert.deepEqual(h.sfu.sfu.limits, { maxSdpBytes, maxRtcTracks });
  });

  test('sessions/new answers 201 {sessionId}; GET session lists its tracks', async () => {
    const res = await call('POST', `${base}/sessions/new`);
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body), ['sessionId']);
    assert.match(res.body.sessionId, /^[0-9a-f]{32}$/);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const state = await call('GET', `${base}/sessions/${res.body.sessionId}`);
    assert.equal(state.status, 200);
    assert.deepEqual(state.body, { tracks: [], dataChannels: [] });
  });

  test('publishing answers the offer; pulling offers with requiresImmediateRenegotiation; renegotiate takes the answer', async () => {
    const pub = await published('cam');
    assert.deepEqual(Object.keys(pub.res.body).sort(), [
      'requiresImmediateRenegotiation',
      'sessionDescription',
      'tracks',
    ]);
    assert.equal(pub.res.body.requiresImmediateRenegotiation, false);
    assert.deepEqual(pub.res.body.tracks, [{ trackName: 'cam', mid: pub.mids[0] }]);
    assert.equal(pub.res.body.sessionDescription.type, 'answer');
    assert.match(
      pub.res.body.sessionDescription.sdp,
      /a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 \d+ typ host/,
    );
    assert.doesNotMatch(
      pub.res.body.sessionDescription.sdp,
      /a=candidate:(?!\S+ 1 udp \d+ 127\.0\.0\.1 )/,
      'host candidates on loopback only',
    );

    const viewer = await newSession();
    const pulled = await call('POST', `${base}/sessions/${viewer}/tracks/new`, {
      body: { tracks: [{ location: 'remote', sessionId: pub.sessionId, trackName: 'cam' }] },
    });
    assert.equal(pulled.status, 200);
    assert.equal(pulled.body.requiresImmediateRenegotiation, true);
    assert.equal(pulled.body.sessionDescription.type, 'offer');
    assert.equal(pulled.body.tracks.length, 1);
    const { mid, ...rest } = pulled.body.tracks[0];
    assert.deepEqual(rest, { sessionId: pub.sessionId, trackName: 'cam' });
    assert.ok(pulled.body.sessionDescription.sdp.includes(`a=mid:${mid}`));

    // A second pull while the SFU's offer waits for its answer is refused, as Cloudflare does.
    const early = await call('POST', `${base}/sessions/${viewer}/tracks/new`, {
      body: { tracks: [{ location: 'remote', sessionId: pub.sessionId, trackName: 'cam' }] },
    });
    isError(early, 406, 'invalid_session_description', /renegotiate/);

    const sub = createPeer({ address: '127.0.0.1' });
    peers.push(sub);
    await sub.setRemoteDescription(pulled.body.sessionDescription);
    await sub.setLocalDescription(await sub.createAnswer());
    const reneg = await call('PUT', `${base}/sessions/${viewer}/renegotiate`, {
      body: { sessionDescription: { type: 'answer', sdp: sub.localDescription.sdp } },
    });
    assert.equal(reneg.status, 200);
    assert.deepEqual(reneg.body, {});
    isError(
      await call('PUT', `${base}/sessions/${viewer}/renegotiate`, {
        body: { sessionDescription: { type: 'answer', sdp: sub.localDescription.sdp } },
      }),
      406,
      'invalid_session_description',
      /no SFU offer/,
    );

    const state = await call('GET', `${base}/sessions/${viewer}`);
    assert.deepEqual(state.body, {
      tracks: [
        { location: 'remote', mid, sessionId: pub.sessionId, trackName: 'cam', status: 'active' },
      ],
      dataChannels: [],
    });
    const pubState = await call('GET', `${base}/sessions/${pub.sessionId}`);
    assert.deepEqual(pubState.body.tracks, [
      { location: 'local', mid: pub.mids[0], trackName: 'cam', status: 'active' },
    ]);

    // Close: a forced close succeeds per mid; an unknown or closed mid reports close_track_error.
    const closed = await call('PUT', `${base}/sessions/${viewer}/tracks/close`, {
      body: { tracks: [{ mid }, { mid: '99' }], force: true },
    });
    assert.equal(closed.status, 200);
    assert.deepEqual(closed.body, {
      requiresImmediateRenegotiation: false,
      tracks: [
        { mid },
        {
          mid: '99',
          errorCode: 'close_track_error',
          errorDescription: "Track doesn't exist or was already closed",
        },
      ],
    });
    assert.equal(
      (await call('GET', `${base}/sessions/${viewer}`)).body.tracks[0].status,
      'inactive',
    );
  });

  test('pulling a track nobody publishes reports not_found_track_error on the track, with no offer', async () => {
    const viewer = await newSession();
    const res = await call('POST', `${base}/sessions/${viewer}/tracks/new`, {
      body: {
        tracks: [{ location: 'remote', sessionId: await newSession(), trackName: 'nothing' }],
      },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.requiresImmediateRenegotiation, false);
    assert.equal(res.body.sessionDescription, undefined);
    assert.equal(res.body.tracks[0].errorCode, 'not_found_track_error');
  });

  test('a bad or missing secret is 401 unauthorized; an unknown app or TURN key 404 not_found', async () => {
    isError(
      await call('POST', `${base}/sessions/new`, { token: null }),
      401,
      'unauthorized',
      /Bearer/,
    );
    isError(
      await call('POST', `${base}/sessions/new`, { token: `${secret}x` }),
      401,
      'unauthorized',
    );
    isError(
      await call('POST', `${base}/sessions/new`, { token: secret.slice(1) }),
      401,
      'unauthorized',
    );
    isError(
      await call('POST', `${base}/sessions/new`, { headers: { authorization: `Basic ${secret}` } }),
      401,
      'unauthorized',
    );
    isError(
      await call('POST', `${h.sfu.url}/v1/apps/nope/sessions/new`),
      404,
      'not_found',
      /appId/,
    );
    // The secret of another app is not this app's.
    const other = await startSfu({ port: 0 });
    try {
      isError(
        await call('POST', `${base}/sessions/new`, { token: other.rtcFile.appSecret }),
        401,
        'unauthorized',
      );
    } finally {
      await other.close();
    }
    const turn = `${h.sfu.url}/v1/turn/keys/${h.sfu.rtcFile.turnKeyId}/credentials/generate-ice-servers`;
    isError(
      await call('POST', turn, { body: { ttl: 60 } }),
      401,
      'unauthorized',
      /turnKeyApiToken/,
    );
    isError(
      await call('POST', `${h.sfu.url}/v1/turn/keys/nope/credentials/generate-ice-servers`, {
        body: { ttl: 60 },
        token: h.sfu.rtcFile.turnKeyApiToken,
      }),
      404,
      'not_found',
    );
  });

  test('an unknown, expired or deleted session is 410 session_error on every call', async () => {
    const sid = await newSession();
    assert.equal(await h.sfu.sfu.deleteSession(sid), true);
    for (const id of [sid, '0123456789abcdef0123456789abcdef']) {
      isError(await call('GET', `${base}/sessions/${id}`), 410, 'session_error', /new session/);
      isError(
        await call('POST', `${base}/sessions/${id}/tracks/new`, {
          body: { tracks: [{ location: 'remote', sessionId: 'x', trackName: 'y' }] },
        }),
        410,
        'session_error',
      );
      isError(
        await call('PUT', `${base}/sessions/${id}/renegotiate`, {
          body: { sessionDescription: { type: 'answer', sdp: 'v=0' } },
        }),
        410,
        'session_error',
      );
      isError(
        await call('PUT', `${base}/sessions/${id}/tracks/close`, {
          body: { tracks: [{ mid: '0' }], force: true },
        }),
        410,
        'session_error',
      );
    }
  });

  test('malformed bodies are 400 decoding_error; invalid values 406 invalid_params; nothing changes', async () => {
    const sid = await newSession();
    const tracksNew = `${base}/sessions/${sid}/tracks/new`;
    isError(
      await call('POST', tracksNew, { body: '{"tracks": [' }),
      400,
      'decoding_error',
      /not JSON/,
    );
    isError(
      await call('POST', tracksNew, { body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }),
      400,
      'decoding_error',
      /UTF-8/,
    );
    isError(await call('POST', tracksNew, { body: '[]' }), 400, 'decoding_error', /object/);
    isError(await call('POST', tracksNew, { body: 'null' }), 400, 'decoding_error');
    isError(await call('POST', tracksNew), 400, 'decoding_error');
    isError(
      await call('POST', tracksNew, { body: { tracks: 'cam' } }),
      400,
      'decoding_error',
      /array/,
    );
    isError(await call('POST', tracksNew, { body: { tracks: [7] } }), 400, 'decoding_error');
    isError(await call('POST', tracksNew, { body: {} }), 406, 'invalid_params', /required/);
    isError(
      await call('POST', tracksNew, { body: { tracks: [] } }),
      406,
      'invalid_params',
      /empty/,
    );
    isError(
      await call('POST', tracksNew, { body: { tracks: [{ location: 'elsewhere' }] } }),
      406,
      'invalid_params',
      /local.*remote/,
    );
    const mixed = [
      { location: 'local', mid: '0', trackName: 'a' },
      { location: 'remote', sessionId: sid, trackName: 'b' },
    ];
    isError(
      await call('POST', tracksNew, { body: { tracks: mixed } }),
      406,
      'invalid_params',
      /every entry/,
    );
    isError(
      await call('POST', tracksNew, {
        body: { tracks: [{ location: 'remote', sessionId: sid, trackName: 'x'.repeat(257) }] },
      }),
      406,
      'invalid_params',
      /at most 256/,
    );
    isError(
      await call('POST', tracksNew, {
        body: { tracks: [{ location: 'remote', sessionId: 5, trackName: 'x' }] },
      }),
      400,
      'decoding_error',
    );
    isError(
      await call('POST', tracksNew, {
        body: { tracks: [{ location: 'remote', sessionId: sid, trackName: 'x', simulcast: {} }] },
      }),
      406,
      'invalid_params',
      /not implemented/,
    );

    const p = await publisher(2);
    const offer = { type: 'offer', sdp: p.sdp };
    isError(
      await call('POST', tracksNew, {
        body: {
          sessionDescription: offer,
          tracks: [{ location: 'local', mid: '7', trackName: 'a' }],
        },
      }),
      406,
      'invalid_params',
      /not a media section/,
    );
    isError(
      await call('POST', tracksNew, {
        body: {
          sessionDescription: offer,
          tracks: [
            { location: 'local', mid: p.mids[0], trackName: 'a' },
            { location: 'local', mid: p.mids[1], trackName: 'a' },
          ],
        },
      }),
      406,
      'invalid_params',
      /repeats/,
    );
    isError(
      await call('POST', tracksNew, {
        body: { tracks: [{ location: 'local', mid: '0', trackName: 'a' }] },
      }),
      406,
      'invalid_params',
      /never negotiated/,
    );
    isError(
      await call('POST', tracksNew, {
        body: {
          sessionDescription: { type: 'answer', sdp: p.sdp },
          tracks: [{ location: 'local', mid: p.mids[0], trackName: 'a' }],
        },
      }),
      406,
      'invalid_session_description',
    );
    isError(
      await call('POST', tracksNew, {
        body: {
          sessionDescription: { type: 'offer', sdp: 'hello' },
          tracks: [{ location: 'local', mid: '0', trackName: 'a' }],
        },
      }),
      406,
      'invalid_session_description',
      /not an SDP/,
    );
    const bare =
      'v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\na=rtpmap:96 H264/90000\r\n';
    isError(
      await call('POST', tracksNew, {
        body: {
          sessionDescription: { type: 'offer', sdp: bare },
          tracks: [{ location: 'local', mid: '0', trackName: 'a' }],
        },
      }),
      406,
      'invalid_session_description',
      /ice-ufrag/,
    );
    const truncated = p.sdp.slice(0, p.sdp.indexOf('a=fingerprint'));
    isError(
      await call('POST', tracksNew, {
        body: {
          sessionDescription: { type: 'offer', sdp: truncated },
          tracks: [{ location: 'local', mid: p.mids[0], trackName: 'a' }],
        },
      }),
      406,
      'invalid_session_description',
      /not a complete WebRTC description/,
    );
    const garbled = p.sdp.replace(/^m=video .*$/m, 'm=video nine UDP/TLS/RTP/SAVPF x y z');
    isError(
      await call('POST', tracksNew, {
        body: {
          sessionDescription: { type: 'offer', sdp: garbled },
          tracks: [{ location: 'local', mid: p.mids[0], trackName: 'a' }],
        },
      }),
      406,
      'invalid_session_description',
      /not a video media section/,
    );
    const vp8 = p.sdp.replace(/H264\/90000/gi, 'VP8/90000');
    isError(
      await call('POST', tracksNew, {
        body: {
          sessionDescription: { type: 'offer', sdp: vp8 },
          tracks: [{ location: 'local', mid: p.mids[0], trackName: 'a' }],
        },
      }),
      406,
      'invalid_session_description',
      /H\.264/,
    );
    const receiving = p.sdp.replace('a=sendonly', 'a=recvonly');
    isError(
      await call('POST', tracksNew, {
        body: {
          sessionDescription: { type: 'offer', sdp: receiving },
          tracks: [{ location: 'local', mid: p.mids[0], trackName: 'a' }],
        },
      }),
      406,
      'invalid_params',
      /recvonly/,
    );
    isError(
      await call('PUT', `${base}/sessions/${sid}/tracks/close`, {
        body: { tracks: [{ mid: '0' }] },
      }),
      406,
      'invalid_params',
      /force/,
    );
    isError(
      await call('PUT', `${base}/sessions/${sid}/tracks/close`, {
        body: { tracks: [{ mid: '0' }], force: 'yes' },
      }),
      400,
      'decoding_error',
    );
    isError(
      await call('PUT', `${base}/sessions/${sid}/tracks/close`, {
        body: { tracks: [{ mid: '0' }], force: false },
      }),
      406,
      'invalid_params',
      /sessionDescription/,
    );
    isError(
      await call('PUT', `${base}/sessions/${sid}/renegotiate`, {
        body: { sessionDescription: { type: 'offer', sdp: p.sdp } },
      }),
      406,
      'invalid_session_description',
    );
    isError(await call('GET', `${base}/sessions/${sid}/tracks/new`), 405, 'invalid_params', /POST/);
    isError(await call('POST', `${base}/sessions/${sid}/nothing`), 404, 'not_found');
    isError(await call('POST', `${h.sfu.url}/v1/apps/%E0%A4%A/sessions/new`), 404, 'not_found');

    // None of that touched the session: the same offer publishes now.
    const good = await call('POST', tracksNew, {
      body: {
        sessionDescription: offer,
        tracks: [{ location: 'local', mid: p.mids[0], trackName: 'a' }],
      },
    });
    assert.equal(good.status, 200, JSON.stringify(good.body));
    assert.deepEqual((await call('GET', `${base}/sessions/${sid}`)).body.tracks, [
      { location: 'local', mid: p.mids[0], trackName: 'a', status: 'active' },
    ]);
  });

  test('more than MAX_RTC_TRACKS tracks, an SDP over MAX_SDP_LEN or a body over the bound is refused before any work', async () => {
    const { maxSdpBytes, maxRtcTracks } = h.sfu.sfu.limits;
    const sid = await newSession();
    const tracksNew = `${base}/sessions/${sid}/tracks/new`;
    const many = Array.from({ length: maxRtcTracks + 1 }, (_, i) => ({
      location: 'remote',
      sessionId: sid,
      trackName: `t${i}`,
    }));
    isError(
      await call('POST', tracksNew, { body: { tracks: many } }),
      406,
      'invalid_params',
      new RegExp(`at most ${maxRtcTracks} tracks`),
    );
    isError(
      await call('PUT', `${base}/sessions/${sid}/tracks/close`, {
        body: { tracks: many.map((_, i) => ({ mid: String(i) })), force: true },
      }),
      406,
      'invalid_params',
    );
    // Exactly MAX_RTC_TRACKS is fine (each reported missing).
    const eight = await call('POST', tracksNew, { body: { tracks: many.slice(0, maxRtcTracks) } });
    assert.equal(eight.status, 200);
    assert.equal(eight.body.tracks.length, maxRtcTracks);

    const p = await publisher();
    const padded = (bytes) => `${p.sdp}${'a=x-pad:'.padEnd(bytes - p.sdp.length - 2, 'p')}\r\n`;
    const big = padded(maxSdpBytes + 1);
    assert.equal(Buffer.byteLength(big), maxSdpBytes + 1);
    isError(
      await call('POST', tracksNew, {
        body: {
          sessionDescription: { type: 'offer', sdp: big },
          tracks: [{ location: 'local', mid: p.mids[0], trackName: 'a' }],
        },
      }),
      413,
      'payload_too_large',
      new RegExp(`at most ${maxSdpBytes} bytes`),
    );
    isError(
      await call('POST', `${base}/sessions/new`, {
        body: { sessionDescription: { type: 'offer', sdp: big } },
      }),
      413,
      'payload_too_large',
    );
    assert.equal(
      (await call('GET', `${base}/sessions/${sid}`)).body.tracks.length,
      0,
      'nothing published',
    );
    // An SDP of exactly MAX_SDP_LEN bytes is accepted.
    const exact = await call('POST', tracksNew, {
      body: {
        sessionDescription: { type: 'offer', sdp: padded(maxSdpBytes) },
        tracks: [{ location: 'local', mid: p.mids[0], trackName: 'a' }],
      },
    });
    assert.equal(exact.status, 200, JSON.stringify(exact.body));

    // A body over the bound: refused from its Content-Length, and when it streams without one,
    // once the bound is passed; the connection is closed rather than read to its end.
    const limit = bodyLimit(h.sfu.sfu.limits);
    isError(
      await call('POST', tracksNew, { body: Buffer.alloc(limit + 1, 0x20) }),
      413,
      'payload_too_large',
    );
    const streamed = await new Promise((resolve, reject) => {
      const url = new URL(tracksNew);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () =>
            resolve({
              status: res.statusCode,
              body: JSON.parse(text),
              connection: res.headers.connection,
            }),
          );
        },
      );
      req.on('error', reject);
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 4 * limit && req.write(chunk)) sent += chunk.length;
        if (sent < 4 * limit) req.once('drain', pump);
        else req.end();
      };
      pump();
    });
    isError(streamed, 413, 'payload_too_large');
    assert.equal(streamed.connection, 'close');
  });

  test('TURN credentials: 201 {iceServers}, ttl bounded to 48 hours; with a TURN server configured, REST-scheme credentials', async () => {
    const turn = `${h.sfu.url}/v1/turn/keys/${h.sfu.rtcFile.turnKeyId}/credentials/generate-ice-servers`;
    const token = h.sfu.rtcFile.turnKeyApiToken;
    const res = await call('POST', turn, { body: { ttl: 86400 }, token });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { iceServers: [] });
    isError(await call('POST', turn, { body: {}, token }), 406, 'invalid_params', /ttl/);
    for (const ttl of [0, -1, 1.5, 48 * 3600 + 1])
      isError(await call('POST', turn, { body: { ttl }, token }), 406, 'invalid_params');
    isError(await call('POST', turn, { body: { ttl: '60' }, token }), 400, 'decoding_error');

    const withTurn = await startSfu({
      turnUrls: ['turn:127.0.0.1:3478?transport=udp'],
      turnSecret: 'shared-with-coturn',
    });
    try {
      const t0 = Math.floor(Date.now() / 1000);
      const r = await call(
        'POST',
        `${withTurn.url}/v1/turn/keys/${withTurn.rtcFile.turnKeyId}/credentials/generate-ice-servers`,
        {
          body: { ttl: 3600 },
          token: withTurn.rtcFile.turnKeyApiToken,
        },
      );
      assert.equal(r.status, 201);
      const [server] = r.body.iceServers;
      assert.deepEqual(server.urls, ['turn:127.0.0.1:3478?transport=udp']);
      const [expiry, keyId] = server.username.split(':');
      assert.equal(keyId, withTurn.rtcFile.turnKeyId);
      assert.ok(
        Number(expiry) >= t0 + 3600 && Number(expiry) <= t0 + 3602,
        'the username carries its expiry',
      );
      assert.equal(
        server.credential,
        createHmac('sha1', 'shared-with-coturn').update(server.username).digest('base64'),
      );
    } finally {
      await withTurn.close();
    }
  });

  test('injected failures answer with the status and Cloudflare shape asked for, then stop', async () => {
    const pub = await published('cam2');
    const viewer = await newSession();
    const admin = `${h.sfu.url}/__admin`;
    isError(
      await call('POST', `${admin}/fail`, { body: { op: 'tracks/new' }, token: 'wrong' }),
      401,
      'unauthorized',
    );
    isError(
      await call('POST', `${admin}/fail`, { body: { op: 'everything' } }),
      406,
      'invalid_params',
      /one of/,
    );
    const armed = await call('POST', `${admin}/fail`, {
      body: { op: 'tracks/new', location: 'remote', count: 2, status: 503 },
    });
    assert.equal(armed.status, 200);
    const pullBody = {
      tracks: [{ location: 'remote', sessionId: pub.sessionId, trackName: 'cam2' }],
    };
    for (let i = 0; i < 2; i++)
      isError(
        await call('POST', `${base}/sessions/${viewer}/tracks/new`, { body: pullBody }),
        503,
        'temporarily_unavailable_error',
        /injected/,
      );
    // A publish is local: the remote-only fault did not touch it.
    assert.equal((await published('cam3')).res.status, 200);
    const third = await call('POST', `${base}/sessions/${viewer}/tracks/new`, { body: pullBody });
    assert.equal(third.status, 200);
    assert.equal(third.body.requiresImmediateRenegotiation, true);

    await call('POST', `${admin}/fail`, {
      body: { op: 'sessions/new', status: 500, errorCode: 'internal_error' },
    });
    isError(await call('POST', `${base}/sessions/new`), 500, 'internal_error');
    assert.equal((await call('POST', `${base}/sessions/new`)).status, 201);
    await call('POST', `${admin}/fail`, { body: { op: 'turn', status: 503 } });
    isError(
      await call(
        'POST',
        `${h.sfu.url}/v1/turn/keys/${h.sfu.rtcFile.turnKeyId}/credentials/generate-ice-servers`,
        { body: { ttl: 60 }, token: h.sfu.rtcFile.turnKeyApiToken },
      ),
      503,
      'temporarily_unavailable_error',
    );

    // Deleting a session (rtc_session_gone's cause): 410 from then on; its tracks can no longer be pulled.
    assert.deepEqual((await call('POST', `${admin}/sessions/${pub.sessionId}/delete`)).body, {
      deleted: pub.sessionId,
    });
    isError(await call('POST', `${admin}/sessions/${pub.sessionId}/delete`), 410, 'session_error');
    isError(await call('GET', `${base}/sessions/${pub.sessionId}`), 410, 'session_error');
    const stats = await call('GET', `${admin}/stats`);
    assert.ok(stats.body.sessions.every((s) => s.sessionId !== pub.sessionId));
    assert.deepEqual(stats.body.faults, []);
  });

  test('the Realtime client gives the same answers as values', async () => {
    const c = h.client;
    const s = ok(await c.newSession(), 'newSession');
    assert.deepEqual(ok(await c.getSession(s.sessionId), 'getSession'), {
      tracks: [],
      dataChannels: [],
    });
    const gone = await c.getSession('0123456789abcdef0123456789abcdef');
    assert.deepEqual(
      { ok: gone.ok, status: gone.status, errorCode: gone.errorCode },
      { ok: false, status: 410, errorCode: 'session_error' },
    );
    assert.match(gone.errorDescription, /new session/);
    assert.deepEqual(gone.body, {
      errorCode: gone.errorCode,
      errorDescription: gone.errorDescription,
    });
    assert.deepEqual(ok(await c.generateIceServers({ ttl: 60 }), 'turn'), { iceServers: [] });
    const viaCall = await c.call({
      op: 'closeTracks',
      sessionId: s.sessionId,
      body: { tracks: [{ mid: '0' }], force: true },
    });
    assert.equal(viaCall.ok, true);
    assert.equal(viaCall.body.tracks[0].errorCode, 'close_track_error');
  });
}
