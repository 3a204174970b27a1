// The rooms policy from configuration (room-relay.md § Trust, § Rules that need to know the room
// is empty). A JSON document, from wrangler.toml [vars] ROOM_POLICY (or a JSON binding) at the
// edge and --policy FILE in the Deno host:
//
//   { "rules": [ { "prefix": ["notes"], "allow": ["human", "agent"] },
//                { "prefix": ["cases", "*", "plan"], "allow": ["human"] } ],
//     "agentRoot": "seq0" }
//
// rules: pathPrefixAcl rules ('*' matches one segment; deny once no rule allows). Absent: every
// path is open to both kinds. agentRoot: "seq0" (default) lets an agent write the room root only
// as the room's first envelope (seeding an empty room), "never", or "rules" (the rules alone
// decide, which keeps the ACL inside the WASM core with no JS call per op).
//
// Replaying the journal into a fresh relay (room-store.js) must not be judged again by a policy
// that may have changed since: those connections carry ctx.replay. Tether's relay core asks no
// policy question about them at all (nor pins their policyVersion: docs/rooms.md § Durability at
// the edge); the clauses below keep them allowed under the reference relay, which asks.

const KINDS = ['human', 'agent'];

export function parsePolicyConfig(value) {
  let cfg = value ?? {};
  if (typeof cfg === 'string') {
    if (cfg.trim() === '') cfg = {};
    else {
      try {
        cfg = JSON.parse(cfg);
      } catch (e) {
        throw new Error(
          `tether edge: ROOM_POLICY is not JSON (${e.message}); see docs/rooms.md § Policy`,
        );
      }
    }
  }
  if (typeof cfg !== 'object' || Array.isArray(cfg))
    throw new Error('tether edge: ROOM_POLICY must be a JSON object {rules?, agentRoot?}');
  const agentRoot = cfg.agentRoot ?? 'seq0';
  if (!['seq0', 'never', 'rules'].includes(agentRoot)) {
    throw new Error(
      `tether edge: ROOM_POLICY.agentRoot must be "seq0", "never" or "rules", not ${JSON.stringify(agentRoot)}`,
    );
  }
  let rules = null;
  if (cfg.rules !== undefined) {
    if (!Array.isArray(cfg.rules))
      throw new Error('tether edge: ROOM_POLICY.rules must be an array of {prefix, allow}');
    rules = cfg.rules.map((r, i) => {
      const where = `ROOM_POLICY.rules[${i}]`;
      if (
        !Array.isArray(r?.prefix) ||
        !r.prefix.every((s) => typeof s === 'string' || Number.isFinite(s))
      ) {
        throw new Error(
          `tether edge: ${where}.prefix must be an array of path segments ('*' matches one)`,
        );
      }
      if (!Array.isArray(r.allow) || !r.allow.every((k) => KINDS.includes(k))) {
        throw new Error(
          `tether edge: ${where}.allow must list principal kinds from ${KINDS.join(', ')}`,
        );
      }
      return { prefix: [...r.prefix], allow: [...r.allow] };
    });
  }
  return { rules, agentRoot };
}

/** The OpPolicy for createRelay; `pathPrefixAcl` comes from the relay implementation in use. */
export function buildPolicy(cfg, pathPrefixAcl) {
  const rootOk = (ctx, path, info) =>
    path.length > 0 ||
    ctx.kind !== 'agent' ||
    ctx.replay === true ||
    (cfg.agentRoot === 'seq0' && info?.seq === 0);
  if (!cfg.rules) {
    // Every path below the root is open, so the relay need only ask about root ops: tether's
    // relay reads the canWrite kept under this symbol as that promise (web/glue/relay.js); the
    // reference ignores it and asks about every op, with the same answers.
    const canWrite = (ctx, path, room, info) => rootOk(ctx, path, info);
    return { canWrite, [Symbol.for('tether.relay.canWriteRootOnly')]: canWrite };
  }
  const acl = pathPrefixAcl([
    ...cfg.rules.map((r) => ({ prefix: r.prefix, allow: (ctx) => r.allow.includes(ctx.kind) })),
    // Matches every path (an empty prefix), so a replayed envelope passes wherever it was written.
    { prefix: [], allow: (ctx) => ctx.replay === true },
  ]);
  if (cfg.agentRoot === 'rules') return acl;
  return {
    canWrite: (ctx, path, room, info) =>
      rootOk(ctx, path, info) && acl.canWrite(ctx, path, room, info),
  };
}
