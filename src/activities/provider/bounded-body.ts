/** The most a provider's 2xx answer may hold: beyond it the answer is refused, unread. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** The most of a provider's error answer that is read; the rest is discarded unread. */
export const MAX_ERROR_BYTES = 64 * 1024;

/** A provider answer longer than the cap: its body was cancelled after `maxBytes`. */
export class AnswerTooLarge extends Error {
  override name = 'AnswerTooLarge';
  constructor(readonly maxBytes: number) {
    super(`the answer is longer than ${maxBytes} bytes`);
  }
}

/** The body read up to a cap: its text, and whether more followed. */
export interface BoundedText {
  text: string;
  truncated: boolean;
}

/**
 * Reads at most `maxBytes` of a response body as UTF-8, chunk by chunk, and cancels the stream past
 * it, so a long or endless answer costs at most the cap in memory. A `Content-Length` over the cap
 * is not read at all.
 */
export async function readBounded(res: Response, maxBytes: number): Promise<BoundedText> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    return { text: '', truncated: true };
  }
  if (!res.body) return { text: '', truncated: false };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let read = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: text + decoder.decode(), truncated: false };
    const room = maxBytes - read;
    if (value.byteLength > room) {
      text += decoder.decode(value.subarray(0, room));
      await reader.cancel().catch(() => undefined);
      return { text, truncated: true };
    }
    read += value.byteLength;
    text += decoder.decode(value, { stream: true });
  }
}

/** A 2xx answer as JSON (null when it does not parse); AnswerTooLarge past `maxBytes`. */
export async function readAnswerJson(res: Response, maxBytes = MAX_ANSWER_BYTES): Promise<unknown> {
  const { text, truncated } = await readBounded(res, maxBytes);
  if (truncated) throw new AnswerTooLarge(maxBytes);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
