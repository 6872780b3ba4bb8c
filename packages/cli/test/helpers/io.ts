import type { CliIo } from '../../src/program.js';

/**
 * A CliIo for a test: keeps what the program writes to stdout and stderr and every URL it opens
 * (each handed on to `open`, when given); `more` sets the other fields (a TTY, colour).
 */
export function recordingIo(env: NodeJS.ProcessEnv, { open, ...more }: Partial<CliIo> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const opened: URL[] = [];
  const io: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env,
    ...(open && {
      open: (url: URL) => {
        opened.push(url);
        return open(url);
      },
    }),
    ...more,
  };
  return { io, opened, out: () => out.join(''), err: () => err.join('') };
}
