import type { EndedTuple } from './ended';
import { RunIdDecoder, RunIdEncoder } from './id-codec';
import type { EntryTuple } from './ledger-log';
import type {
  KeysTuple,
  LeaseTuple,
  LedgerTuple,
  QueueTuple,
  RateTuple,
  PlainSnapshot,
  SchedulerSnapshotV2,
  SettingsTuple,
  TenantSnapshot,
  TenantTuple,
} from './snapshot-format';

/*
 * Version 1 ⇄ version 2 of the snapshot. The two carry the same state; version 2 is the compact
 * encoding written at continue-as-new (see `SchedulerSnapshotV2`). Pure and exact: decode(encode(x))
 * equals x for every snapshot the core writes.
 */

/** An integer in base 36; anything else (never written by the core, but exact all the same) as "~" + decimal. */
const n36 = (x: number): string => (Number.isSafeInteger(x) ? x.toString(36) : `~${String(x)}`);
const from36 = (s: string | undefined): number =>
  s === undefined ? NaN : s.startsWith('~') ? Number(s.slice(1)) : parseInt(s, 36);

class Encoders {
  private readonly byTenant = new Map<string, RunIdEncoder>();
  of(tenant: string): RunIdEncoder {
    let e = this.byTenant.get(tenant);
    if (!e) this.byTenant.set(tenant, (e = new RunIdEncoder(tenant)));
    return e;
  }
}

class Decoders {
  private readonly byTenant = new Map<string, RunIdDecoder>();
  of(tenant: string): RunIdDecoder {
    let d = this.byTenant.get(tenant);
    if (!d) this.byTenant.set(tenant, (d = new RunIdDecoder(tenant)));
    return d;
  }
}

/** `keys`: the lane's key slots, when the flow uses keys (a unit's "#" is its slot's index there). */
function packQueue(
  tenant: string,
  [ids, costs, attempts, pools, slots]: QueueTuple,
  keys: KeysTuple,
): string {
  const enc = new RunIdEncoder(tenant);
  const slotIndex = new Map(keys === 0 ? [] : keys[1].map((name, i) => [name, i]));
  let prevCost = NaN;
  let prevSlot = '';
  return ids
    .map((id, i) => {
      const cost = costs[i] ?? 1;
      const attempt = attempts[i] ?? 0;
      const pool = pools?.[i] ?? 0;
      const slot = slots?.[i] ?? '';
      let unit = enc.encode(id);
      if (cost !== prevCost) unit += `*${n36(cost)}`;
      if (attempt !== 0) unit += `!${n36(attempt)}`;
      if (pool !== 0) unit += `@${n36(pool)}`;
      if (slot !== prevSlot) unit += `#${n36(slotIndex.get(slot) ?? -1)}`;
      prevCost = cost;
      prevSlot = slot;
      return unit;
    })
    .join(' ');
}

function packKeys(keys: KeysTuple): string {
  if (keys === 0) return '';
  const [kv, names, tags] = keys;
  const slots = names.map((name, i) => {
    // Relative to kv: at most the slot's largest unit cost / weight (exact for integers, to an ulp otherwise).
    const ahead = (tags[i] ?? kv) - kv;
    return `${name === '' ? '.' : name}${ahead === 0 ? '' : `:${n36(ahead)}`}`;
  });
  return [n36(kv), ...slots].join(' ');
}

function unpackKeys(packed: string): KeysTuple {
  if (packed === '') return 0;
  const [head, ...slots] = packed.split(' ');
  const kv = from36(head);
  const names: string[] = [];
  const tags: number[] = [];
  for (const slot of slots) {
    const [name = '', tag] = slot.split(':');
    names.push(name === '.' ? '' : name);
    tags.push(tag === undefined ? kv : kv + from36(tag));
  }
  return [kv, names, tags];
}

function unpackQueue(tenant: string, packed: string, keys: KeysTuple | undefined): QueueTuple {
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
    const m = /^([^*!@#]*)(?:\*([^*!@#]+))?(?:!([^*!@#]+))?(?:@([^*!@#]+))?(?:#([^*!@#]+))?$/.exec(unit);
    const [, code = '', c, a, p, k] = m ?? [];
    ids.push(dec.decode(code));
    if (c !== undefined) cost = from36(c);
    costs.push(cost);
    const attempt = a === undefined ? 0 : from36(a);
    attempts.push(attempt);
    retried ||= attempt !== 0;
    const pool = p === undefined ? 0 : from36(p);
    pools.push(pool);
    pooled ||= pool !== 0;
    if (k !== undefined) slot = (keys ? keys[1][from36(k)] : undefined) ?? '';
    slots.push(slot);
    keyed ||= slot !== '';
  }
  const a = retried ? attempts : [];
  if (keyed) return [ids, costs, a, pooled ? pools : [], slots];
  return pooled ? [ids, costs, a, pools] : [ids, costs, a];
}

/** The tenant part of an id of the API's two forms, or undefined. */
function tenantOfRunId(id: string): string | undefined {
  return (/^run-(.+)-[0-9a-f]{20}$/.exec(id) ?? /^batch-(.+)-[0-9a-f]{16}-[0-9]+$/.exec(id))?.[1];
}

function packEnded(list: EndedTuple[], position: Map<string, number>): string {
  // Only runs of tenants the snapshot holds: a tenant that left the core (idle for an hour) takes its
  // ended runs with it, which keeps this part bounded; a closed run workflow still refuses admission.
  const out: string[] = [];
  for (const [id, attempt, final, charged] of list) {
    const tenant = tenantOfRunId(id);
    const i = tenant === undefined ? undefined : position.get(tenant);
    if (tenant !== undefined && i === undefined) continue;
    // An id of neither API form (the validators refuse those; tests use them) is kept whole, as "-".
    const code = new RunIdEncoder(tenant ?? '').encode(id); // one id a coder: each entry stands alone
    out.push(`${i === undefined ? '-' : n36(i)} ${code} ${n36(attempt)} ${final} ${n36(charged)}`);
  }
  return out.join(';');
}

function unpackEnded(packed: string, tenants: TenantSnapshot[]): EndedTuple[] {
  if (packed === '') return [];
  return packed.split(';').map((line): EndedTuple => {
    const [ref = '', code = '', attempt, final, charged] = line.split(' ');
    const tenant = ref === '-' ? '' : (tenants[from36(ref)]?.id ?? '');
    return [new RunIdDecoder(tenant).decode(code), from36(attempt), final === '1' ? 1 : 0, from36(charged)];
  });
}

export function encodeV2(s: PlainSnapshot): SchedulerSnapshotV2 {
  const t0 = s.fleetRate.at;
  const rel = (x: number) => x - t0;
  const index = new Map<number, number>();
  const position = new Map<string, number>();
  const tenants = s.tenants.map((t, i): TenantTuple => {
    index.set(t.ord, i);
    position.set(t.id, i);
    const settings: SettingsTuple = [
      t.settings.weight,
      t.settings.maxQueued,
      t.settings.maxInFlight,
      t.settings.budget.tokens,
      t.settings.budget.period,
    ];
    if (t.settings.keyWeights)
      settings.push(t.settings.onBudgetExhausted === 'park' ? 1 : 0, t.settings.keyWeights);
    else if (t.settings.onBudgetExhausted === 'park') settings.push(1);
    const [ps, pe, reserved, spent, linger, lingerUntil] = t.ledger;
    const rate: RateTuple =
      t.rate.since === undefined
        ? [t.rate.count, rel(t.rate.at)]
        : [t.rate.count, rel(t.rate.at), rel(t.rate.since)];
    const ledger: LedgerTuple =
      linger === undefined || lingerUntil === undefined
        ? [rel(ps), pe === null ? null : rel(pe), reserved, spent]
        : [rel(ps), pe === null ? null : rel(pe), reserved, spent, linger, rel(lingerUntil)];
    const tags: [number, number, number] = [...t.tags];
    const seen = rel(t.seen ?? t.rate.at);
    if (!t.queues) return [t.id, t.ord, settings, ledger, rate, tags, seen];
    const q = t.queues;
    const k = t.keys ?? [0, 0, 0];
    const queues: [string, string, string] = [
      packQueue(t.id, q[0], k[0]),
      packQueue(t.id, q[1], k[1]),
      packQueue(t.id, q[2], k[2]),
    ];
    if (!t.keys) return [t.id, t.ord, settings, ledger, rate, tags, seen, queues];
    const keys: [string, string, string] = [packKeys(k[0]), packKeys(k[1]), packKeys(k[2])];
    return [t.id, t.ord, settings, ledger, rate, tags, seen, queues, keys];
  });
  const enc = new Encoders();
  const leases = s.leases
    .map(
      ([runId, ord, lane, attempt, seq, admittedAt, expiresAt, reserved, used, charged, perCall, pool]) => {
        const i = index.get(ord);
        // A lease of a tenant the snapshot lacks is dropped on restore anyway.
        if (i === undefined) return null;
        const tenant = s.tenants[i]!.id;
        return [
          i,
          lane,
          enc.of(tenant).encode(runId),
          attempt,
          seq,
          rel(admittedAt),
          rel(expiresAt),
          reserved,
          used,
          // Charged call by call (absent from older snapshots: 0 and 0). Without them a restored lease
          // would free its whole reservation at release although its calls already consumed part of it.
          charged ?? 0,
          perCall ?? 0,
          // The lease's model pool (absent: the default).
          ...(pool ? [pool] : []),
        ]
          .map((x) => (typeof x === 'string' ? x : n36(x)))
          .join(' ');
      },
    )
    .filter((x) => x !== null)
    .join(';');
  const rings = s.log.rings.map(([tenant, entries]): [number | string, string] => {
    const e = new RunIdEncoder(tenant);
    let prev = 0;
    const packed = entries
      .map(([seq, at, code, tokens, runId]) => {
        const line = `${n36(seq - prev)} ${n36(rel(at))} ${code} ${n36(tokens)} ${e.encode(runId)}`;
        prev = seq;
        return line;
      })
      .join(';');
    return [position.get(tenant) ?? tenant, packed];
  });
  const { tenants: _t, leases: _l, log: _g, ended: endedRuns, ...rest } = s;
  const snap: SchedulerSnapshotV2 = { v: 2, ...rest, t0, tenants, leases, log: { next: s.log.next, rings } };
  if (endedRuns) snap.ended = packEnded(endedRuns, position);
  return snap;
}

export function decodeV2(s: SchedulerSnapshotV2): PlainSnapshot {
  const t0 = s.t0;
  const abs = (x: number) => x + t0;
  const tenants = s.tenants.map((tuple): TenantSnapshot => {
    const [
      id,
      ord,
      [weight, maxQueued, maxInFlight, tokens, period, park, keyWeights],
      ledger,
      rate,
      tags,
      seen,
      queues,
      keys,
    ] = tuple;
    const [ps, pe, reserved, spent, linger, lingerUntil] = ledger;
    const t: TenantSnapshot = {
      id,
      ord,
      settings: {
        weight,
        maxQueued,
        maxInFlight,
        budget: { tokens, period },
        ...(park === 1 ? { onBudgetExhausted: 'park' as const } : {}),
        ...(keyWeights ? { keyWeights } : {}),
      },
      ledger:
        linger === undefined || lingerUntil === undefined
          ? [abs(ps), pe === null ? null : abs(pe), reserved, spent]
          : [abs(ps), pe === null ? null : abs(pe), reserved, spent, linger, abs(lingerUntil)],
      rate:
        rate.length === 3
          ? { count: rate[0], at: abs(rate[1]), since: abs(rate[2]) }
          : { count: rate[0], at: abs(rate[1]) },
      seen: abs(seen),
      tags: [...tags],
    };
    const k = keys ? ([unpackKeys(keys[0]), unpackKeys(keys[1]), unpackKeys(keys[2])] as const) : undefined;
    if (queues)
      t.queues = [
        unpackQueue(id, queues[0], k?.[0]),
        unpackQueue(id, queues[1], k?.[1]),
        unpackQueue(id, queues[2], k?.[2]),
      ];
    if (k) t.keys = [...k];
    return t;
  });
  const dec = new Decoders();
  const leases = (s.leases === '' ? [] : s.leases.split(';')).map((packed): LeaseTuple => {
    const [i, lane, code, attempt, seq, admittedAt, expiresAt, reserved, used, charged, perCall, pool] =
      packed.split(' ');
    const tenant = tenants[from36(i)];
    const tuple: LeaseTuple = [
      tenant ? dec.of(tenant.id).decode(code ?? '') : '',
      tenant ? tenant.ord : -1,
      from36(lane) as LeaseTuple[2],
      from36(attempt),
      from36(seq),
      abs(from36(admittedAt)),
      abs(from36(expiresAt)),
      from36(reserved),
      from36(used),
      charged === undefined ? 0 : from36(charged),
      perCall === '1' ? 1 : 0,
    ];
    if (pool !== undefined) tuple.push(from36(pool));
    return tuple;
  });
  const rings = s.log.rings.map(([ref, packed]): [string, EntryTuple[]] => {
    const tenant = typeof ref === 'number' ? (tenants[ref]?.id ?? '') : ref;
    const d = new RunIdDecoder(tenant);
    let seq = 0;
    const entries = (packed === '' ? [] : packed.split(';')).map((line): EntryTuple => {
      const [ds, at, code, tokens, runCode] = line.split(' ');
      seq += from36(ds);
      return [seq, abs(from36(at)), code ?? 'r', from36(tokens), d.decode(runCode ?? '=')];
    });
    return [tenant, entries];
  });
  const { v: _v, t0: _t0, tenants: _t, leases: _l, log: _g, ended: endedRuns, ...rest } = s;
  const snap: PlainSnapshot = { ...rest, tenants, leases, log: { next: s.log.next, rings } };
  if (endedRuns !== undefined) snap.ended = unpackEnded(endedRuns, tenants);
  return snap;
}
