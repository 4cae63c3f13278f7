import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Relative link targets of a markdown text (no URLs, no in-page anchors), without their anchors. */
function relativeLinks(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((href) => !/^[a-z]+:/i.test(href) && !href.startsWith('#'))
    .map((href) => href.split('#')[0]!);
}

/** The README is for users: short, every link reaching a file, every doc reachable from it. */
describe('README.md', () => {
  it('is at most 200 lines', () => {
    expect(README.trimEnd().split('\n').length).toBeLessThanOrEqual(200);
  });

  it('links only to files that exist', () => {
    const missing = relativeLinks(README).filter((href) => !existsSync(join(ROOT, href)));
    expect(missing).toEqual([]);
  });

  it('reaches every page of docs/, directly or through a page it links', () => {
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file) || !file.endsWith('.md') || !existsSync(file)) return;
      seen.add(file);
      for (const href of relativeLinks(readFileSync(file, 'utf8'))) visit(join(dirname(file), href));
    };
    visit(join(ROOT, 'README.md'));
    const pages = readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(ROOT, 'docs', f));
    expect(pages.filter((p) => !seen.has(p))).toEqual([]);
  });
});
