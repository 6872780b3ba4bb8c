import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Relative links of the repository's Markdown land somewhere: the file exists and, for a
 * `#fragment` into a Markdown file, a heading of that file has that anchor (GitHub's slugs). When
 * a document is split or a section renamed (bench/README.md's notebook became bench/HISTORY.md,
 * issue 43), a link still pointing at the old place fails here instead of on GitHub.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.startsWith('.changeset/') && !f.endsWith('CHANGELOG.md'));

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of markdown.replace(/```[\s\S]*?```/g, '').split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

function links(markdown: string): string[] {
  const text = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

describe('relative links in Markdown resolve', () => {
  it('the scan sees the documents it is for', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'ARCHITECTURE.md', 'bench/README.md', 'bench/HISTORY.md']));
  });

  it('slugs as GitHub makes them', () => {
    expect([...anchors('## Twelfth pass (issue 25, 2026-12-05 evening, an AMD EPYC VM)\n## Quick start\n## Quick start')]).toEqual([
      'twelfth-pass-issue-25-2026-12-05-evening-an-amd-epyc-vm',
      'quick-start',
      'quick-start-1',
    ]);
  });

  for (const doc of DOCS) {
    it(`${doc}: every relative link's file and anchor exist`, () => {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      const broken: string[] = [];
      for (const link of links(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//')) continue; // absolute URL, mailto:
        const [path = '', fragment] = link.split('#');
        const target = path === '' ? join(ROOT, doc) : join(ROOT, dirname(doc), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (fragment && target.endsWith('.md') && statSync(target).isFile()) {
          if (!anchors(readFileSync(target, 'utf8')).has(decodeURIComponent(fragment))) broken.push(`${link}: no such heading`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});
