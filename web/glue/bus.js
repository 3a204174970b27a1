// `tether/bus`: placeholder until the bus core lands (see bus.d.ts for the API being built).
export async function loadBus() {
  throw new Error('tether/bus: the bus core is not built into this branch yet; merge a later issue-bus commit');
}
export function createBusApi() {
  throw new Error('tether/bus: the bus core is not built into this branch yet; merge a later issue-bus commit');
}
export async function createBus() {
  return (await loadBus()).createBus();
}
