import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Static imports, re-exports (type-only ones included) and dynamic `import('…')` of a source text. */
const SPECIFIER =
  /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** Every `.ts` file under `dir`, as absolute paths. */
export function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The file a relative specifier in `from` names (extensionless, or a folder's index.ts). */
function resolveSpecifier(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  return [base, `${base}.ts`, path.join(base, 'index.ts')].find((c) => existsSync(c) && statSync(c).isFile());
}

/** The file-level import graph of `dir`: each file and the files of `dir` it imports. */
export function fileGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(dir)) {
    const deps = new Set<string>();
    for (const m of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const spec = m[1] ?? m[2] ?? '';
      if (!spec.startsWith('.')) continue;
      const target = resolveSpecifier(file, spec);
      if (target !== undefined && target.startsWith(dir + path.sep)) deps.add(target);
    }
    graph.set(file, [...deps]);
  }
  return graph;
}

/** The top-level entry (folder or file) of `dir` that holds `file`. */
export function roomOf(dir: string, file: string): string {
  return path.relative(dir, file).split(path.sep)[0] ?? '';
}

/** The folder-level graph: each top-level entry of `dir` and the other entries its files import. */
export function roomGraph(dir: string): Map<string, string[]> {
  const rooms = new Map<string, Set<string>>();
  for (const [file, deps] of fileGraph(dir)) {
    const from = roomOf(dir, file);
    const set = rooms.get(from) ?? new Set<string>();
    for (const d of deps) if (roomOf(dir, d) !== from) set.add(roomOf(dir, d));
    rooms.set(from, set);
  }
  return new Map([...rooms].map(([k, v]) => [k, [...v]]));
}

/** One cycle of `graph` as a path that ends where it starts, or undefined when it has none. */
export function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...trail.slice(trail.indexOf(node)), node];
    state.set(node, 'open');
    trail.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

/** Every file `entry` loads, itself included, following the edges of `graph`. */
export function closure(graph: Map<string, string[]>, entry: string): string[] {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    stack.push(...(graph.get(f) ?? []));
  }
  return [...seen];
}
