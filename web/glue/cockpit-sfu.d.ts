// Types of web/glue/cockpit-sfu.js: the relay core's SFU calls, carried out with the Realtime client.
import type { Action, CockpitRelay } from './cockpit-relay.js';
import type { Driver } from './driver.js';
import type { RealtimeClient } from '../sfu/client.js';

export interface SfuCaller {
  /** Carries out an sfu_call or sfu_cancel; false for any other action. */
  perform(action: Action): boolean;
  readonly pending: number;
  close(): void;
}

export function createSfuCaller(
  core: CockpitRelay,
  driver: Driver,
  client: RealtimeClient,
): SfuCaller;
