/**
 * Names the model step a call belongs to (`<runId>:<step>`), the same on every retry of it, so the
 * provider side can tell whether a retry came before the Retry-After it was given. Providers ignore
 * headers they do not know.
 */
export const CALL_KEY_HEADER = 'x-fairway-call-key';

/** Names the tenant a call is billed to, for providers (and the simulator) that split the bill by it; Fairway also sends it as OpenAI's `user` field. */
export const TENANT_HEADER = 'x-fairway-tenant';

/**
 * Names one call made (the durable call intent's key, new on every retry), so the provider side
 * can answer what it served for it: the simulator's usage endpoint reads it, as would a gateway
 * that logs requests by a caller's id.
 */
export const CALL_ID_HEADER = 'x-fairway-call-id';

/**
 * The `metadata` field an OpenAI chat completion sent with `store: true` carries the call id in:
 * `GET /v1/chat/completions?metadata[fairway_call]=<id>` lists what was served for it, with usage.
 */
export const CALL_METADATA_KEY = 'fairway_call';

/** The body fields that make a call findable by its id afterwards (OpenAI stored completions). */
export function storedCallFields(callId: string | undefined): Record<string, unknown> {
  return callId === undefined ? {} : { store: true, metadata: { [CALL_METADATA_KEY]: callId } };
}
