// Compiled (never run) by tests/node/bus.test.mjs: uses `tether/bus` as a consumer would.
// The @ts-expect-error lines prove the declarations are precise.
import { createBus, loadBus } from '@tether-rt/tether/bus';
import type {
  Bus,
  BusApi,
  Envelope,
  PeerTransport,
  SendResult,
  WordsErrorCode,
} from '@tether-rt/tether/bus';

export async function useBus(transport: PeerTransport): Promise<void> {
  const api: BusApi = await loadBus();
  const parsed = api.parseEnvelope('{}');
  if (!parsed.ok) {
    const field: string = parsed.field;
    void field;
  } else {
    const e: Envelope = parsed.envelope;
    const to: string | null = e.to;
    void to;
  }
  const bus: Bus = api.createBus({
    self: { streamId: 's', role: 'agent', name: 'n', instanceId: 'i' },
    transport,
    transportId: 'uuid-1',
    acceptHandoffs: true,
    message(envelope, info) {
      const replayed: boolean = info.replayed;
      void replayed;
      void envelope.payload;
    },
    handoff(h) {
      bus.confirmHandoff(h.key);
    },
  });
  const r: SendResult = bus.send('peer-stream', 'chat', { text: 'hi' }, { topic: null });
  if (r.ok) {
    const status: 'sent' | 'queued' = r.status;
    void status;
  }
  // @ts-expect-error types are a closed set
  bus.send('peer-stream', 'bogus', {});
  const h = bus.handoff('peer-stream', 'do the thing', { ttlMs: 60_000 });
  if (h.ok) {
    const next: number | null = h.handoff.nextAttemptMs;
    void next;
  } else if (h.code === 'handoff_unsupported') {
    // @ts-expect-error error codes are a closed set
    if (h.code === 'nope') return;
  }
  bus.requestHistory('peer-stream', 500);
  const reachable: boolean = bus.isOpen('peer-stream');
  void reachable;
  const other: Bus = await createBus({
    self: { streamId: 't', role: 'r', name: 'n', instanceId: 'j' },
    transport,
  });
  other.close();
  const rx = api.createFileReceiver({ maxFileBytes: api.limits.fileBrowserMaxBytes });
  const c = rx.chunk('peer-stream', { transferId: 'x', index: 0, totalChunks: 1, data: '' });
  if (c.ok) {
    const bytes: Uint8Array = c.data;
    void bytes;
  }
  rx.dispose();
  // Commands are answered in the public shape only.
  const cmd = parsed.ok ? parsed.envelope : null;
  if (cmd) {
    bus.respond(cmd, { result: { state: 'idle' } });
    bus.respond(cmd, { error: 'not now' });
    // @ts-expect-error an answer is {result} or {error}
    bus.respond(cmd, { output: 'done' });
    const share = api.parseShareCommand(cmd);
    if (share && share.ok) {
      const which: 'shares' | 'list-files' | 'get-file' = share.command;
      void which;
    }
  }
  api.shareCommandPayload({ command: 'get-file', share: 'docs', path: 'a.md' });
  // @ts-expect-error the share commands are a closed set
  api.shareCommandPayload({ command: 'rm', share: 'docs' });
  const listed = api.listFilesResult('docs', '', [{ name: 'a.md', dir: false, size: 1 }], 0);
  const kind: 'dir' | 'file' | undefined = listed.entries[0]?.type;
  const ok: boolean = api.validShareName('docs') && api.directSendTypes.includes('chat');
  void [kind, ok, api.limits.shareLevelMaxEntries];
  // @ts-expect-error the types sent by hand are the core's, read only
  api.directSendTypes.push('announce');
  const typed = api.typedPayload('command', 'deploy', '{"env":"prod"}');
  if (!typed.ok) {
    const code: WordsErrorCode = typed.code;
    void [code, typed.count, typed.bound, typed.json];
  }
  api.commandResponse('r1', { resultJson: '1' });
  api.commandResponse('r1', { error: 'no disk' });
  // @ts-expect-error args cross as JSON text
  api.typedPayload('command', 'deploy', { env: 'prod' });
  const tid: string = api.fileAckRefusal({ transferId: 't' }, 'no').transferId;
  void tid;
  bus.close();
}
