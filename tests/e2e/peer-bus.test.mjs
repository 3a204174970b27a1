// The agent message bus between three Chromium pages and one Node agent over real RTCDataChannels
// (agent-bus-and-swarm.md § Delivery semantics, § History; issue #8 § Tests: browser pages).
// Pages run tether/bus over the WebRTC transport (tests/e2e/pages/peer-bus.js); the agent is a real
// `tether agent` sidecar with `--transport webrtc`. Everyone signals through the loopback room
// relay. Runs itself inside a private network namespace (tests/e2e/lib/netns.mjs).
//
// The steps share one room and run in order: each one's messages are part of the next one's
// history.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { inNetns } from './lib/netns.mjs';

if (inNetns(import.meta.url)) {
  const { api, newPeerContext, openPeer, startPeerHarness, stopPeerHarness } =
    await import('./lib/peer_harness.mjs');
  const { Harness, waitFor } = await import('../node/lib/agent-harness.mjs');

  const ROOM = 'lab'; // the agent harness joins this room
  const cleanups = [];
  let h;
  let agents;
  let agentDir;
  const pages = {};
  const agentInbox = []; // every envelope the agent has read so far

  // Resolves once `page` has received `n` chat messages matching `filter` (the test's own
  // timeout bounds the wait).
  const untilReceived = (page, filter, n) =>
    page.waitForFunction(
      ([f, k]) =>
        window.peerApi.received().filter((m) => Object.entries(f).every(([key, v]) => m[key] === v))
          .length >= k,
      [filter, n],
      { timeout: 0, polling: 50 },
    );
  const texts = async (page, filter) =>
    (await api(page, 'received'))
      .filter((m) => Object.entries(filter).every(([k, v]) => m[k] === v))
      .map((m) => m.text);
  const agentRead = async () => {
    const r = await agents.ok(agentDir, ['read']);
    agentInbox.push(...r.messages.map((m) => m.envelope));
    return agentInbox;
  };
  const openPage = async (id) => {
    const page = await openPeer(h, await newPeerContext(h), { id, room: ROOM, kind: 'peer-bus' });
    pages[id] = page;
    return page;
  };
  const allOpen = (page, ids) =>
    page.waitForFunction((want) => want.every((p) => window.peerApi.openPeers().includes(p)), ids, {
      timeout: 0,
      polling: 50,
    });
  const agentSees = (ids) =>
    waitFor(
      `the agent's channels to ${ids.join(', ')}`,
      async () => {
        const { peers } = await agents.ok(agentDir, ['peers']);
        return ids.every((id) => peers.some((p) => p.id === id && p.open));
      },
      { timeoutMs: 60_000, everyMs: 200 },
    );

  before(async () => {
    h = await startPeerHarness();
    agents = new Harness({ after: (fn) => cleanups.push(fn) });
    agentDir = agents.dir('agent');
  });
  after(async () => {
    for (const fn of cleanups) await fn();
    await stopPeerHarness(h ?? {});
  });

  test(
    'three pages and an agent open data channels to one another',
    { timeout: 180_000 },
    async () => {
      for (const id of ['pa', 'pb', 'pc']) await openPage(id);
      await agents.join(agentDir, 'agent', h.rooms.url, [
        '--transport',
        'webrtc',
        '--webrtc-bind',
        '127.0.0.1',
      ]);
      for (const id of ['pa', 'pb', 'pc'])
        await allOpen(
          pages[id],
          ['pa', 'pb', 'pc', 'agent'].filter((p) => p !== id),
        );
      await agentSees(['pa', 'pb', 'pc']);
    },
  );

  test(
    'direct messages reach their recipient, page to page and page to agent',
    { timeout: 120_000 },
    async () => {
      const ab = await api(pages.pa, 'send', 'pb', 'a to b');
      assert.equal(ab.ok, true, JSON.stringify(ab));
      assert.equal(ab.status, 'sent');
      const toAgent = await api(pages.pb, 'send', 'agent', 'b to agent');
      assert.equal(toAgent.status, 'sent');
      const fromAgent = await agents.ok(agentDir, ['send', 'pa', 'agent', 'to', 'a']);
      assert.equal(fromAgent.state, 'sent');

      await untilReceived(pages.pb, { from: 'pa', text: 'a to b' }, 1);
      const [m] = (await api(pages.pb, 'received')).filter((x) => x.text === 'a to b');
      assert.deepEqual([m.id, m.to, m.replayed], [ab.id, 'pb', false]);
      await untilReceived(pages.pa, { from: 'agent', text: 'agent to a' }, 1);
      assert.equal(
        (await api(pages.pa, 'received')).find((x) => x.from === 'agent').id,
        fromAgent.id,
      );
      await waitFor("the agent has b's message", async () =>
        (await agentRead()).some((e) => e.id === toAgent.id),
      );
      const e = agentInbox.find((x) => x.id === toAgent.id);
      assert.deepEqual([e.from.streamId, e.to, e.payload.text], ['pb', 'agent', 'b to agent']);
      // The page shows it too.
      assert.ok((await api(pages.pb, 'shown')).includes('pa → pb: a to b'));
    },
  );

  test('broadcasts reach every page and the agent', { timeout: 120_000 }, async () => {
    const c = await api(pages.pc, 'broadcast', 'c to all');
    assert.deepEqual([c.ok, c.sentTo, c.rejectedBy], [true, ['agent', 'pa', 'pb'], []]);
    const g = await agents.ok(agentDir, ['broadcast', 'agent', 'to', 'all']);
    assert.deepEqual([...g.delivered].sort(), ['pa', 'pb', 'pc']);
    for (const id of ['pa', 'pb']) {
      await untilReceived(pages[id], { from: 'pc', text: 'c to all' }, 1);
      await untilReceived(pages[id], { from: 'agent', text: 'agent to all' }, 1);
    }
    await untilReceived(pages.pc, { from: 'agent', text: 'agent to all' }, 1);
    await waitFor("the agent has c's broadcast", async () =>
      (await agentRead()).some((x) => x.id === c.id && x.to === null),
    );
  });

  test(
    'sends the transport refuses are queued, not lost, and leave in order',
    { timeout: 120_000 },
    async () => {
      // The lane to pb refuses everything, as a full or not-yet-open lane does.
      await api(pages.pa, 'holdSends', true);
      const held = [
        await api(pages.pa, 'send', 'pb', 'held 1'),
        await api(pages.pa, 'send', 'pb', 'held 2'),
      ];
      for (const r of held) assert.deepEqual([r.ok, r.status], [true, 'queued']);
      assert.equal(await api(pages.pa, 'queued', 'pb'), 2);
      assert.deepEqual(await texts(pages.pb, { from: 'pa' }), ['a to b']); // nothing left pa
      await api(pages.pa, 'holdSends', false);
      // A new ordinary send retries the backlog first, then goes behind it.
      const next = await api(pages.pa, 'send', 'pb', 'after the hold');
      assert.equal(next.status, 'sent');
      assert.equal(await api(pages.pa, 'queued', 'pb'), 0);
      await untilReceived(pages.pb, { from: 'pa' }, 4);
      const got = (await api(pages.pb, 'received')).filter((x) => x.from === 'pa');
      assert.deepEqual(
        got.map((x) => [x.text, x.id]),
        [
          ['a to b', got[0].id],
          ['held 1', held[0].id],
          ['held 2', held[1].id],
          ['after the hold', next.id],
        ],
        'same ids, same order, each once',
      );
    },
  );

  test(
    'a page that is offline while messages are sent gets them in order when it returns',
    { timeout: 180_000 },
    async () => {
      await pages.pc.close(); // the tab is gone: no goodbye
      await pages.pa.waitForFunction(() => !window.peerApi.openPeers().includes('pc'), null, {
        timeout: 0,
        polling: 50,
      });
      await waitFor(
        'the agent to see pc leave',
        async () => {
          const { peers } = await agents.ok(agentDir, ['peers']);
          return !peers.some((p) => p.id === 'pc' && p.open);
        },
        { timeoutMs: 60_000, everyMs: 200 },
      );
      const sent = [];
      for (const text of ['offline 1', 'offline 2', 'offline 3']) {
        const r = await api(pages.pa, 'send', 'pc', text);
        assert.deepEqual([r.ok, r.status], [true, 'queued']);
        sent.push(r.id);
      }
      const fromAgent = await agents.ok(agentDir, ['send', 'pc', 'agent', 'while', 'away']);
      assert.equal(fromAgent.state, 'queued');
      const missed = await api(pages.pb, 'broadcast', 'while c was away');
      assert.equal(missed.ok, true);

      const pc = await openPage('pc'); // a fresh page: nothing of the old one survives
      await allOpen(pc, ['pa', 'pb', 'agent']);
      await untilReceived(pc, { from: 'pa' }, 3);
      const got = (await api(pc, 'received')).filter((x) => x.from === 'pa');
      assert.deepEqual(
        got.map((x) => x.id),
        sent,
        'in the order sent, each once',
      );
      assert.deepEqual(
        got.map((x) => x.text),
        ['offline 1', 'offline 2', 'offline 3'],
      );
      assert.ok(got.every((x) => !x.replayed));
      await untilReceived(pc, { from: 'agent', text: 'agent while away' }, 1);
      assert.equal((await api(pc, 'received')).find((x) => x.from === 'agent').id, fromAgent.id);
    },
  );

  test(
    "history replays what the page missed and never other peers' directs",
    { timeout: 120_000 },
    async () => {
      const r = await api(pages.pc, 'requestHistory', 'pa', 50);
      assert.deepEqual([r.ok, r.status], [true, 'sent']);
      await untilReceived(pages.pc, { replayed: true }, 2);
      // pa's ring holds, in order: agent to a (pa's own direct, not pc's), a to b, c to all (pc's
      // own words), agent to all, held 1/2, after the hold (pb's), offline 1..3 (already
      // delivered: seen), while c was away. Only what pc may see and has not seen is replayed.
      const replayed = (await api(pages.pc, 'received')).filter((x) => x.replayed);
      assert.deepEqual(
        replayed.map((x) => [x.from, x.to, x.text]),
        [
          ['agent', null, 'agent to all'],
          ['pb', null, 'while c was away'],
        ],
      );
      // The agent asks too: nothing addressed to the pages leaks to it.
      const ah = await agents.ok(agentDir, ['history', 'pa', '--count', '200']);
      for (const e of ah.replayed) assert.ok(e.to === null || e.to === 'agent', JSON.stringify(e));
    },
  );

  test('a hostile page is refused and the room keeps working', { timeout: 120_000 }, async () => {
    const forged = JSON.stringify({
      v: 1,
      id: 'forged-1',
      type: 'chat',
      from: { streamId: 'pc', role: 'human', name: 'not really pc', instanceId: 'x' },
      to: 'pa',
      topic: null,
      ts: Date.now(),
      payload: { text: 'i am pc' },
    });
    // An identity far over its bound (the transport's SCTP limit stops whole-message floods first).
    const overlong = forged.replace('"streamId":"pc"', `"streamId":"${'p'.repeat(5000)}"`);
    for (const junk of [forged, '{"v":1,', overlong, '{"v":2,"type":"chat"}'])
      assert.equal(await api(pages.pb, 'sendRaw', 'pa', junk), true);
    await pages.pa.waitForFunction(() => window.peerApi.rejected().length >= 4, null, {
      timeout: 0,
      polling: 50,
    });
    const rejected = await api(pages.pa, 'rejected');
    assert.ok(
      rejected.every((x) => x.peer === 'pb'),
      JSON.stringify(rejected),
    );
    assert.equal((await texts(pages.pa, { text: 'i am pc' })).length, 0);
    const ok = await api(pages.pb, 'send', 'pa', 'still talking');
    assert.equal(ok.status, 'sent');
    await untilReceived(pages.pa, { from: 'pb', text: 'still talking' }, 1);
    assert.deepEqual(await api(pages.pa, 'openPeers'), ['agent', 'pb', 'pc']);
  });

  test('no page ever received a direct message addressed to someone else', async () => {
    for (const [id, page] of Object.entries(pages)) {
      if (page.isClosed()) continue;
      for (const m of await api(page, 'received'))
        assert.ok(m.to === null || m.to === id, `${id} got ${JSON.stringify(m)}`);
      assert.deepEqual(page.problems, []);
    }
    for (const e of await agentRead()) assert.ok(e.to === null || e.to === 'agent');
  });
}
