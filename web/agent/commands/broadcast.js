// `tether agent broadcast TEXT...`: best effort, to every peer online now (never queued).
import { PAYLOAD_JSON_OPTION, payloadFrom } from '../cli/values.js';

export default {
  name: 'broadcast',
  usage: 'TEXT... [--topic T] [--payload-json JSON]',
  summary: 'best effort, to every peer online now',
  details: 'TEXT "-" reads the text from stdin.',
  options: {
    topic: { type: 'string', value: 'T', help: 'a topic for the receivers to filter on' },
    'payload-json': PAYLOAD_JSON_OPTION,
  },
  async run({ v, pos, out, call }) {
    const r = await call('broadcast', {
      topic: v.topic,
      payload: payloadFrom(v, pos, 'broadcast'),
    });
    out(
      r,
      `broadcast ${r.id} to ${r.delivered.length} peer(s)${r.missed.length ? `; missed (best effort): ${r.missed.join(', ')}` : ''}`,
    );
  },
};
