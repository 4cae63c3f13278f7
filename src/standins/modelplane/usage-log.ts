/** One served call as the usage endpoint answers it (OpenAI's stored chat completion, in part). */
export interface ServedCall {
  id: string;
  created: number;
  model: string;
  tenant: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/**
 * What the simulator served, by the caller's call id (the `metadata.fairway_call` of a stored
 * OpenAI completion, or the `x-fairway-call-id` header as a gateway logs a request id): the
 * provider's own record of its bill, call by call. Bounded: past `max` ids the oldest go first.
 */
export class UsageLog {
  private readonly byId = new Map<string, ServedCall[]>();

  constructor(private readonly max = 500_000) {}

  served(callId: string | undefined, call: ServedCall): void {
    if (callId === undefined || callId === '') return;
    const list = this.byId.get(callId);
    if (list) list.push(call);
    else this.byId.set(callId, [call]);
    while (this.byId.size > this.max) this.byId.delete(this.byId.keys().next().value as string);
  }

  /** The calls served for `callId`, oldest first (none: never served). */
  of(callId: string): ServedCall[] {
    return this.byId.get(callId) ?? [];
  }
}
