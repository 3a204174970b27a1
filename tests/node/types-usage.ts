// Compiled (never run) by tests/node/types.test.mjs: uses every export of `tether/wire` as a
// consumer would. The @ts-expect-error lines prove the declarations are precise: if a type
// loosened to `any`, the directive would be unused and tsc would fail.
import { createWire, loadWire } from '@tether-rt/tether/wire';
import type {
  DataFrameHeader,
  ErrorCode,
  FrameErrorReason,
  Manifest,
  Message,
  TetherModule,
  Wire,
} from '@tether-rt/tether/wire';

export async function useWire(wasmModule: WebAssembly.Module, mod: TetherModule): Promise<void> {
  const wire: Wire = await loadWire();
  const inWorker: Wire = await loadWire({ wasmModule });
  const wrapped: Wire = createWire(mod);
  void inWorker;
  void wrapped;

  const header: DataFrameHeader = {
    ch: 'odom',
    seq: 1,
    ts: 1.5,
    delivery: 'latest',
    meta: { w: 1 },
  };
  const encoded = wire.encodeDataFrame(header, new Uint8Array([1, 2]));
  if (!encoded.ok) {
    const reason: FrameErrorReason = encoded.error.reason;
    const code: ErrorCode = encoded.error.code;
    void [reason, code];
    return;
  }
  const decoded = wire.decodeDataFrame(encoded.bytes);
  if (decoded.ok) {
    const seq: number = decoded.header.seq;
    const payload: Uint8Array = decoded.payload;
    void [seq, payload];
  } else {
    // @ts-expect-error a failed decode has no header
    void decoded.header;
  }
  // @ts-expect-error delivery is 'reliable' | 'latest'
  wire.encodeDataFrame({ ch: 'odom', seq: 1, ts: 1, delivery: 'sometimes' });

  const frames = new wire.DataFrameStream();
  const pushed = frames.push(encoded.bytes);
  for (const f of pushed.frames) void f.header.ch;
  const cut: FrameErrorReason | undefined = frames.finish()?.reason;
  const buffered: number = frames.buffered;
  frames.close();
  void [cut, buffered];

  const control = new wire.ControlStream('viewer');
  // @ts-expect-error a control stream needs its sender
  new wire.ControlStream();
  for (const m of control.push(new Uint8Array(0)).messages) {
    if (m.ok) {
      const msg: Message = m.message;
      void msg.t;
    } else {
      void m.drop.reason;
    }
  }
  control.close();

  const parsed = wire.parseMessage({ t: 'ping', seq: 1 }, 'viewer');
  if (parsed.ok) void parsed.json;
  // @ts-expect-error senders are 'robot' | 'viewer' | 'relay'
  wire.parseMessage('{}', 'robotx');
  const text = wire.encodeMessage('{"t":"ping"}', 'robot');
  if (text.ok) void text.json.length;
  const datagram = wire.encodeDatagram({ t: 'pong' }, 'relay');
  if (datagram.ok) void datagram.bytes.byteLength;
  const ctl = wire.encodeControlFrame({ t: 'subs' }, 'relay');
  if (!ctl.ok) void ('drop' in ctl ? ctl.drop.field : ctl.error.message);

  const hello: ErrorCode | null = wire.checkHello({ t: 'hello' }, 'robot');
  void hello;

  const manifest = wire.validateManifest({ version: 1, channels: [] });
  if (manifest.ok) {
    const normal: Manifest = manifest.manifest;
    void normal.channels.map((c) => c.publish && c.dir === 'tx');
  } else {
    for (const e of manifest.errors) void `${e.code} at ${e.path}`;
  }

  const terminal: boolean = wire.errorCodes.auth_failed.terminal;
  const max: number = wire.limits.maxFrameBytes;
  void [terminal, max];
}
