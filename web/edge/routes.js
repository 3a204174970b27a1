// Which edge Worker serves which path. The edge is three Workers, one per system, each with its
// own WASM module (wasm/module.cmake), so each uploads and cold-starts only what it serves
// (bench/README.md § Module size): the rooms Worker (worker.js: /rooms/..., tickets, the HTTP
// room form; also the public front door, with the cockpit's files as its static assets), the
// cockpit relay Worker (cockpit-worker.js) and the mailbox Worker (mailbox-worker.js). One
// public hostname serves every route: the front door hands the other two systems' requests, as
// they came (WebSocket upgrades included), to their Workers over service bindings.
// web/edge/workers.mjs lists the Workers and their bindings; README.md § Deploy at the edge.
import { isMailboxPath } from './mailbox-request.js';

/** The cockpit relay's endpoints (cockpit.js; docs/cockpit-protocol.md). */
export const COCKPIT_PATHS = Object.freeze(['/api/info', '/api/stats', '/ws/robot', '/ws/viewer']);
// Test-only hooks (TETHER_TEST_HOOKS=1, never deployed) go where their system lives.
const COCKPIT_TEST = '/__test/cockpit';
const MAILBOX_TEST = '/__test/mailboxes/';

/** True for a path the cockpit relay Worker answers. */
export const isCockpitPath = (pathname) =>
  COCKPIT_PATHS.includes(pathname) || pathname.startsWith(COCKPIT_TEST);

/** The service binding and Worker of the system that serves `pathname`, or null for the rooms'. */
export function serviceFor(pathname) {
  if (isCockpitPath(pathname)) return { binding: 'COCKPIT_SERVICE', worker: 'cockpit-worker.js' };
  if (isMailboxPath(pathname) || pathname.startsWith(MAILBOX_TEST))
    return { binding: 'MAILBOX_SERVICE', worker: 'mailbox-worker.js' };
  return null;
}

/**
 * The front door's hand-off: the response of the Worker that serves this request, or null when
 * it is the rooms Worker's own. A missing binding is answered with what to deploy.
 * @param {Request} request
 * @param {Record<string, any>} env
 * @returns {Promise<Response> | Response | null}
 */
export function forward(request, env) {
  const service = serviceFor(new URL(request.url).pathname);
  if (!service) return null;
  const target = env[service.binding];
  if (!target) {
    return new Response(
      `this path is served by web/edge/${service.worker}, a Worker of its own, and the ` +
        `${service.binding} service binding to it is missing: deploy every edge Worker with ` +
        '`node web/edge/deploy.mjs` (README.md § Deploy at the edge)\n',
      { status: 503 },
    );
  }
  return target.fetch(request);
}

/** The answer of a Worker reached with a path it does not serve (only by a direct request). */
export const notServedHere = (request, worker) =>
  new Response(
    `${new URL(request.url).pathname} is not served by ${worker}: send it to the rooms Worker, ` +
      'the edge front door (README.md § Deploy at the edge)\n',
    { status: 404 },
  );
