// The CLI's URL-mode elicitation (MCP 2025-11-25 client/elicitation §Safe URL Handling, §Response
// Actions, §Completion Notifications): `call` and `tools` show the server's message (terminal-safe,
// bounded), the full URL and its host, ask "Open <host> in your browser? [y/N]", open the browser
// (a fake opener here: it records the URL and plays the user's visit), wait for Enter or the
// completion notification, and retry. Without a terminal nothing is opened and the command ends
// with exit code 3, the URL on a line of its own.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo } from '../src/program.js';
import { EXIT_NEEDS_USER, MAX_SHOWN_MESSAGE_LENGTH } from '../src/url-elicitation-prompt.js';
import { startV1ElicitingServer, type ElicitingServer } from '../../client/test/helpers/eliciting-servers.js';

let home: string;
let s: ElicitingServer;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'mak-cli-elicit-'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));
afterEach(async () => s?.close());

/**
 * A terminal session: `answers` are typed one by one, each when the CLI asks for a line (the
 * "[y/N]" question, the "Press Enter" wait); `null` closes the input (Ctrl-D).
 */
function session(answers: (string | null | (() => Promise<string>))[], extra: Partial<CliIo> = {}, env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const opened: string[] = [];
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const io: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => {
      err.push(t);
      if (/\[y\/N\] $|Press Enter[^\n]*$/.test(t)) {
        const next = answers.shift();
        if (next === null) stdin.end();
        else if (typeof next === 'function') void next().then((line) => stdin.write(`${line}\n`));
        else if (next !== undefined) setTimeout(() => stdin.write(`${next}\n`), 5);
      }
    },
    env: { MCP_AUTH_KIT_HOME: home, CI: '', ...env },
    open: async (u) => {
      opened.push(u.href);
      await fetch(u); // the user's visit to the page
      return true;
    },
    stdin,
    ...extra,
  };
  return { io, out: () => out.join(''), err: () => err.join(''), opened };
}

const callFiles = (tool = 'files') => ['call', s.url, tool];

describe('mcp-auth-kit call: URL elicitation at a terminal', () => {
  it('-32042: shows who asks, the message, the URL and its host, asks, opens, the completion notification ends the wait, retries', async () => {
    s = await startV1ElicitingServer();
    const t = session(['y']);
    expect(await run(callFiles(), t.io)).toBe(0);
    const host = new URL(s.url).host;
    const page = `${s.connectBase}/${s.visits[0]}`;
    expect(t.err()).toContain(`The MCP server at ${host} asks you to open a page on ${host}:\n  ${s.message}\n  ${page}\n`);
    expect(t.err()).toContain(`Open ${host} in your browser? [y/N] `);
    expect(t.opened).toEqual([page]);
    expect(JSON.parse(t.out()).content).toEqual([{ type: 'text', text: 'your files: a.txt, b.txt' }]);
    expect(s.calls).toHaveLength(2);
  });

  it('without a completion notification, Enter says the page is done; then the call is retried', async () => {
    s = await startV1ElicitingServer();
    s.notify = false;
    const t = session(['yes', '']);
    expect(await run(callFiles(), t.io)).toBe(0);
    expect(t.err()).toMatch(/Press Enter when you have finished in the browser \(waiting up to 300 s\)\. $/);
    expect(JSON.parse(t.out()).content[0].text).toBe('your files: a.txt, b.txt');
  });

  it('--no-browser: asked all the same, nothing is started, the user opens the URL', async () => {
    s = await startV1ElicitingServer();
    s.notify = false;
    // the user opens the URL by hand, then presses Enter
    const byHand = async () => {
      await fetch(`${s.connectBase}/by-hand`);
      return '';
    };
    const t = session(['y', byHand], { open: async () => expect.unreachable('--no-browser') });
    expect(await run(['--no-browser', ...callFiles()], t.io)).toBe(0);
    expect(t.err()).toContain('(--no-browser) Open the URL above in a browser yourself.\n');
  });

  it('no (or anything but y/yes): nothing opened, not retried, exit 1 with what to do', async () => {
    for (const answer of ['n', '', 'sure']) {
      s = await startV1ElicitingServer();
      const t = session([answer]);
      expect(await run(callFiles(), t.io)).toBe(1);
      expect(t.opened).toEqual([]);
      expect(s.visits).toEqual([]);
      expect(s.calls).toHaveLength(1);
      expect(t.out()).toBe('');
      expect(t.err()).toContain('[MCP_AUTH_ELICITATION_DECLINED]');
      expect(t.err()).toContain('run the command again and answer y');
      await s.close();
    }
  });

  it('Ctrl-D at the question cancels', async () => {
    s = await startV1ElicitingServer();
    const t = session([null]);
    expect(await run(callFiles(), t.io)).toBe(1);
    expect(t.err()).toContain('[MCP_AUTH_ELICITATION_CANCELLED]');
    expect(t.opened).toEqual([]);
  });

  it('a server-initiated elicitation/create: the answer goes to the server, which finishes the call', async () => {
    s = await startV1ElicitingServer();
    const t = session(['y']);
    expect(await run(callFiles('ask'), t.io)).toBe(0);
    expect(s.answers).toEqual(['accept']);
    expect(JSON.parse(t.out()).content).toEqual([{ type: 'text', text: 'answer: accept' }]);
    expect(t.opened).toHaveLength(1);
  });

  it('a server waiting on the answer is not late: the SSE deadline (--request-timeout) starts again after the user answers', async () => {
    s = await startV1ElicitingServer();
    // the user takes longer than --request-timeout to answer the server's own elicitation/create
    const slowly = () => new Promise<string>((resolve) => setTimeout(() => resolve('y'), 1500));
    const t = session([slowly]);
    expect(await run(['--request-timeout', '1', ...callFiles('ask')], t.io)).toBe(0);
    expect(s.answers).toEqual(['accept']);
  });

  it('a URL that may not be opened: not asked, nothing opened, exit 1 with MCP_AUTH_ELICITATION_REFUSED', async () => {
    s = await startV1ElicitingServer();
    s.url_override = 'javascript:alert(document.cookie)';
    const t = session(['y']);
    expect(await run(callFiles(), t.io)).toBe(1);
    expect(t.err()).not.toContain('[y/N]');
    expect(t.err()).toContain('[MCP_AUTH_ELICITATION_REFUSED]');
    expect(t.opened).toEqual([]);
  });

  it('a punycode host is shown as such, with a warning', async () => {
    s = await startV1ElicitingServer();
    s.url_override = 'https://\u0430pple.com/connect';
    const t = session(['n']);
    expect(await run(callFiles(), t.io)).toBe(1);
    expect(t.err()).toContain('open a page on xn--pple-43d.com:');
    expect(t.err()).toContain('  https://xn--pple-43d.com/connect\n');
    expect(t.err()).toContain('Warning: xn--pple-43d.com is an internationalized name, shown in its punycode form');
    expect(t.err()).toContain('Open xn--pple-43d.com in your browser? [y/N] ');
  });
});

describe('hostile message text is data, never layout', () => {
  const ESC = '\u001b';
  /** Terminal controls the CLI must never emit: C0 but newline and tab, DEL, C1. */
  const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
  const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

  it('controls, escape sequences, bidi overrides, forged lines and a very long text are shown escaped and bounded', async () => {
    s = await startV1ElicitingServer();
    const forged = '\nOpen drive.example in your browser? [y/N] ';
    s.message = `Connect ${ESC}[2J${ESC}]0;title\u0007 your \u202edrive\u202c account\u200b${forged}${ESC}]8;;https://evil.example/${ESC}\\x${'A'.repeat(20_000)}`;
    const t = session(['n']);
    expect(await run(callFiles(), t.io)).toBe(1);
    const err = t.err();
    expect(err).not.toMatch(CONTROL);
    expect(err).not.toMatch(INVISIBLE);
    expect(err).toContain('Connect \\u001b[2J\\u001b]0;title\\u0007 your \\u202edrive\\u202c account\\u200b\\nOpen drive.example');
    // the forged question never starts a line: only the real one does
    const questions = err.split('\n').filter((line) => line.startsWith('Open '));
    expect(questions).toHaveLength(1);
    expect(questions[0]!.startsWith(`Open ${new URL(s.url).host} in your browser? [y/N] `)).toBe(true);
    const shown = err.split('\n').find((line) => line.startsWith('  Connect'))!;
    expect(shown.endsWith('…')).toBe(true);
    expect(shown.match(/A/g)!.length).toBeLessThan(MAX_SHOWN_MESSAGE_LENGTH);
  });
});

describe('no terminal to ask: nothing opened, the URL printed, exit code 3 (no hang)', () => {
  it('stdin not a terminal, or CI set: the host and the URL on its own line, MCP_AUTH_INTERACTION_REQUIRED', async () => {
    for (const [extra, env] of [
      [{ stdin: Object.assign(new PassThrough(), { isTTY: false }) }, {}],
      [{ stdin: undefined }, {}],
      [{}, { CI: 'true' }],
    ] as [Partial<CliIo>, NodeJS.ProcessEnv][]) {
      s = await startV1ElicitingServer();
      const t = session([], { ...extra, open: async () => expect.unreachable('no terminal: nothing opened') }, env);
      for (const tool of ['files', 'ask']) {
        expect(await run(callFiles(tool), t.io)).toBe(EXIT_NEEDS_USER);
      }
      const host = new URL(s.url).host;
      expect(t.err()).toContain(`open a page on ${host}:`);
      expect(t.err()).toMatch(new RegExp(`^${s.connectBase}/[0-9a-f-]+$`, 'm'));
      expect(t.err()).toContain('[MCP_AUTH_INTERACTION_REQUIRED]');
      expect(t.err()).not.toContain('[y/N]');
      expect(s.answers).toEqual(['cancel']);
      await s.close();
    }
  });

  it('the built command with stdin from /dev/null exits 3 at once', async () => {
    s = await startV1ElicitingServer();
    const bin = join(dirname(fileURLToPath(import.meta.url)), '../bin/mcp-auth-kit.js');
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [bin, ...callFiles()],
        { env: { ...process.env, MCP_AUTH_KIT_HOME: home, CI: '' } },
        (e, _o, stderr) => resolve({ code: e ? ((e as { code?: number }).code ?? null) : 0, stderr }),
      );
      child.stdin?.end();
    });
    expect(code).toBe(EXIT_NEEDS_USER);
    expect(stderr).toMatch(new RegExp(`^${s.connectBase}/[0-9a-f-]+$`, 'm'));
    expect(s.visits).toEqual([]);
  });
});
