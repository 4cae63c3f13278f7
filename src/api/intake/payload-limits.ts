import { ApiError } from '../../contract/errors';

/**
 * Temporal refuses a payload over 2 MiB (and warns from 512 KiB). Whatever the API hands Temporal as
 * one workflow-start argument (a run's spec, a batch's spec with all its items) must stay below this,
 * with room for the envelope: larger requests are refused at the door, never failed later.
 */
export const MAX_START_ARGUMENT_BYTES = 1536 * 1024;

/** 413 payload_too_large when `value` as JSON is over the start-argument limit. */
export function assertFitsOnePayload(value: unknown, what: string, hint: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes <= MAX_START_ARGUMENT_BYTES) return;
  throw new ApiError(
    'payload_too_large',
    `${what} comes to ${bytes} bytes as JSON; the limit is ${MAX_START_ARGUMENT_BYTES} bytes (1.5 MiB, ` +
      `under Temporal's 2 MiB payload limit). ${hint}`,
    { limitBytes: MAX_START_ARGUMENT_BYTES, bytes },
  );
}
