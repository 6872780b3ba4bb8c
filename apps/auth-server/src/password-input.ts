/**
 * Where the admin tool's new passwords come from, never the command line: AS_ADMIN_PASSWORD;
 * else, on a terminal, a prompt without echo asked twice; else (a pipe, a script) the first
 * line of stdin, read once. '' means none was given (runAdmin says so).
 */
import { createInterface } from 'node:readline';
import { read } from 'read';

export interface PasswordSource {
  env: NodeJS.ProcessEnv;
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Prompts go here (stderr), so stdout stays the command's output. */
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

async function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  const lines = createInterface({ input, terminal: false, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  return '';
}

/** `read` mutes the terminal (mute-stream): nothing typed is echoed, not even as `*`. */
async function prompt(source: PasswordSource, text: string): Promise<string> {
  try {
    return await read({ prompt: text, silent: true, replace: '', input: source.input, output: source.output });
  } catch (err) {
    // Ctrl-C / Ctrl-D at the prompt.
    if ((err as Error).message === 'canceled') throw new Error('canceled; nothing changed');
    throw err;
  }
}

export async function readNewPassword(source: PasswordSource): Promise<string> {
  const fromEnv = source.env.AS_ADMIN_PASSWORD;
  if (fromEnv) return fromEnv;
  if (!source.input.isTTY) return firstLine(source.input);
  const first = await prompt(source, 'new password (not shown): ');
  if (!first) return '';
  const second = await prompt(source, 'the same password again: ');
  if (first !== second) throw new Error('the two passwords differ; nothing changed');
  return first;
}
