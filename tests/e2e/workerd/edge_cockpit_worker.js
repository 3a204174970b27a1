// TEMPORARY entry until web/edge/worker.js lands: the cockpit routes plus static assets.
import { routeCockpit, CockpitRelayObject } from '../../../web/edge/cockpit.js';
export { CockpitRelayObject };
export default {
  async fetch(request, env) {
    return routeCockpit(request, env) ?? env.ASSETS.fetch(request);
  },
};
