// Worker for tests/e2e/workerd-cockpit-robot.test.mjs: `@tether-rt/tether/cockpit-robot` as the
// `workerd` condition resolves it (web/glue/workerd/cockpit-robot.js), which brings the cockpit
// module precompiled, since the edge module holds no client core. Answers with the robot core's
// manifest in normal form and which module the robot glue's binding came from.
import { connectRobot } from '../../../web/glue/workerd/cockpit-robot.js';
import { createRobotCore } from '../../../web/glue/cockpit-cores.js';
import { loadTetherModule, loadedTetherModules } from '../../../web/glue/load.js';

export default {
  async fetch(request) {
    const config = await request.json();
    const mod = await loadTetherModule({}, 'cockpit_clients');
    const robot = createRobotCore(mod, config);
    try {
      return Response.json({
        connectRobot: typeof connectRobot,
        manifest: robot.manifest,
        modules: loadedTetherModules(),
        relayCore: typeof mod.CockpitRelayCore,
      });
    } finally {
      robot.dispose();
    }
  },
};
