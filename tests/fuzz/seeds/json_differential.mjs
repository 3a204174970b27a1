// Seeds for fuzz_json_differential: every client message of the room harness's seeds, each on its
// own, and the JSON edge cases the two parsers could read differently: numbers at and beyond a
// double's range, long digit runs, escapes and surrogate pairs, duplicate keys, depth, whitespace.
import room from './room_envelope.mjs';

export default function seeds(helpers) {
  const lines = room(helpers).flatMap((b) => b.subarray(1).toString('utf8').split('\n'));
  const edges = [
    '66665E666666666',
    '[1e308,1.7976931348623157e308,1.7976931348623159e308,-1e309,2e-324,1e-400,-0,0.0e0]',
    '{"a":1e999,"b":[-1E+400,{"c":9' + '9'.repeat(320) + '}],"d":"1e999"}',
    '{"a":1,"a":2,"\\u0061":3}',
    '["\\ud83d\\ude00","\\u00e9","\\"\\\\\\/\\b\\f\\n\\r\\t",""]',
    '[18446744073709551615,18446744073709551616,-9223372036854775808,9007199254740993]',
    ' \t\r\n{ "x" : [ true , false , null ] } \n',
    '['.repeat(64) + ']'.repeat(64),
    '{"t":"presence","room":"r","data":{"x":1e400}}',
  ];
  return [...new Set([...lines, ...edges])].map((s) => Buffer.from(s));
}
