import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { CliConfig } from '../config';
import { CliError, EXIT } from './client';

export const DEFAULT_URL = 'http://localhost:3000';

const ProfileSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).optional(),
  token: z.string().min(1).optional(),
});

/** `~/.config/fairway/config.json`: named profiles and the one used when none is chosen. */
const ConfigFileSchema = z.strictObject({
  default: z.string().min(1).optional(),
  profiles: z.record(z.string(), ProfileSchema).default({}),
});
type ConfigFile = z.output<typeof ConfigFileSchema>;

export interface Flags {
  url?: string | undefined;
  token?: string | undefined;
  profile?: string | undefined;
}

export interface Settings {
  url: string;
  token: string | undefined;
}

function readConfigFile(file: string): ConfigFile | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`Cannot read ${file}: ${(err as Error).message}`, EXIT.usage);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${file} is not JSON: ${(err as Error).message}`, EXIT.usage);
  }
  const parsed = ConfigFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new CliError(`${file} is invalid: ${issues.join('; ')}`, EXIT.usage);
  }
  return parsed.data;
}

/**
 * Where the API is and which token to send. Each value comes from the first of: the flag
 * (`--url`, `--token`); the profile chosen with `--profile`; the environment (FAIRWAY_URL,
 * FAIRWAY_ADMIN_TOKEN or ADMIN_TOKEN); the profile named by FAIRWAY_PROFILE or the file's
 * `default`; for the URL, http://localhost:3000.
 */
export function resolveSettings(flags: Flags, env: CliConfig): Settings {
  const file = readConfigFile(env.configFile);
  const pick = (name: string | undefined) => {
    if (name === undefined) return undefined;
    const p = file?.profiles[name];
    if (!p) {
      const known = Object.keys(file?.profiles ?? {});
      throw new CliError(
        `No profile "${name}" in ${env.configFile}` +
          (known.length ? ` (profiles: ${known.join(', ')}).` : ' (the file has no profiles).'),
        EXIT.usage,
      );
    }
    return p;
  };
  const chosen = pick(flags.profile);
  const fallback = flags.profile ? undefined : pick(env.profile ?? file?.default);
  const url = flags.url ?? chosen?.url ?? env.url ?? fallback?.url ?? DEFAULT_URL;
  if (flags.url !== undefined && !z.url({ protocol: /^https?$/ }).safeParse(flags.url).success) {
    throw new CliError(`--url must be an http(s) URL, not "${flags.url}".`, EXIT.usage);
  }
  return {
    url: url.replace(/\/+$/, ''),
    token: flags.token ?? chosen?.token ?? env.adminToken ?? fallback?.token,
  };
}
