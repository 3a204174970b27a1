// Names tsc cannot see when it checks web/ (`make lint`), declared loosely on purpose: the Deno
// host files run under Deno (whose own types clash with Node's and the DOM's in one program), the
// Worker under workerd, and esbuild bundles CSS and WASM imports.
declare var Deno: any;
declare const WebSocketPair: { new (): { 0: WebSocket; 1: WebSocket } };
declare module '*.css';
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
declare module 'node:sqlite' {
  export const DatabaseSync: any;
}
// workerd's WebSocket additions (the server end of a WebSocketPair, the upgrade response, and
// the attachment a hibernatable socket keeps across a Durable Object's wake-ups): optional, since
// no other runtime has them.
interface WebSocket {
  accept?(): void;
  serializeAttachment?(value: unknown): void;
  deserializeAttachment?(): any;
}
interface ResponseInit {
  webSocket?: WebSocket | null;
}
// The running cockpit, for the end-to-end tests and the browser console (web/cockpit/src/main.js).
interface Window {
  tetherCockpit?: Awaited<ReturnType<typeof import('../cockpit/src/app.js').startCockpit>>;
}
// Deno's (and Node 24's) entry-point test; the Deno hosts (web/host/) start their server with it.
interface ImportMeta {
  readonly main?: boolean;
}
