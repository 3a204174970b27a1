// The cockpit relay Worker (cockpit.wrangler.toml beside this file): the cockpit relay's routes
// (/api/info, /api/stats, /ws/robot, /ws/viewer) and its Durable Objects (cockpit.js), on its own
// WASM module (tether-cockpit-relay: the relay core and the wire codec). The rooms Worker, the
// edge's front door, hands it these routes over a service binding (routes.js).
import { CockpitRelayObject, routeCockpit } from './cockpit.js';
import { notServedHere } from './routes.js';

export { CockpitRelayObject };

export default {
  /** @param {Request} request @param {Record<string, any>} env */
  fetch(request, env) {
    return routeCockpit(request, env) ?? notServedHere(request, 'the cockpit relay Worker');
  },
};
