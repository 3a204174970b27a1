// Worker for tests/e2e/sfu-client.test.mjs: the Realtime client in real workerd, with the rtc
// file's text as the RTC binding (as the edge Worker's secret would hold it).
import { exercise } from '../lib/sfu_client_exercise.js';

export default {
  async fetch(_request, env) {
    return Response.json({ runtime: 'workerd', report: await exercise(env.RTC) });
  },
};
