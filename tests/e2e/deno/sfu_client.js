// Deno side of tests/e2e/sfu-client.test.mjs: the Realtime client against the SFU named by the
// rtc file text in argv[0]; prints the report as one JSON line.
import { exercise } from '../lib/sfu_client_exercise.js';

console.log(JSON.stringify({ runtime: 'deno', report: await exercise(Deno.args[0]) }));
