/**
 * Names the model step a call belongs to (`<runId>:<step>`), the same on every retry of it, so the
 * provider side can tell whether a retry came before the Retry-After it was given. Providers ignore
 * headers they do not know.
 */
export const CALL_KEY_HEADER = 'x-fairway-call-key';

/** Names the tenant a call is billed to, for providers (and the simulator) that split the bill by it; Fairway also sends it as OpenAI's `user` field. */
export const TENANT_HEADER = 'x-fairway-tenant';
