/** Whether `value` can be sent and recorded as JSON (a BigInt or a cycle cannot). Sandbox-safe. */
export function isJsonData(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return true;
  } catch {
    return false;
  }
}
