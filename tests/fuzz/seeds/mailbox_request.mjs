// Seeds for fuzz_mailbox_request: a flags byte (clock step in bits 0-2, failing writes in bit 3),
// then NUL-separated requests "method\x01target\x01authorization\x01body" with the harness's
// tokens ($M mailbox id, $O owner key, $S active sender key, $Q pending sender key, $P pair id,
// $C open code): every route done right, then each malformed, oversized and hostile shape the
// parser names.
export default function seeds() {
  const r = (method, target, auth = '', body = '') => [method, target, auth, body].join('\x01');
  const b = '/mailboxes/$M';
  const owner = 'Bearer $O';
  const sender = 'Bearer $S';
  const send = (id, text) => r('POST', `${b}/messages`, sender, JSON.stringify({ id, text }));
  const valid = [
    r('GET', b, owner),
    r('POST', `${b}/codes`, owner),
    r('POST', `${b}/pairs`, '', JSON.stringify({ name: 'new', code: '$C' })),
    r('POST', `${b}/pairs`, '', JSON.stringify({ name: 'asks' })),
    r('GET', `${b}/pairs`, owner),
    send('m1', 'hello'),
    send('m1', 'hello'),
    send('m1', 'changed'),
    send('m2', 'snow \u2603'),
    r('GET', `${b}/messages?since=0&limit=1`, owner),
    r('GET', `${b}/messages?since=1`, owner),
    r('POST', `${b}/ack`, owner, JSON.stringify({ seqs: [1], status: 'delivered' })),
    r('GET', `${b}/status/m1`, sender),
    r('POST', `${b}/ack`, owner, JSON.stringify({ seqs: [1, 2, 99], status: 'read' })),
    r('GET', `${b}/status/m%31`, sender),
    r('GET', `${b}/stream?since=0`, owner),
    r('DELETE', `${b}/pairs/$P`, owner),
    send('m3', 'after revoke'),
    r('GET', `${b}/status/m3`, 'Bearer $Q'),
  ];
  const hostile = [
    r('POST', '/mailboxes'),
    r('GET', '/mailboxes/zz'),
    r('GET', `${b}//pairs`, owner),
    r('PUT', `${b}/messages`, sender, '{}'),
    r('POST', `${b}/messages`, sender, '{"id":"x","text":"'),
    r('POST', `${b}/messages`, sender, `{"id":"x","text":"${'x'.repeat(65537)}"}`),
    r('POST', `${b}/messages`, sender, '['.repeat(200)),
    r('POST', `${b}/messages`, sender, '{"id":"x","txt":"y"}'),
    r('POST', `${b}/messages`, 'Bearer mbs_' + '0'.repeat(64), '{"id":"x","text":"y"}'),
    r('POST', `${b}/messages`, owner, '{"id":"x","text":"y"}'),
    r('POST', `${b}/messages`, 'Basic Zm9v', '{"id":"x","text":"y"}'),
    r('POST', `${b}/ack`, owner, '{"seqs":[0,1.5,-1],"status":"read"}'),
    r('POST', `${b}/ack`, owner, '{"seqs":[1],"status":"expired"}'),
    r('GET', `${b}/messages?since=-1&limit=1000`, owner),
    r('GET', `${b}/messages?since=1&since=2`, owner),
    r('GET', `${b}/status/%zz`, sender),
    r('GET', `${b}/status/%ff`, sender),
    r('POST', `${b}/pairs/$P/accept`, owner),
    r('POST', `${b}/pairs`, '', '{"name":"x","code":"mbc_00"}'),
    r('GET', `${b}/stream`, sender),
  ];
  const burst = Array.from({ length: 40 }, (_, i) => send(`f${i}`, 'flood'));
  const seed = (flags, list) => Buffer.concat([Buffer.from([flags]), Buffer.from(list.join('\0'))]);
  // Bytes that are not UTF-8, which a JS string cannot hold.
  const invalid = Buffer.concat([
    Buffer.from([0]),
    Buffer.from(`POST\x01${b}/messages\x01${sender}\x01{"id":"x","text":"`),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('"}'),
  ]);
  return [
    seed(0, valid),
    seed(1, [...valid, ...hostile]),
    seed(5, [
      send('e', 'expires'),
      r('GET', `${b}/messages`, owner),
      r('GET', `${b}/status/e`, sender),
    ]),
    seed(6, [send('e', 'expires'), r('GET', `${b}/status/e`, sender), send('e', 'expires')]),
    seed(7, valid),
    seed(8, valid),
    seed(0, burst),
    seed(2, hostile),
    invalid,
    ...valid.map((v) => seed(0, [v])),
  ];
}
