// What a child process (a server under test) prints, kept whole, and the wait for its ready line.
// Every server the suites start prints one line naming where it listens (`tether rooms ready:
// ws://127.0.0.1:PORT/`, a JSON line under --json); a child that exits before it rejects the
// wait with everything it printed, so a failed start reads as its own error, not a timeout.

/**
 * @param {import('node:child_process').ChildProcess} child spawned with stdout and stderr piped
 * @param {string} what the child's name in a failure ("deno rooms.js", "tether rooms serve")
 */
export function watchOutput(child, what) {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    all: () => stdout + stderr,
    /**
     * The match of `pattern` in stdout, once it is there.
     * @param {RegExp} pattern
     * @returns {Promise<RegExpExecArray>}
     */
    ready(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(stdout);
          if (!m) return;
          child.stdout.off('data', check);
          resolve(m);
        };
        child.stdout.on('data', check);
        check();
        child.once('exit', (code, signal) =>
          reject(
            new Error(
              `${what} exited (${code ?? signal}) before it printed ${pattern}:\n${stdout}${stderr}`,
            ),
          ),
        );
      });
    },
  };
}
