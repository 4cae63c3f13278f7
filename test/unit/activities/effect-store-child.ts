/**
 * Run as a separate process by the effect-store test: waits for a shared start
 * time so both processes race, applies keys 0..n-1, prints how many it applied.
 */
import { openEffectStore } from '../../../src/activities/effect-store';

const [file, count, startAt] = process.argv.slice(2);
const store = openEffectStore(String(file));
while (Date.now() < Number(startAt)) {
  // Spin: a timer's granularity would let one process start well ahead of the other.
}
let applied = 0;
for (let i = 0; i < Number(count); i += 1) {
  if (store.apply(`effect-${i}`, { by: process.pid, i }).applied) applied += 1;
}
store.close();
process.stdout.write(String(applied));
