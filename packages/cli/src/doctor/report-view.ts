/**
 * The doctor's report for people: findings grouped in the order a client meets them, each with its
 * status, section and fix. Every server-sent value passes `terminalText` (data, never layout).
 */
import { joinText, ownLayout, terminalText, type Terminal, type TerminalStyle, type TerminalText } from '@mcp-auth-kit/protocol';
import type { DeploymentReport, Finding, FindingGroup, FindingStatus } from '@mcp-auth-kit/client/doctor';

const GROUP_TITLES: Record<FindingGroup, string> = {
  challenge: 'Unauthenticated request and challenge',
  'resource-metadata': 'Protected Resource Metadata (RFC 9728)',
  'authorization-server': 'Authorization server metadata (RFC 8414)',
  browser: 'Origin and CORS (browser clients)',
  token: 'With a token',
  refresh: 'Refresh tokens',
};

const MARKS: Record<FindingStatus, [string, TerminalStyle]> = {
  pass: ['PASS', 'green'],
  warn: ['WARN', 'yellow'],
  fail: ['FAIL', 'red'],
  skip: ['SKIP', 'dim'],
};

const EVIDENCE_LINES = 40;

/** Styled text made by the program (a mark, a label): styles compose by joining, never by interpolation. */
const own = (term: Terminal, style: TerminalStyle, text: string) => term.style(style, ownLayout(text));

function findingText(term: Terminal, f: Finding, verbose: boolean): TerminalText {
  const [mark, style] = MARKS[f.status];
  const lines: TerminalText[] = [own(term, style, `  ${mark} `), terminalText`${f.title}\n`];
  lines.push(term.style('dim', terminalText`       ${f.section}`), ownLayout('\n'));
  if (f.fix) lines.push(own(term, 'cyan', '       fix: '), terminalText`${f.fix}\n`);
  // the evidence of what went wrong: the request line and the answer's headers (all of it with --verbose)
  if (verbose || f.status === 'fail' || f.status === 'warn') {
    if (f.sent) lines.push(evidenceText(term, 'sent', verbose ? f.sent : firstLines(f.sent, 1)));
    if (f.received) lines.push(evidenceText(term, 'received', verbose ? f.received : firstLines(f.received, 4)));
  }
  return joinText(lines);
}

/** The head of an exchange: its first `max` lines, up to the blank line before a body. */
function firstLines(text: string, max: number): string {
  const head = text.split('\n\n')[0]!.split('\n');
  return head.slice(0, max).join('\n') + (head.length > max || text.includes('\n\n') ? '\n…' : '');
}

/** One value per line (a line break of the value is the program's layout here, each line escaped on its own). */
function evidenceText(term: Terminal, label: string, text: string): TerminalText {
  const all = text.split('\n');
  const lines = all.slice(0, EVIDENCE_LINES).map((line) => terminalText`         ${line}\n`);
  if (all.length > EVIDENCE_LINES) lines.push(terminalText`         … (--verbose or --json show it all)\n`);
  return joinText([own(term, 'dim', `       ${label}:\n`), ...lines]);
}

/** Writes the grouped report and a summary line. */
export function writeReport(term: Terminal, report: DeploymentReport, verbose = false): void {
  term.out(joinText([term.style('bold', terminalText`mcp-auth-kit doctor ${report.url}`), ownLayout('\n')]));
  let group: FindingGroup | undefined;
  for (const f of report.findings) {
    if (f.group !== group) {
      group = f.group;
      term.out(joinText([ownLayout('\n'), own(term, 'bold', GROUP_TITLES[group]), ownLayout('\n')]));
    }
    term.out(findingText(term, f, verbose));
  }
  const { pass, warn, fail, skip } = report.summary;
  const [, style] = MARKS[report.status];
  term.out(
    joinText([
      ownLayout('\n'),
      own(term, style, report.status.toUpperCase()),
      terminalText`: ${pass} passed, ${warn} warnings, ${fail} failed, ${skip} skipped (${report.requests} requests)\n`,
    ]),
  );
}
