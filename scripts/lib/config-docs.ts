import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import type { z } from 'zod';
import { ENV_SECTIONS } from '../../src/config';

/** The files `npm run docs:config` writes from the schema in src/config.ts. */
export const ROOT = path.join(__dirname, '..', '..');
export const CONFIG_DOC = path.join(ROOT, 'docs', 'configuration.md');
export const ENV_EXAMPLE = path.join(ROOT, '.env.example');

interface Variable {
  name: string;
  /** The value an empty environment gets, as the variable would be written; '' when unset. */
  example: string;
  description: string;
}

/** A variable's default as its environment value: what parsing an unset variable gives, written back. */
function defaultText(schema: z.ZodType): string {
  const value: unknown = schema.parse(undefined);
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.join(',');
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

function sections(): { title: string; vars: Variable[] }[] {
  return ENV_SECTIONS.map((s) => ({
    title: s.title,
    vars: Object.entries(s.vars).map(([name, schema]) => {
      if (!schema.description) throw new Error(`${name} has no description in src/config.ts`);
      return { name, example: defaultText(schema), description: schema.description };
    }),
  }));
}

/** `text` as `# ` comment lines of at most `width` characters. */
function comment(text: string, width = 100): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.split(/\s+/)) {
    if (line.length + 1 + word.length > width && line !== '#') {
      lines.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return lines;
}

const ENV_HEADER = [
  '# Every environment variable Fairway reads, with its default. All are optional. An empty value',
  '# means "unset". Generated from src/config.ts by `npm run docs:config`; do not edit.',
  '# Fairway does not load this file itself: export the variables (e.g. `set -a; . ./.env; set +a`)',
  '# or copy it to .env for docker compose, which reads .env for the ${...} substitutions in',
  '# docker-compose.yml (ADMIN_TOKEN and the three TOOL_*_CREDENTIAL must then be non-empty, e.g.',
  '# each `openssl rand -hex 24`).',
];

/** The text of .env.example. */
export function renderEnvExample(): string {
  const out = [...ENV_HEADER];
  for (const s of sections()) {
    out.push('', `# --- ${s.title} ---`);
    for (const v of s.vars) out.push(...comment(v.description), `${v.name}=${v.example}`);
  }
  return `${out.join('\n')}\n`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The text of docs/configuration.md, formatted as `npm run lint` wants. */
export async function renderConfigDoc(): Promise<string> {
  const out = [
    '# Configuration',
    '',
    '<!-- Generated from src/config.ts by `npm run docs:config`; do not edit. -->',
    '',
    'Fairway reads its settings from the environment only, once, through the zod schema in',
    '[`src/config.ts`](../src/config.ts); nothing else reads `process.env`. Every variable is',
    'optional, and an empty value means unset. [`.env.example`](../.env.example) lists the same',
    'variables with their defaults, ready to copy. A value the schema refuses stops the process at',
    'start with a message naming the variable.',
  ];
  for (const s of sections()) {
    out.push('', `## ${s.title}`, '', '| Variable | Default | Meaning |', '| --- | --- | --- |');
    for (const v of s.vars) {
      const def = v.example === '' ? 'unset' : `\`${v.example}\``;
      out.push(`| \`${v.name}\` | ${def} | ${cell(v.description)} |`);
    }
  }
  const options = (await resolveConfig(CONFIG_DOC)) ?? {};
  return format(`${out.join('\n')}\n`, { ...options, filepath: CONFIG_DOC });
}
