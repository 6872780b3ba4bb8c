/**
 * The README's complete tests are the files in test/readme/, byte for byte: what a user pastes
 * is what runs here (against SDK v1, stateless and stateful, SDK v2, and a tool that calls a third party).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
const readme = read('../README.md');
const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);

describe('README snippets', () => {
  it.each(['sdk-v1.test.ts', 'sdk-v2.test.ts', 'third-party.test.ts'])('test/readme/%s is a code block of the README', (file) => {
    const source = read(`./readme/${file}`);
    expect(source.length).toBeGreaterThan(1000);
    expect(blocks).toContain(source);
  });
});
