// `tether mailbox create`: a new hosted mailbox. Its owner key is saved in the state dir (never
// printed); a sidecar running for the dir starts delivering it into the inbox.
export default {
  name: 'create',
  usage: '[--url URL]',
  summary: 'a new mailbox owned by this state dir (its owner key is saved here, not printed)',
  async run({ creds, service, out, syncSidecar, dirArg }) {
    const s = service();
    const r = await s.create();
    creds.owned[r.mailbox] = { url: s.url, ownerKey: r.ownerKey, createdAt: r.createdAt };
    creds.save();
    await syncSidecar();
    const url = s.mailboxUrl(r.mailbox);
    out(
      { ok: true, mailbox: r.mailbox, url, createdAt: r.createdAt, keys: creds.file },
      [
        `created mailbox ${r.mailbox}`,
        `  url: ${url}`,
        `  its owner key is in ${creds.file}: keep that file, only the key reads the mailbox`,
        `  pair a sender: tether mailbox pair ${r.mailbox}${dirArg}`,
      ].join('\n'),
    );
  },
};
