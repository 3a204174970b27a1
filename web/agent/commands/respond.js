// `tether agent respond PEER REQUEST_ID [TEXT...]`: answers a command PEER sent us with
// command_response {requestId, ok, result | error} (docs/agent-bus.md § Payloads with fixed
// shapes), as `send` sends: through the disk outbox. The public implementation's peers match an
// answer to their command only by requestId, which `send {text}` never carries.
import { usage } from '../cli/context.js';
import { textFrom } from '../cli/values.js';
import { CLI_NAMES, responsePayload } from '../typed-payload.js';
import { reportSent } from './send.js';

/** The answer's outcome as the bus core takes it: the result as JSON text, or the error text. */
function outcome(v, words) {
  const text = textFrom(words);
  if (v.error) {
    if (v['result-json'] !== undefined) usage('--error and --result-json do not go together');
    return { error: text };
  }
  if (v['result-json'] === undefined)
    return { resultJson: text ? JSON.stringify(text) : undefined };
  if (text) usage('give the result as TEXT or as --result-json, not both');
  return { resultJson: v['result-json'] };
}

export default {
  name: 'respond',
  usage: 'PEER REQUEST_ID [TEXT...] [--error] [--result-json JSON]',
  summary: 'answers a command PEER sent (REQUEST_ID: its id, as `read` shows it)',
  details:
    'Sends {requestId, ok: true, result}: TEXT as a string, --result-json as given, or null. With --error, TEXT says what went wrong: {requestId, ok: false, error}. TEXT "-" reads it from stdin.',
  options: {
    error: { type: 'boolean', help: 'the command failed; TEXT says why' },
    'result-json': { type: 'string', value: 'JSON', help: 'the result as JSON, instead of TEXT' },
  },
  async run({ v, pos, out, call, progress, needBus, dirArg }) {
    const [to, requestId, ...words] = pos;
    if (!to || !requestId)
      usage('respond PEER REQUEST_ID: name the peer and the id of its command (see `read`)');
    const payload = responsePayload(needBus(), requestId, {
      ...outcome(v, words),
      names: CLI_NAMES,
    });
    const r = await call('send', { to, type: 'command_response', payload });
    reportSent(r, to, { out, progress, dirArg });
  },
};
