// `@tether-rt/tether/decode` in every runtime but workerd (Node, Deno, browsers, bundlers): the glue
// with the full module's JS registered statically (web/glue/modules/tether.js).
import '../modules/tether.js';
export * from '../decode.js';
