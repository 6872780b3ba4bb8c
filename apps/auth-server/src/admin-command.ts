/**
 * What every admin command module shares: the tool's output, its three refusals (each with its
 * own exit code) and the context a command runs in. The commands themselves live one group a
 * file (admin-users.ts, admin-grants.ts, admin-clients.ts, admin-keys.ts); admin.ts parses the
 * command line and dispatches.
 */
import type { AccountRecord, Actor, AdminService, Store } from '@mcp-auth-kit/authorization-server';
import { joinText, terminalText, type TerminalText } from '@mcp-auth-kit/protocol';

/**
 * The admin tool's output, a line at a time. Lines are {@link TerminalText}: what the store holds
 * (usernames, display names, client ids, linked identities) is data, never layout — an escape
 * sequence, OSC 52 / OSC 8, TAB or LF in a stored name prints as a visible escape inside its own
 * row (admin-main.ts writes through the protocol package's one terminal writer).
 */
export interface AdminIo {
  out(line: TerminalText): void;
  err(line: TerminalText): void;
  /**
   * Reads a new password: AS_ADMIN_PASSWORD, else a prompt without echo asked twice (a
   * terminal), else the first line of stdin (a pipe). '' when none was given; throwing an
   * Error (e.g. the two entries differ) stops the command with that message.
   */
  readPassword(): Promise<string>;
}

/** How to run the tool, as named in messages: only commands that exist in this repository. */
export const ADMIN_COMMAND = 'npm run admin --';

/** The admin tool as the audit log names it: the operator at the terminal has no account of their own here. */
export const CLI_ACTOR: Actor = { sub: 'admin-tool', via: 'cli' };

/** The command line cannot be understood: the message, then the usage (exit 2). */
export class UsageError extends Error {}

/** A well-formed command that is refused as given (a value out of range): the message alone (exit 2). */
export class RefusedError extends Error {}

/** The command ran and failed (no such user, already exists, …): the message alone (exit 1). */
export class AdminError extends Error {}

/** The options the tool's command line takes (admin.ts parses them). */
export interface AdminOptionValues {
  'display-name'?: string;
  'retire-after'?: string;
  adopt?: boolean;
}

/** One parsed command, with the store open. */
export interface AdminContext {
  /** `<group> <action>`, e.g. `user add`: a key of the dispatch table. */
  readonly key: string;
  readonly action: string | undefined;
  /** The words of the command line: group, action, then the command's own arguments. */
  readonly positionals: readonly string[];
  readonly values: AdminOptionValues;
  /** `grants revoke`'s client_id, taken before option parsing (it may start with "-"). */
  readonly clientArg: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly io: AdminIo;
  readonly store: Store;
  /** One service with the console's JSON API: the two never disagree (issue 44). */
  readonly service: AdminService;
  /** The username argument, or a usage error naming the command. */
  requireName(): string;
  /** The account the username argument names, or a failure pointing at `user list`. */
  findUser(): Promise<AccountRecord>;
}

/** One command: prints its result through `ctx.io` (exit 0) or throws one of the errors above. */
export type AdminCommand = (ctx: AdminContext) => Promise<void>;

/** One list row: tab-separated columns, each a value made visible (no TAB or LF of its own). */
export function userRow(columns: readonly unknown[]): TerminalText {
  return joinText(
    columns.map((c) => terminalText`${c}`),
    '\t',
  );
}
