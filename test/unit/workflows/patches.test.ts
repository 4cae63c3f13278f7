import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATCH, PATCH_IDS } from '../../../src/workflows/patches';

const SRC = path.join(__dirname, '..', '..', '..', 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return /\.(ts|mts|cts|js|mjs)$/.test(name) ? [full] : [];
  });
}

/** `text` without its comments (a comment may name the calls). */
const code = (text: string): string =>
  text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

/** The arguments of the `patched(` / `deprecatePatch(` calls in `text` that name no registry entry. */
function unregistered(text: string, names: readonly string[]): string[] {
  return [...code(text).matchAll(/\b(?:patched|deprecatePatch)\(\s*([^)]*?)\s*\)/g)]
    .map((m) => m[1]!)
    .filter((arg) => {
      const m = /^PATCH\.(\w+)\.id$/.exec(arg);
      return m === null || !names.includes(m[1]!);
    });
}

describe('patch registry (src/workflows/patches.ts)', () => {
  it('every patched/deprecatePatch call in src names an id of the registry, as PATCH.<name>.id', () => {
    const names = Object.keys(PATCH);
    const bad = sources(SRC).flatMap((file) =>
      unregistered(readFileSync(file, 'utf8'), names).map((arg) => `${path.relative(SRC, file)}: ${arg}`),
    );
    expect(bad).toEqual([]);
  });

  it('ids are unique and every entry says what it guards and until when', () => {
    expect(new Set(PATCH_IDS).size).toBe(PATCH_IDS.length);
    for (const e of Object.values(PATCH as Record<string, { id: string; guards: string; until: string }>)) {
      expect(e.id).toMatch(/^[a-z0-9-]+$/);
      expect(e.guards.length).toBeGreaterThan(0);
      expect(e.until.length).toBeGreaterThan(0);
    }
  });

  it('the check refuses a literal id and an unregistered name, and takes a registered one', () => {
    const text =
      "if (patched('made-up-v1')) a(); if (patched(PATCH.gone.id)) b(); deprecatePatch(PATCH.kept.id);\n" +
      '// patched(in-a-comment) /** deprecatePatch(x) */';
    expect(unregistered(text, ['kept'])).toEqual(["'made-up-v1'", 'PATCH.gone.id']);
  });
});
