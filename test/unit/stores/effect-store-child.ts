/**
 * Run as a separate process by the effect-store test: waits for a shared start time so both
 * processes race, applies keys 0..n-1, prints how many it applied. `location`: a file or a URL.
 */
import { openEffectStore } from '../../../src/stores/open';

async function main(): Promise<void> {
  const [location, count, startAt] = process.argv.slice(2);
  const store = await openEffectStore(String(location));
  while (Date.now() < Number(startAt)) {
    // Spin: a timer's granularity would let one process start well ahead of the other.
  }
  let applied = 0;
  for (let i = 0; i < Number(count); i += 1) {
    if ((await store.apply(`effect-${i}`, { by: process.pid, i })).applied) applied += 1;
  }
  await store.close();
  process.stdout.write(String(applied));
}

void main();
