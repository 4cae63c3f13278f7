/**
 * Names the model step a call belongs to (`<runId>:<step>`), the same on every retry of it, so the
 * provider side can tell whether a retry came before the Retry-After it was given. Providers ignore
 * headers they do not know.
 */
export const CALL_KEY_HEADER = 'x-fairway-call-key';
