// `@tether-rt/tether/tickets` in every runtime but workerd (Node, Deno, browsers, bundlers): the
// ticket codec with the full module's JS registered statically (web/glue/modules/tether.js).
import '../modules/tether.js';
export * from '../../edge/tickets.js';
