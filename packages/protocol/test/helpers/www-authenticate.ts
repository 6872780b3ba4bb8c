/**
 * WWW-Authenticate values that break RFC 9110 §11.6.1's grammar (or repeat a parameter): both the
 * shared parser and the client's coded wrapper must refuse each one.
 */
export const MALFORMED_WWW_AUTHENTICATE: readonly string[] = [
  'Bearer realm="unterminated',
  'Bearer scope="a", scope="b"',
  '=x',
  'Bearer realm="x" junk',
  'Bearer "quoted"',
  'Bearer realm="a\\',
];
