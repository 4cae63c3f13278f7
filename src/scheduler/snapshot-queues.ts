import { RunIdDecoder, RunIdEncoder } from './id-codec';
import { FLOW_KEY_BUCKETS } from './limits';
import { BASE36, BASE64, type Numbers } from './snapshot-numbers';
import type { KeysTuple, QueueTuple } from './snapshot-format';

/*
 * A tenant's queue in one lane as one string of units joined by " ": each its run-id code
 * (`id-codec.ts`), "*" + cost when it differs from the previous unit's, "!" + attempt when not 0,
 * "@" + pool index when not the default. How a unit names its key slot differs by version:
 *
 * - version 2: "#" + the slot's index in the lane's key slots (written apart, `packKeysV2`) after
 *   a unit whose slot differs from the previous unit's (the first unit's previous is '');
 * - version 3: in a lane that uses keys, a mark before each unit whose slot differs from the
 *   previous unit's (the first one's too): "A"–"P" for the buckets #0–#15, or the slot's stored
 *   name ("~" alone for the default key '') + ":" + its tag (relative, `snapshot.ts`) when not 0,
 *   then "/". The lane's slots and tags are the marks in order; nothing is written apart.
 */

type Mark = (slot: string, changed: boolean, first: boolean) => [string, string];

function pack(tenant: string, [ids, costs, attempts, pools, slots]: QueueTuple, N: Numbers, mark: Mark) {
  const enc = new RunIdEncoder(tenant);
  let prevCost = NaN;
  let prevSlot = '';
  return ids
    .map((id, i) => {
      const cost = costs[i] ?? 1;
      const attempt = attempts[i] ?? 0;
      const pool = pools?.[i] ?? 0;
      const slot = slots?.[i] ?? '';
      const [before, after] = mark(slot, slot !== prevSlot, i === 0);
      let unit = before + enc.encode(id);
      if (cost !== prevCost) unit += `*${N.to(cost)}`;
      if (attempt !== 0) unit += `!${N.to(attempt)}`;
      if (pool !== 0) unit += `@${N.to(pool)}`;
      prevCost = cost;
      prevSlot = slot;
      return unit + after;
    })
    .join(' ');
}

/** Units' fields: the slot mark is `slotOf(mark before, mark after, previous slot)`. */
function unpack(
  tenant: string,
  packed: string,
  N: Numbers,
  slotOf: (before: string | undefined, after: string | undefined, prev: string) => string,
): QueueTuple {
  const dec = new RunIdDecoder(tenant);
  const ids: string[] = [];
  const costs: number[] = [];
  const attempts: number[] = [];
  const pools: number[] = [];
  const slots: string[] = [];
  let retried = false;
  let pooled = false;
  let keyed = false;
  let cost = 1;
  let slot = '';
  if (packed === '') return [ids, costs, attempts];
  for (const unit of packed.split(' ')) {
    const m =
      /^([A-P]|~[0-9a-z]*(?::[^/]+)?\/)?([^*!@#]*)(?:\*([^*!@#]+))?(?:!([^*!@#]+))?(?:@([^*!@#]+))?(?:#([^*!@#]+))?$/.exec(
        unit,
      );
    const [, before, code = '', c, a, p, after] = m ?? [];
    ids.push(dec.decode(code));
    if (c !== undefined) cost = N.from(c);
    costs.push(cost);
    const attempt = a === undefined ? 0 : N.from(a);
    attempts.push(attempt);
    retried ||= attempt !== 0;
    const pool = p === undefined ? 0 : N.from(p);
    pools.push(pool);
    pooled ||= pool !== 0;
    slot = slotOf(before, after, slot);
    slots.push(slot);
    keyed ||= slot !== '';
  }
  const a = retried ? attempts : [];
  if (keyed) return [ids, costs, a, pooled ? pools : [], slots];
  return pooled ? [ids, costs, a, pools] : [ids, costs, a];
}

/** Version 2. `keys`: the lane's key slots, when the flow uses keys. */
export function packQueueV2(tenant: string, q: QueueTuple, keys: KeysTuple): string {
  const slotIndex = new Map(keys === 0 ? [] : keys[1].map((name, i) => [name, i]));
  return pack(tenant, q, BASE36, (slot, changed) => [
    '',
    changed ? `#${BASE36.to(slotIndex.get(slot) ?? -1)}` : '',
  ]);
}

export function unpackQueueV2(tenant: string, packed: string, keys: KeysTuple | undefined): QueueTuple {
  return unpack(tenant, packed, BASE36, (_, after, prev) =>
    after === undefined ? prev : ((keys ? keys[1][BASE36.from(after)] : undefined) ?? ''),
  );
}

export function packKeysV2(keys: KeysTuple): string {
  if (keys === 0) return '';
  const [kv, names, tags] = keys;
  const slots = names.map((name, i) => {
    // Relative to kv: at most the slot's largest unit cost / weight (exact for integers, to an ulp otherwise).
    const ahead = (tags[i] ?? kv) - kv;
    return `${name === '' ? '.' : name}${ahead === 0 ? '' : `:${BASE36.to(ahead)}`}`;
  });
  return [BASE36.to(kv), ...slots].join(' ');
}

export function unpackKeysV2(packed: string): KeysTuple {
  if (packed === '') return 0;
  const [head, ...slots] = packed.split(' ');
  const kv = BASE36.from(head);
  const names: string[] = [];
  const tags: number[] = [];
  for (const slot of slots) {
    const [name = '', tag] = slot.split(':');
    names.push(name === '.' ? '' : name);
    tags.push(tag === undefined ? kv : kv + BASE36.from(tag));
  }
  return [kv, names, tags];
}

const A = 'A'.charCodeAt(0);

/**
 * Version 3. `keys`: the lane's key slots with their tags (kv 0: `snapshot.ts` writes them relative),
 * when the flow uses keys; a bucket's tag is not written (it is 0).
 */
export function packQueueV3(tenant: string, q: QueueTuple, keys: KeysTuple): string {
  if (keys === 0) return pack(tenant, q, BASE64, () => ['', '']);
  const tagOf = new Map(keys[1].map((name, i) => [name, keys[2][i] ?? 0]));
  return pack(tenant, q, BASE64, (slot, changed, first) => {
    if (!changed && !first) return ['', ''];
    if (slot.startsWith('#')) return [String.fromCharCode(A + Number(slot.slice(1))), ''];
    const tag = tagOf.get(slot) ?? 0;
    return [`${slot === '' ? '~' : slot}${tag === 0 ? '' : `:${BASE64.to(tag)}`}/`, ''];
  });
}

/** The lane's queue and its key slots (in the order of their marks). */
export function unpackQueueV3(tenant: string, packed: string): [QueueTuple, KeysTuple] {
  const names = new Map<string, number>();
  const q = unpack(tenant, packed, BASE64, (before, _, prev) => {
    if (before === undefined) return prev;
    if (before.length === 1) {
      const bucket = `#${(before.charCodeAt(0) - A) % FLOW_KEY_BUCKETS}`;
      if (!names.has(bucket)) names.set(bucket, 0);
      return bucket;
    }
    const [name = '', tag] = before.slice(0, -1).split(':');
    const slot = name === '~' ? '' : name;
    if (!names.has(slot)) names.set(slot, tag === undefined ? 0 : BASE64.from(tag));
    return slot;
  });
  return [q, names.size === 0 ? 0 : [0, [...names.keys()], [...names.values()]]];
}
