// The inbox as an MCP resource (docs/mcp.md § The inbox resource): `tether://inbox` reads the
// unread mail of the state dir without consuming it (as `read --peek`), and a client that
// subscribes is told (notifications/resources/updated) whenever the unread set changes: new mail,
// or mail read by anyone. The sidecar writes inbox/ (web/agent/sidecar/mailbox.js); this only
// watches the folder, so it works whether or not a sidecar runs now.
import fs from 'node:fs';
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { READ_TAKE_MAX } from '../commands/read.js';
import { ensureDirs, listRecords, readInbox } from '../store.js';

export const INBOX_URI = 'tether://inbox';

// Renames arrive in bursts (temp file, then rename; a read claims many): one check per burst.
const SETTLE_MS = 25;

/** Unread mail, oldest first, as the resource's JSON: nothing is consumed. */
export function peekInbox(dir) {
  const r = readInbox(ensureDirs(dir), { take: READ_TAKE_MAX, peek: true });
  return { unread: r.messages.length, messages: r.messages, skippedMalformed: r.skipped };
}

/**
 * Registers the resource and its subscriptions on `mcp` (before it connects).
 * @param {import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} mcp
 * @param {{dir: string, log: (s: string) => void}} o
 * @returns {{close(): void}}
 */
export function registerInbox(mcp, { dir, log }) {
  mcp.registerResource(
    'inbox',
    INBOX_URI,
    {
      title: 'Unread mail',
      description: `The unread messages in this agent's inbox, oldest first (at most ${READ_TAKE_MAX}), as JSON {unread, messages: [{file, receivedAt, envelope}]}. Reading it consumes nothing; the read tool does. Subscribe to hear of new mail.`,
      mimeType: 'application/json',
    },
    async (uri) => ({
      contents: [
        { uri: uri.href, mimeType: 'application/json', text: JSON.stringify(peekInbox(dir)) },
      ],
    }),
  );
  const watch = new InboxWatch({
    dir,
    log,
    changed: () =>
      mcp.server
        .sendResourceUpdated({ uri: INBOX_URI })
        .catch((err) => log(`could not notify the client of new mail: ${err.message}`)),
  });
  mcp.server.registerCapabilities({ resources: { subscribe: true } });
  const only = (uri) => {
    if (uri !== INBOX_URI)
      throw new McpError(
        ErrorCode.InvalidParams,
        `only ${INBOX_URI} can be subscribed to (got '${uri}'); resources/list names it`,
      );
  };
  mcp.server.setRequestHandler(SubscribeRequestSchema, (req) => {
    only(req.params.uri);
    watch.start();
    return {};
  });
  mcp.server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    only(req.params.uri);
    watch.stop();
    return {};
  });
  return { close: () => watch.stop() };
}

/** Calls `changed()` when the set of records in inbox/ changes. */
class InboxWatch {
  constructor({ dir, log, changed }) {
    this.dir = dir;
    this.log = log;
    this.changed = changed;
    this.watcher = null;
    this.timer = null;
    this.names = '';
  }

  snapshot() {
    return listRecords(ensureDirs(this.dir).inbox).join('\n');
  }

  start() {
    if (this.watcher) return;
    const { inbox } = ensureDirs(this.dir);
    this.names = this.snapshot();
    try {
      this.watcher = fs.watch(inbox, () => this.soon());
    } catch (err) {
      throw new McpError(
        ErrorCode.InternalError,
        `cannot watch ${inbox} for new mail (${err.code ?? err.message}); read the resource or call peek instead`,
      );
    }
    this.watcher.on('error', (err) => {
      this.log(`stopped watching ${inbox} for new mail: ${err.message}`);
      this.stop();
    });
  }

  soon() {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      let now;
      try {
        now = this.snapshot();
      } catch (err) {
        this.log(`cannot list the inbox: ${err.message}`);
        return;
      }
      if (now === this.names) return;
      this.names = now;
      this.changed();
    }, SETTLE_MS);
  }

  stop() {
    this.watcher?.close();
    this.watcher = null;
    clearTimeout(this.timer);
    this.timer = null;
  }
}
