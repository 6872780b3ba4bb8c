import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { homedir } from 'node:os';
import { DataStore, emptyStoreData, type StoreData } from './store.js';

/**
 * JSON file store. The file is created with mode 0600 in a 0700 directory and replaced
 * atomically (write to a temporary file in the same directory, fsync, rename), so a crash never
 * leaves a half-written token file.
 */
export class FileStore extends DataStore {
  readonly path: string;
  /** Locks older than this are considered left behind by a crashed process. */
  private static readonly STALE_MS = 30_000;
  constructor(path: string) {
    super();
    this.path = path;
  }

  /** Cross-process lock: `<path>.lock`, created with O_EXCL; a lock older than 30 s is stale. */
  protected override async acquire(timeoutMs = 30_000): Promise<() => Promise<void>> {
    const lock = `${this.path}.lock`;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const fh = await open(lock, 'wx', 0o600);
        await fh.writeFile(String(process.pid)).finally(() => fh.close());
        return () => unlink(lock).catch(() => undefined);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const age = await stat(lock).then(
          (st) => Date.now() - st.mtimeMs,
          () => 0,
        );
        if (age > FileStore.STALE_MS) {
          await unlink(lock).catch(() => undefined);
          continue;
        }
        if (Date.now() > deadline) throw new Error(`timed out waiting for the store lock ${lock}`);
        await sleep(25);
      }
    }
  }

  protected async read(): Promise<StoreData> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyStoreData();
      throw err;
    }
    const data = JSON.parse(text) as StoreData;
    if (data?.version !== 1) throw new Error(`unsupported store file format in ${this.path}`);
    return { ...emptyStoreData(), ...data };
  }

  protected async write(data: StoreData): Promise<void> {
    const dir = dirname(this.path);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `.${randomBytes(8).toString('hex')}.tmp`);
    const fh = await open(tmp, 'wx', 0o600);
    try {
      await fh.writeFile(JSON.stringify(data, null, 2));
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
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
