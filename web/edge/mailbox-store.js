// Mailbox records over SQL (docs/mailbox.md § Storage), for both hosts: one Durable Object's
// ctx.storage.sql and the Deno host's SQLite file, through the same synchronous seam the room
// store uses (durableObjectSql / sqliteSql in room-store.js). The core writes and reads the
// records; this file only stores (mailbox, key, value) rows and applies one Persist action as
// one transaction. A Durable Object holds one mailbox (its rows use the mailbox name ''); the
// Deno file holds every mailbox and also the next deadline of each (`due`), so mailboxes that
// are not loaded still expire on time.
export const MAILBOX_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS tether_mailbox (mailbox TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (mailbox, key))`,
  `CREATE TABLE IF NOT EXISTS tether_mailbox_due (mailbox TEXT PRIMARY KEY, at INTEGER NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS tether_mailbox_due_at ON tether_mailbox_due (at)`,
];

export class MailboxStore {
  /** @param {{run, all, transaction, sync}} sql the seam of room-store.js */
  constructor(sql) {
    this.sql = sql;
    for (const q of MAILBOX_SCHEMA) sql.run(q);
  }

  /** Every record of `mailbox` as [key, value] pairs, for the core's loadRecord. */
  load(mailbox) {
    return this.sql
      .all('SELECT key, value FROM tether_mailbox WHERE mailbox = ? ORDER BY key', mailbox)
      .map((r) => [String(r.key), String(r.value)]);
  }

  /**
   * Applies one Persist action atomically and resolves once it is durable. Throws when the
   * write fails; nothing of it is kept then.
   */
  apply(mailbox, puts, deletes) {
    this.sql.transaction(() => {
      for (const [key, value] of puts) {
        this.sql.run(
          'INSERT INTO tether_mailbox (mailbox, key, value) VALUES (?, ?, ?) ON CONFLICT (mailbox, key) DO UPDATE SET value = excluded.value',
          mailbox,
          key,
          value,
        );
      }
      for (const key of deletes)
        this.sql.run('DELETE FROM tether_mailbox WHERE mailbox = ? AND key = ?', mailbox, key);
    });
    return this.sql.sync();
  }

  /** The next deadline of `mailbox` (absolute ms), or null to clear it. */
  setDue(mailbox, at) {
    if (at === null) this.sql.run('DELETE FROM tether_mailbox_due WHERE mailbox = ?', mailbox);
    else
      this.sql.run(
        'INSERT INTO tether_mailbox_due (mailbox, at) VALUES (?, ?) ON CONFLICT (mailbox) DO UPDATE SET at = excluded.at',
        mailbox,
        at,
      );
  }

  /** The earliest deadline of any mailbox, or null. */
  nextDue() {
    const row = this.sql.all('SELECT MIN(at) AS at FROM tether_mailbox_due')[0];
    return row?.at == null ? null : Number(row.at);
  }

  /** Up to `limit` mailboxes whose deadline is at or before `now`, earliest first. */
  dueBy(now, limit) {
    return this.sql
      .all('SELECT mailbox FROM tether_mailbox_due WHERE at <= ? ORDER BY at LIMIT ?', now, limit)
      .map((r) => String(r.mailbox));
  }
}
