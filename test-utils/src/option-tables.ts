/**
 * The README option tables checked against a package's config schema and defaults tree (issue 43):
 * one parser and one schema walk for the authorization server, the resource server and the client.
 * The schema is read structurally (`_zod.def`), so test-utils needs no zod of its own.
 */

/** A zod (v4) schema, as far as walking its objects needs. */
export interface OptionSchema {
  readonly _zod: { readonly def: unknown };
}

export interface OptionRowsOptions {
  /** Rewrites a row's name before the generic `[]` / `.<name>` marks are dropped (a table naming a nested list's fields by their own prefix). */
  readonly rename?: (name: string) => string;
}

/**
 * Rows of the tables whose header is `| field | … default … | meaning |`: option path → default cell.
 * `[]` marks each element of a list, `.<name>` each member of a map (`thirdParty.providers.<name>.x`).
 */
export function optionRows(markdown: string, options: OptionRowsOptions = {}): Map<string, string> {
  const rows = new Map<string, string>();
  let inTable = false;
  for (const line of markdown.split('\n')) {
    if (/^\| field \| [^|]*default[^|]* \| meaning \|$/.test(line)) {
      inTable = true;
      continue;
    }
    if (!line.startsWith('|')) inTable = false;
    if (!inTable || line.startsWith('| ---')) continue;
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    const name = /^`([^`]+)`/.exec(cells[1] ?? '')?.[1];
    if (!name) continue;
    const path = (options.rename?.(name) ?? name).replace(/\[\]/g, '').replace(/\.<name>/g, '');
    rows.set(path, cells[2] ?? '');
  }
  return rows;
}

function unwrap(schema: OptionSchema): OptionSchema {
  const def = schema._zod.def as { type: string; innerType?: OptionSchema };
  return def.type === 'optional' && def.innerType ? unwrap(def.innerType) : schema;
}

/** Every option path of the schema: nested objects are walked, anything else (unions included) is a leaf. */
export function schemaPaths(schema: OptionSchema, prefix = ''): string[] {
  const inner = unwrap(schema);
  const def = inner._zod.def as { type: string; shape?: Record<string, OptionSchema> };
  if (def.type !== 'object' || !def.shape) return [prefix];
  return Object.entries(def.shape).flatMap(([key, child]) => schemaPaths(child, prefix ? `${prefix}.${key}` : key));
}

export interface ShownOptions {
  /** Strings as TypeScript literals (`'auto'`), the way the resource server's and the client's READMEs write them. */
  readonly quoteStrings?: boolean;
}

/** The default as the README writes it: `300`, `true`, `ES256 EdDSA`, `[]`, `{ max: 20, windowSeconds: 3600 }`. */
export function shown(value: unknown, options: ShownOptions = {}): string {
  if (Array.isArray(value)) return value.length ? value.map((v) => shown(v, options)).join(' ') : '[]';
  if (value && typeof value === 'object')
    return `{ ${Object.entries(value)
      .map(([k, v]) => `${k}: ${shown(v, options)}`)
      .join(', ')} }`;
  return typeof value === 'string' && options.quoteStrings ? `'${value}'` : String(value);
}

/** The path itself, then each parent, nearest first: `a.b.c`, `a.b`, `a`. */
export function ancestors(path: string): string[] {
  return path.split('.').map((_, i, parts) => parts.slice(0, parts.length - i).join('.'));
}

/** Options of the schema with no row of their own nor a parent's. */
export function missingRows(schema: OptionSchema, rows: ReadonlyMap<string, string>): string[] {
  return schemaPaths(schema).filter((path) => !ancestors(path).some((p) => rows.has(p)));
}

function defaultLeaves(value: unknown, prefix = ''): string[] {
  if (value && typeof value === 'object' && !Array.isArray(value))
    return Object.entries(value).flatMap(([k, v]) => defaultLeaves(v, prefix ? `${prefix}.${k}` : k));
  return [prefix];
}

function get(tree: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], tree);
}

export interface WrongDefaultsOptions extends ShownOptions {
  /** Top-level branches of the defaults tree that are no option (documented where their function is). */
  readonly notOptions?: readonly string[];
}

/**
 * Each default of the tree whose row (its own, else the nearest parent's, which then shows the
 * whole object) does not state it as `` `value` ``: one line per problem, empty when all agree.
 */
export function wrongDefaults(defaults: unknown, rows: ReadonlyMap<string, string>, options: WrongDefaultsOptions = {}): string[] {
  const wrong: string[] = [];
  for (const path of defaultLeaves(defaults)) {
    if (options.notOptions?.includes(path.split('.')[0]!)) continue;
    const at = ancestors(path).find((p) => rows.has(p));
    if (!at) {
      wrong.push(`${path}: no row`);
      continue;
    }
    const expected = shown(get(defaults, at), options);
    if (!rows.get(at)!.includes(`\`${expected}\``)) wrong.push(`${at}: README says ${rows.get(at)}, the default is \`${expected}\``);
  }
  return wrong;
}
