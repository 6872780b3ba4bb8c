import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
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
  constructor(path: string) {
    super();
    this.path = path;
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
