import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A TypeScript source, not a declaration file: what most source scans read. */
export const isTypeScriptSource = (path: string): boolean => path.endsWith('.ts') && !path.endsWith('.d.ts');

export interface WalkSourcesOptions {
  /** Which files count (by path); TypeScript sources without declarations unless told. */
  keep?: (path: string) => boolean;
  /** Directory names never descended into (`node_modules`, `dist`, …); none unless told. */
  skip?: readonly string[];
}

/**
 * Every file below `dir` that `keep` accepts, depth first in directory order: the walk the
 * repository's source scans (one rule, one place; egress and cache inventories; comment rules)
 * share, so that each states only which files it reads.
 */
export function walkSources(dir: string, { keep = isTypeScriptSource, skip = [] }: WalkSourcesOptions = {}): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (skip.includes(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walkSources(path, { keep, skip }));
    else if (keep(path)) out.push(path);
  }
  return out;
}
