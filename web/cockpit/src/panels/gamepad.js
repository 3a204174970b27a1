// Gamepad teleop through the Gamepad API, for the teleop panel: a standard-mapping pad drives
// only while its deadman (LB) is held, so a dropped controller or a released grip stops the
// robot. The panel turns the reading into the same command the keys make and hands it to the
// same viewer core (lease, watchdog): this file only reads the pad.

/** What the operator sees: which control does what. */
export const GAMEPAD_HELP =
  'Gamepad: hold LB (deadman); left stick drive and strafe, right stick turn, RB boost';

const DEADMAN = 4; // LB on the standard mapping
const BOOST = 5; // RB
const DEADZONE = 0.15;

const axis = (v) => (Math.abs(v ?? 0) < DEADZONE ? 0 : Math.max(-1, Math.min(1, v)));

/**
 * The first connected pad's reading, or null when none is connected. Axes: up and left are
 * negative on the standard mapping, so forward, strafe left and turn left come out positive.
 * @returns {{id: string, deadman: boolean, boost: boolean, vx: number, vy: number, wz: number} | null}
 */
export function readGamepad() {
  const pads = navigator.getGamepads?.() ?? [];
  const pad = Array.from(pads).find((p) => p && p.connected);
  if (!pad) return null;
  const pressed = (i) => Boolean(pad.buttons[i]?.pressed);
  return {
    id: pad.id,
    deadman: pressed(DEADMAN),
    boost: pressed(BOOST),
    vx: -axis(pad.axes[1]),
    vy: -axis(pad.axes[0]),
    wz: -axis(pad.axes[2]),
  };
}
