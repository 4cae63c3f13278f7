import type { z } from 'zod';
import { ApiError, type FieldIssue } from '../../contract/errors';

/** Longest details list a 400 carries: a batch of 10,000 bad items must not answer with 10,000 lines. */
const MAX_ISSUES = 100;

function joinPath(prefix: readonly PropertyKey[], path: readonly PropertyKey[]): string {
  const parts = [...prefix, ...path].map(String);
  return parts.length === 0 ? '(body)' : parts.join('.');
}

/** Zod issues as `{path, message}`, one per bad field; an unrecognised key gets its own path. */
export function issuesToDetails(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly PropertyKey[] = [],
): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        out.push({ path: joinPath(prefix, [...issue.path, key]), message: 'Unknown field.' });
      }
    } else {
      out.push({ path: joinPath(prefix, issue.path), message: issue.message });
    }
  }
  return out;
}

/** Caps a details list, saying how many were left off. */
export function capDetails(details: FieldIssue[]): FieldIssue[] {
  if (details.length <= MAX_ISSUES) return details;
  const rest = details.length - MAX_ISSUES;
  return [
    ...details.slice(0, MAX_ISSUES),
    { path: '(more)', message: `${rest} further problems not listed.` },
  ];
}

/** Parses `value` or throws a 400 invalid_request whose details name each bad field under `prefix`. */
export function parseOr400<S extends z.ZodType>(
  schema: S,
  value: unknown,
  prefix: readonly PropertyKey[] = [],
): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw ApiError.invalid(capDetails(issuesToDetails(result.error.issues, prefix)));
  return result.data;
}
