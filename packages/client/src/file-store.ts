import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { homedir } from 'node:os';
import { ERR, McpAuthError } from './errors.js';
import { DataStore, emptyStoreData, type StoreData } from './store.js';
import { takeLock } from './store-lock.js';
import { assertTrusted, factsOf, makePrivate } from './store-trust.js';
import { DEFAULTS } from './config/defaults.js';

/** Settings of a {@link FileStore}. */
export interface FileStoreOptions {
  /** How long to wait for another process that holds the store (default 60 000 ms). */
  lockWaitMs?: number;
  /**
   * Told (once per path and process) when a store directory or file of its user's own was
   * readable by group or others and its mode was narrowed to 0700 / 0600 (a sentence without a
   * line break). Default: a line on stderr.
   */
  onRepair?: (message: string) => void;
}

/**
 * JSON file store. The file is created with mode 0600 in a 0700 directory and replaced
 * atomically (write to a temporary file in the same directory, fsync, rename), so a crash never
 * leaves a half-written token file. It trusts only what its user owns: a directory, file or lock
 * owned by someone else, writable by group or others, or a symbolic link is refused
 * (`MCP_AUTH_STORE_UNSAFE`), and no error shows the file's content; its own directory or file
 * that group or others may read is made private (0700 / 0600) and `onRepair` is told.
 */
export class FileStore extends DataStore {
  readonly path: string;
  private readonly lockWaitMs: number;
  private readonly onRepair: (message: string) => void;
  constructor(path: string, options: FileStoreOptions = {}) {
    super();
    this.path = path;
    this.lockWaitMs = options.lockWaitMs ?? DEFAULTS.fileStore.lockWaitMs;
    this.onRepair = options.onRepair ?? ((message) => process.stderr.write(`${message}\n`));
  }

  /**
   * Cross-process lock: `<path>.lock` for the data, `<path>.<hash of key>.lock` for a keyed
   * section (a refresh), held with a heartbeat and taken over only when its holder is gone.
   */
  protected override async acquire(key?: string): Promise<() => Promise<void>> {
    await this.directory();
    const suffix = key === undefined ? '' : `.${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
    return takeLock(`${this.path}${suffix}.lock`, this.lockWaitMs);
  }

  /**
   * The store's directory, refused when it is not its user's own; created 0700 when missing if
   * `create`, else undefined when missing (reading creates nothing).
   */
  private async directory(create = true): Promise<string | undefined> {
    const dir = dirname(this.path);
    if (create) await mkdir(dir, { recursive: true, mode: 0o700 });
    let st: Awaited<ReturnType<typeof stat>>;
    try {
      st = await stat(dir);
    } catch (err) {
      if (!create && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    assertTrusted('directory', dir, factsOf(st));
    await makePrivate('directory', dir, factsOf(st), (mode) => chmod(dir, mode), this.onRepair);
    return dir;
  }

  protected async read(): Promise<StoreData> {
    if ((await this.directory(false)) === undefined) return emptyStoreData();
    let text: string;
    try {
      // O_NOFOLLOW: a symbolic link is refused by the open itself, so nothing is read through one
      const fh = await open(this.path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
      try {
        const facts = factsOf(await fh.stat());
        assertTrusted('file', this.path, facts);
        await makePrivate('file', this.path, facts, (mode) => fh.chmod(mode), this.onRepair);
        text = await fh.readFile('utf8');
      } finally {
        await fh.close();
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return emptyStoreData();
      if (code === 'ELOOP' || code === 'EMLINK') {
        assertTrusted('file', this.path, factsOf(await lstat(this.path)));
      }
      throw err;
    }
    let data: StoreData;
    try {
      data = JSON.parse(text) as StoreData;
    } catch {
      // the parser's message quotes the text: never shown, it may be someone else's file
      throw new McpAuthError(ERR.STORE_UNSAFE, `the token store file ${this.path} is not JSON; move it away (you will log in again)`);
    }
    if (data?.version !== 1) throw new Error(`unsupported store file format in ${this.path}`);
    return { ...emptyStoreData(), ...data };
  }

  protected async write(data: StoreData): Promise<void> {
    const dir = (await this.directory())!;
    const tmp = join(dir, `.${randomBytes(8).toString('hex')}.tmp`);
    const fh = await open(tmp, 'wx', 0o600);
    try {
      await fh.writeFile(JSON.stringify(data, null, 2));
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      // rename replaces a symbolic link at the path itself, never the file it points to
      await rename(tmp, this.path);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }
}

/** `$MCP_AUTH_KIT_HOME`, else `$XDG_CONFIG_HOME/mcp-auth-kit`, else `~/.config/mcp-auth-kit`. */
export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MCP_AUTH_KIT_HOME) return env.MCP_AUTH_KIT_HOME;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'mcp-auth-kit');
}

export function defaultStorePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(defaultStoreDir(env), 'store.json');
}
