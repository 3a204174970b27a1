// Seeds for fuzz_cockpit_fleet: tickets (byte 0), presence reports (1) and robots lists (2), as the
// objects of a split fleet write them (docs/cockpit-fleet.md), valid and near-valid.
export default function seeds() {
  const viewerHello = { t: 'hello', v: 7, role: 'viewer' };
  const robotHello = {
    t: 'hello',
    v: 7,
    role: 'robot',
    robot: { id: 'rover-a', name: 'A', model: 'sim' },
    manifest: { version: 1, channels: [{ ch: 'pose', encoding: 'pose.json.v1' }] },
  };
  const tickets = [
    { robotId: 'rover-a', hello: viewerHello, welcomed: true, watch: true, genFloor: 5000 },
    { robotId: 'rover-a', hello: robotHello, welcomed: false, watch: false, genFloor: 0 },
    { robotId: 'rover-b', hello: viewerHello, welcomed: true, watch: true },
    { robotId: '', hello: viewerHello },
    { robotId: 'rover-a', hello: 'hello' },
  ];
  const reports = [{ id: 'rover-b', name: 'B', model: 'sim' }, null, { id: 'rover-b' }];
  const lists = [
    { t: 'robots', robots: [{ id: 'rover-a', name: 'A', model: 'sim' }] },
    { t: 'robots', robots: [{ name: 'no id' }] },
    { t: 'robots', robots: [] },
  ];
  const tag = (n, v) => Buffer.concat([Buffer.from([n]), Buffer.from(JSON.stringify(v))]);
  return [
    ...tickets.map((t) => tag(0, t)),
    ...reports.map((r) => tag(1, r)),
    ...lists.map((l) => tag(2, l)),
  ];
}
