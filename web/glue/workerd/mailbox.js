// `@tether-rt/tether/mailbox` under the `workerd` export condition: mailbox.js on tether-mailbox
// (wasm/module.cmake: the mailbox Worker's module), whose .wasm arrives precompiled with it.
import '../modules/tether-mailbox.js';
export * from '../mailbox.js';
