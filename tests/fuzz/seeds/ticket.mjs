// Seeds for fuzz_ticket: every ticket of fixtures/room/tickets.json, minted and tampered.
export default function seeds({ read }) {
  const f = read('fixtures/room/tickets.json');
  const tickets = [
    ...f.mint.filter((m) => m.ticket).map((m) => m.ticket),
    ...f.verify.map((v) => v.ticket),
  ];
  return tickets.map((t) => Buffer.from(t));
}
