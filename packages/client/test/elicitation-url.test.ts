// What a URL-mode elicitation may ask the user to open, and what is shown as its host (MCP
// 2025-11-25 client/elicitation §Safe URL Handling; §URL Elicitation Required Error), as pure
// functions. The flows are in url-elicitation.test.ts, the attacks in test/security.
import { thrownBy } from '@mcp-auth-kit/test-utils';
import { describe, expect, it } from 'vitest';
import { ERR, McpAuthError } from '../src/index.js';
import { checkElicitationUrl, urlElicitationPrompt, urlElicitationsOf } from '../src/core.js';
import { MAX_ELICITATION_URL_LENGTH } from '../src/elicitation/elicitation-url.js';

function refusedFor(input: unknown): McpAuthError {
  const err = thrownBy(() => checkElicitationUrl(input));
  expect(err).toBeInstanceOf(McpAuthError);
  expect((err as McpAuthError).code).toBe(ERR.ELICITATION_REFUSED);
  return err as McpAuthError;
}

describe('checkElicitationUrl', () => {
  it.each([
    ['https://drive.example/connect/abc', 'drive.example', false],
    ['https://drive.example:8443/connect', 'drive.example:8443', false],
    ['HTTPS://Drive.EXAMPLE:443/connect', 'drive.example', false],
    ['http://127.0.0.1:9000/connect/t', '127.0.0.1:9000', false],
    ['http://localhost:3000/connect', 'localhost:3000', false],
    ['http://[::1]:9000/connect', '[::1]:9000', false],
    ['http://0x7f.1:9000/connect', '127.0.0.1:9000', false],
    // the parser's form: an internationalized name is shown in punycode, with the warning flag
    ['https://bücher.example/connect', 'xn--bcher-kva.example', true],
    ['https://xn--pple-43d.com/login', 'xn--pple-43d.com', true],
    // a backslash is a path separator for https: the host is the one before it
    ['https://drive.example\\@evil.example/', 'drive.example', false],
  ])('allows %s, shown as host %s', (input, host, punycode) => {
    const target = checkElicitationUrl(input);
    expect(target.host).toBe(host);
    expect(target.punycode).toBe(punycode);
    expect(target.url.href).toBe(new URL(input).href);
  });

  it.each([
    'javascript:alert(document.cookie)',
    'JavaScript:alert(1)',
    ' javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'file:///etc/passwd',
    'vbscript:msgbox(1)',
    'blob:https://drive.example/1',
    'ftp://drive.example/x',
    'ms-msdt:/id PCWDiagnostic',
    'http://drive.example/connect',
    'http://10.0.0.1/connect',
    'http://169.254.169.254/latest/meta-data',
    'not a url',
    '/connect/relative',
  ])('refuses %s (https, or http to a loopback host, only)', (input) =>
    expect(refusedFor(input).message).toMatch(/^the MCP server asked to open a page, which was refused without asking you: /),
  );

  it.each([
    'https://user:password@drive.example/connect',
    'https://user@drive.example/connect',
    'https://drive.example@evil.example/connect',
    'http://trusted:x@127.0.0.1:9000/',
  ])('refuses a URL with a user name or password (%s): it shows one host and opens another', (input) => {
    expect(refusedFor(input).message).toContain('user name or password');
  });

  it('refuses what is not a string, the empty string, and a URL too long to be read; the message never quotes the URL', () => {
    for (const input of [undefined, null, 42, { href: 'https://drive.example/' }, '']) refusedFor(input);
    const long = `https://drive.example/${'a'.repeat(MAX_ELICITATION_URL_LENGTH)}`;
    const err = refusedFor(long);
    expect(err.message).toContain(`${MAX_ELICITATION_URL_LENGTH} characters`);
    expect(err.message).not.toContain('aaaa');
    expect(refusedFor('javascript:steal("SECRET-123")').message).not.toContain('SECRET-123');
  });
});

describe('urlElicitationPrompt and urlElicitationsOf (the -32042 data)', () => {
  const ok = { mode: 'url', elicitationId: 'e-1', url: 'https://drive.example/connect/1', message: 'Connect your drive' };

  it('reads a -32042 error of either SDK (code and data.elicitations), in order', () => {
    const error = Object.assign(new Error('URL elicitation required'), {
      code: -32042,
      data: { elicitations: [ok, { ...ok, elicitationId: 'e-2', url: 'https://calendar.example/c' }] },
    });
    const prompts = urlElicitationsOf(error)!;
    expect(prompts.map((p) => [p.elicitationId, p.host, p.message])).toEqual([
      ['e-1', 'drive.example', 'Connect your drive'],
      ['e-2', 'calendar.example', 'Connect your drive'],
    ]);
  });

  it('is undefined for any other error', () => {
    for (const error of [new Error('x'), { code: -32602, data: { elicitations: [ok] } }, undefined, null, 'text', -32042]) {
      expect(urlElicitationsOf(error)).toBeUndefined();
    }
  });

  it('refuses a -32042 without a usable list (it MUST list URL-mode elicitations), or with too many at once', () => {
    for (const data of [undefined, {}, { elicitations: [] }, { elicitations: 'x' }, { elicitations: [{ ...ok, mode: 'form' }] }]) {
      expect(() => urlElicitationsOf({ code: -32042, data })).toThrow(expect.objectContaining({ code: ERR.ELICITATION_REFUSED }));
    }
    expect(() => urlElicitationsOf({ code: -32042, data: { elicitations: Array(5).fill(ok) } })).toThrow(/5 pages at once/);
  });

  it('checks every field: mode url, a string message, a string elicitationId when present, an allowed URL', () => {
    expect(urlElicitationPrompt({ mode: 'url', url: ok.url, message: '' })).toMatchObject({ message: '', host: 'drive.example' });
    expect(urlElicitationPrompt({ mode: 'url', url: ok.url, message: 'm' }).elicitationId).toBeUndefined();
    for (const params of [
      null,
      'x',
      { ...ok, mode: undefined },
      { ...ok, message: undefined },
      { ...ok, message: 7 },
      { ...ok, elicitationId: 7 },
      { ...ok, elicitationId: '' },
      { ...ok, url: 'javascript:alert(1)' },
    ]) {
      expect(() => urlElicitationPrompt(params)).toThrow(expect.objectContaining({ code: ERR.ELICITATION_REFUSED }));
    }
  });
});
