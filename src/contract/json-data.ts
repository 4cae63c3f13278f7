/** `value` as JSON text (undefined for undefined), or why it cannot be (a BigInt, a cycle, a throwing toJSON). Sandbox-safe. */
export function jsonText(value: unknown): { text: string | undefined; error?: string } {
  try {
    return { text: value === undefined ? undefined : JSON.stringify(value) };
  } catch (err) {
    return { text: undefined, error: thrownMessage(err) };
  }
}

/** Whether `value` can be sent and recorded as JSON (a BigInt or a cycle cannot). Sandbox-safe. */
export function isJsonData(value: unknown): boolean {
  return jsonText(value).error === undefined;
}

/** What was thrown, as text; a value that cannot be made text (its getter or toString throws) is `unreadable`. Sandbox-safe. */
export function thrownMessage(err: unknown, unreadable = 'a value that cannot be shown as text'): string {
  try {
    return err instanceof Error ? String(err.message) : String(err);
  } catch {
    return unreadable;
  }
}
