// One run of the Realtime client (web/sfu/client.js) against an SFU, the same in every runtime:
// tests/e2e/sfu-client.test.mjs runs it in Node, Deno (tests/e2e/deno/sfu_client.js) and workerd
// (tests/e2e/workerd/sfu_client_worker.js) and compares the reports. The credentials arrive as
// the rtc file's text and go through its parser, as a relay host's would.
import { createRealtimeClient } from '../../../web/sfu/client.js';
import { parseRtcFile } from '../../../web/sfu/rtc-file.js';

const pick = (r) => ({ ok: r.ok, status: r.status, ...(r.ok ? {} : { errorCode: r.errorCode }) });

export async function exercise(rtcText) {
  const parsed = parseRtcFile(rtcText);
  if (!parsed.ok) return { parseError: parsed.error };
  const client = createRealtimeClient(parsed.rtc);
  const report = {};
  const created = await client.newSession();
  report.newSession = { ...pick(created), keys: Object.keys(created.body ?? {}) };
  const id = created.body?.sessionId;
  const state = await client.getSession(id);
  report.getSession = { ...pick(state), body: state.body };
  const closed = await client.call({
    op: 'closeTracks',
    sessionId: id,
    body: { tracks: [{ mid: '5' }], force: true },
  });
  report.closeUnknownMid = { ...pick(closed), trackError: closed.body?.tracks?.[0]?.errorCode };
  const pulled = await client.newTracks(id, {
    tracks: [{ location: 'remote', sessionId: id, trackName: 'none' }],
  });
  report.pullMissing = { ...pick(pulled), trackError: pulled.body?.tracks?.[0]?.errorCode };
  report.turn = { ...pick(await client.generateIceServers({ ttl: 600 })) };
  report.gone = pick(await client.getSession('0123456789abcdef0123456789abcdef'));
  report.badTtl = pick(await client.generateIceServers({ ttl: 0 }));
  const wrong = createRealtimeClient({ ...parsed.rtc, appSecret: 'not-the-secret' });
  report.wrongSecret = pick(await wrong.newSession());
  report.unknownOp = pick(await client.call({ op: 'dance' }));
  const nowhere = createRealtimeClient({ ...parsed.rtc, baseUrl: 'http://127.0.0.1:9' });
  report.unreachable = pick(await nowhere.getSession(id));
  return report;
}
