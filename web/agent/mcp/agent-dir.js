// The state dir the `tether mcp` tools act on, and its sidecar: calls go to the running sidecar
// over its control API (web/agent/cli/sidecar-client.js, as the CLI's do). When none runs, the
// first tool that needs one starts it the way `tether agent join` does (it is that command, run
// in this process with the server's --relay/--room/--id, or the dir's saved settings), or fails
// naming the `join` to run. The sidecar it starts outlives the server, as a joined sidecar does.
import { agentContext } from '../cli/context.js';
import { UsageError } from '../cli/args.js';
import { call, rpc } from '../cli/sidecar-client.js';
import join from '../commands/join.js';
import { files, lockHolder, pidAlive, readJson } from '../state.js';

/** The `join` flags `tether mcp` takes, to start a sidecar with. */
export const JOIN_FLAGS = ['relay', 'room', 'id', 'name', 'role', 'transport', 'webrtc-bind'];

export class AgentDir {
  /**
   * @param {{dir: string, joinWith: Record<string, string>, limits: object, log: (s: string) => void}} o
   *   joinWith: the join flags the server was started with (may be empty)
   */
  constructor({ dir, joinWith, limits, log }) {
    this.dir = dir;
    this.joinWith = joinWith;
    this.limits = limits;
    this.log = log;
    this.starting = null; // one join at a time, however many tools ask at once
  }

  /** A call whose refusal ({ok: false, error}) is the tool's error. */
  async call(cmd, args) {
    await this.ensureSidecar();
    return call(this.dir, cmd, args);
  }

  /** The sidecar's reply as it is, refusals included. */
  async rpc(cmd, args) {
    await this.ensureSidecar();
    return rpc(this.dir, cmd, args);
  }

  running() {
    const ep = readJson(files(this.dir).endpoint);
    return !!ep && pidAlive(ep.pid);
  }

  async ensureSidecar() {
    if (this.running()) return;
    if (!this.starting)
      this.starting = this.start().finally(() => {
        this.starting = null;
      });
    await this.starting;
  }

  async start() {
    const { dir } = this;
    const holder = lockHolder(dir);
    if (holder !== null)
      throw new UsageError(
        `the sidecar for ${dir} (pid ${holder}) does not answer yet: it is starting, or stuck (see ${files(dir).log}); try again, or restart it with \`tether agent leave --dir ${dir}\` and \`tether agent join --dir ${dir}\``,
      );
    const saved = readJson(files(dir).config) ?? {};
    const has = (k) => this.joinWith[k] !== undefined || saved[k] !== undefined;
    if (!has('relay') || !has('room') || !has('id'))
      throw new UsageError(
        `no sidecar runs for ${dir}, and this server has no room to join: run \`tether agent join --dir ${dir} --relay ws://HOST:PORT/ --room ROOM --id ID\` (the ticket in $TETHER_TICKET), or start \`tether mcp\` with --relay, --room and --id so its tools start the sidecar`,
      );
    this.log(`no sidecar runs for ${dir}: joining (as \`tether agent join\` does)`);
    let answer = null;
    const ctx = agentContext({
      values: { ...this.joinWith, dir, json: true },
      positionals: [],
      io: {
        // join's answer (one JSON line), and its progress for our log
        stdout: (s) => (answer = s),
        stderr: (s) => this.log(s),
      },
      limits: this.limits,
    });
    await join.run(ctx);
    const r = answer ? JSON.parse(answer) : {};
    this.log(
      r.connected === false
        ? `sidecar pid ${r.pid} started but is not in room '${r.room}' yet; it keeps retrying`
        : `sidecar pid ${r.pid} joined room '${r.room}' as '${r.id}'`,
    );
  }
}
