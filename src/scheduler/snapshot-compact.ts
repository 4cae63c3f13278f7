import type { EndedTuple } from './ended';
import { RunIdDecoder, RunIdEncoder } from './id-codec';
import type { EntryTuple } from './ledger-log';
import {
  packKeysV2,
  packQueueV2,
  packQueueV3,
  unpackKeysV2,
  unpackQueueV2,
  unpackQueueV3,
} from './snapshot-queues';
import { BASE36, BASE64, type Numbers } from './snapshot-numbers';
import type {
  LeaseTuple,
  LedgerTuple,
  RateTuple,
  PlainSnapshot,
  SchedulerSnapshot,
  SchedulerSnapshotV2,
  SchedulerSnapshotV3,
  SettingsTuple,
  TenantSnapshot,
  TenantTuple,
} from './snapshot-format';

/*
 * The plain snapshot ⇄ its compact versions 2 and 3 (see `SchedulerSnapshotV2`). They carry the same
 * state; version 3, written at continue-as-new, has its numbers in base 64 and its queues' key slots
 * marked in line (`snapshot-queues.ts`). Pure and exact: decode(encode(x)) equals x for every plain
 * snapshot the core writes for that version.
 */

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

/** The tenant part of an id of the API's two forms, or undefined. */
function tenantOfRunId(id: string): string | undefined {
  return (/^run-(.+)-[0-9a-f]{20}$/.exec(id) ?? /^batch-(.+)-[0-9a-f]{16}-[0-9]+$/.exec(id))?.[1];
}

function packEnded(list: EndedTuple[], position: Map<string, number>, N: Numbers): string {
  // Only runs of tenants the snapshot holds: a tenant that left the core (idle for an hour) takes its
  // ended runs with it, which keeps this part bounded; a closed run workflow still refuses admission.
  const out: string[] = [];
  for (const [id, attempt, final, charged] of list) {
    const tenant = tenantOfRunId(id);
    const i = tenant === undefined ? undefined : position.get(tenant);
    if (tenant !== undefined && i === undefined) continue;
    // An id of neither API form (the validators refuse those; tests use them) is kept whole, as "-".
    const code = new RunIdEncoder(tenant ?? '').encode(id); // one id a coder: each entry stands alone
    out.push(`${i === undefined ? '-' : N.to(i)} ${code} ${N.to(attempt)} ${final} ${N.to(charged)}`);
  }
  return out.join(';');
}

function unpackEnded(packed: string, tenants: TenantSnapshot[], N: Numbers): EndedTuple[] {
  if (packed === '') return [];
  return packed.split(';').map((line): EndedTuple => {
    const [ref = '', code = '', attempt, final, charged] = line.split(' ');
    const tenant = ref === '-' ? '' : (tenants[N.from(ref)]?.id ?? '');
    return [new RunIdDecoder(tenant).decode(code), N.from(attempt), final === '1' ? 1 : 0, N.from(charged)];
  });
}

export function encodeV2(s: PlainSnapshot): SchedulerSnapshotV2 {
  return encode(s, 2) as SchedulerSnapshotV2;
}

export function encodeV3(s: PlainSnapshot): SchedulerSnapshotV3 {
  return encode(s, 3) as SchedulerSnapshotV3;
}

function encode(s: PlainSnapshot, v: 2 | 3): SchedulerSnapshot {
  const N = v === 2 ? BASE36 : BASE64;
  const packQueue = v === 2 ? packQueueV2 : packQueueV3;
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
    if (!t.keys || v === 3) return [t.id, t.ord, settings, ledger, rate, tags, seen, queues];
    const keys: [string, string, string] = [packKeysV2(k[0]), packKeysV2(k[1]), packKeysV2(k[2])];
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
          .map((x) => (typeof x === 'string' ? x : N.to(x)))
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
        const line = `${N.to(seq - prev)} ${N.to(rel(at))} ${code} ${N.to(tokens)} ${e.encode(runId)}`;
        prev = seq;
        return line;
      })
      .join(';');
    return [position.get(tenant) ?? tenant, packed];
  });
  const { tenants: _t, leases: _l, log: _g, ended: endedRuns, ...rest } = s;
  const snap: SchedulerSnapshot = { v, ...rest, t0, tenants, leases, log: { next: s.log.next, rings } };
  if (endedRuns) snap.ended = packEnded(endedRuns, position, N);
  return snap;
}

/** Decodes version 2 or 3. */
export function decodeCompact(s: SchedulerSnapshot): PlainSnapshot {
  const N = s.v === 2 ? BASE36 : BASE64;
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
    if (s.v === 3) {
      if (!queues) return t;
      const lanes = queues.map((q) => unpackQueueV3(id, q));
      t.queues = [lanes[0]![0], lanes[1]![0], lanes[2]![0]];
      if (lanes.some(([, k]) => k !== 0)) t.keys = [lanes[0]![1], lanes[1]![1], lanes[2]![1]];
      return t;
    }
    const k = keys
      ? ([unpackKeysV2(keys[0]), unpackKeysV2(keys[1]), unpackKeysV2(keys[2])] as const)
      : undefined;
    if (queues)
      t.queues = [
        unpackQueueV2(id, queues[0], k?.[0]),
        unpackQueueV2(id, queues[1], k?.[1]),
        unpackQueueV2(id, queues[2], k?.[2]),
      ];
    if (k) t.keys = [...k];
    return t;
  });
  const dec = new Decoders();
  const leases = (s.leases === '' ? [] : s.leases.split(';')).map((packed): LeaseTuple => {
    const [i, lane, code, attempt, seq, admittedAt, expiresAt, reserved, used, charged, perCall, pool] =
      packed.split(' ');
    const tenant = tenants[N.from(i)];
    const tuple: LeaseTuple = [
      tenant ? dec.of(tenant.id).decode(code ?? '') : '',
      tenant ? tenant.ord : -1,
      N.from(lane) as LeaseTuple[2],
      N.from(attempt),
      N.from(seq),
      abs(N.from(admittedAt)),
      abs(N.from(expiresAt)),
      N.from(reserved),
      N.from(used),
      charged === undefined ? 0 : N.from(charged),
      perCall === '1' ? 1 : 0,
    ];
    if (pool !== undefined) tuple.push(N.from(pool));
    return tuple;
  });
  const rings = s.log.rings.map(([ref, packed]): [string, EntryTuple[]] => {
    const tenant = typeof ref === 'number' ? (tenants[ref]?.id ?? '') : ref;
    const d = new RunIdDecoder(tenant);
    let seq = 0;
    const entries = (packed === '' ? [] : packed.split(';')).map((line): EntryTuple => {
      const [ds, at, code, tokens, runCode] = line.split(' ');
      seq += N.from(ds);
      return [seq, abs(N.from(at)), code ?? 'r', N.from(tokens), d.decode(runCode ?? '=')];
    });
    return [tenant, entries];
  });
  const { v: _v, t0: _t0, tenants: _t, leases: _l, log: _g, ended: endedRuns, ...rest } = s;
  const snap: PlainSnapshot = { ...rest, tenants, leases, log: { next: s.log.next, rings } };
  if (endedRuns !== undefined) snap.ended = unpackEnded(endedRuns, tenants, N);
  return snap;
}

export const decodeV2: (s: SchedulerSnapshotV2) => PlainSnapshot = decodeCompact;
