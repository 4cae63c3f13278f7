import type { ConsoleState, Sample, TenantRow } from '../api/console/sampler';
import type { SchedulerStatus } from '../scheduler/types';
import { num, pairs, pct, rate, table } from './table';

const tpm = (n: number | null | undefined) => (n === null || n === undefined ? '-' : `${num(n)} tpm`);

type Breaker = NonNullable<SchedulerStatus['governor']['breaker']>;

/** An open or half-open breaker's state and why it is not closed. */
const breakerState = (b: Breaker) => ({
  state: b.state === 'open' ? 'OPEN' : 'HALF-OPEN',
  why: b.reason === 'server_errors' ? 'every call answered 5xx' : 'the provider refuses the API key',
});

/** The key breaker's row: closed, or why admission is paused and when the next probe goes. */
function breakerLine(b: Breaker | undefined): string {
  if (!b || b.state === 'closed')
    return b && b.trips > 0 ? `closed (opened ${num(b.trips)} times)` : 'closed';
  const { state, why } = breakerState(b);
  return `${state}: ${why}; admission paused since ${b.since ?? '-'}, next probe ${b.nextProbeAt ?? '-'} (${num(b.probes)} probes)`;
}

/** A named pool's breaker, short: closed, or its state, why, and when the next probe goes. */
function poolBreaker(b: Breaker | undefined): string {
  if (!b || b.state === 'closed') return 'closed';
  const { state, why } = breakerState(b);
  return `${state} (${why}, next probe ${b.nextProbeAt ?? '-'})`;
}

/** One `pool` row per named model pool, by name: its slots, target, pause and key breaker. */
function poolLines(s: SchedulerStatus): [string, string][] {
  return Object.entries(s.pools ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, p]) => [
      'pool',
      `${name}: ${num(p.inFlight)} / ${num(p.concurrencyLimit)} in flight, target ${tpm(p.tokensPerMinute)}` +
        (p.pausedUntil ? `, PAUSED until ${p.pausedUntil}` : '') +
        (p.throttledRecently ? ', THROTTLED recently' : '') +
        `, key breaker ${poolBreaker(p.breaker)}`,
    ]);
}

export function renderStatus(s: SchedulerStatus): string {
  const q = s.queued.byPriority;
  const g = s.governor;
  const c = s.counters;
  return pairs([
    ['mode', `${s.mode} (intake ${s.intake})`],
    [
      'in flight',
      `${num(s.inFlight)} / ${num(s.config.concurrency)} (governor allows ${num(g.concurrencyLimit)})`,
    ],
    [
      'queued',
      `${num(s.queued.total)} (interactive ${num(q.interactive)}, standard ${num(q.standard)}, batch ${num(q.batch)})`,
    ],
    [
      'governor',
      `target ${tpm(g.tokensPerMinute)}, provider quota ${tpm(g.providerTokensPerMinute)}, served ${tpm(g.servedTokensPerMinute)}` +
        (g.providerRequestsPerMinute !== undefined
          ? `, request limit ${num(g.providerRequestsPerMinute)} rpm (${tpm(g.requestBoundTokensPerMinute)} at the tokens a call serves)`
          : '') +
        `${g.throttledRecently ? ', THROTTLED recently' : ''}`,
    ],
    ['key breaker', breakerLine(g.breaker)],
    ...poolLines(s),
    [
      'counters',
      `submitted ${num(c.submitted)}, admitted ${num(c.admitted)}, completed ${num(c.completed)}, failed ${num(c.failed)}, ` +
        `cancelled ${num(c.cancelled)}, shed ${num(c.shed)}, expired ${num(c.expired)}`,
    ],
    ['history', `${num(s.history.length)} events, continued-as-new ${num(s.history.continuedAsNew)} times`],
  ]);
}

export function renderTenants(rows: TenantRow[], windowMs: number): string {
  if (rows.length === 0) return 'No tenants.';
  const sorted = [...rows].sort(
    (a, b) => (b.tokenShare ?? -1) - (a.tokenShare ?? -1) || (a.tenant < b.tenant ? -1 : 1),
  );
  return [
    table(sorted, [
      { title: 'TENANT', value: (t) => t.tenant },
      { title: 'WEIGHT', value: (t) => String(t.weight), right: true },
      { title: `SHARE ${Math.round(windowMs / 60_000)}m`, value: (t) => pct(t.tokenShare), right: true },
      { title: 'ENTITLED', value: (t) => pct(t.entitledShare), right: true },
      { title: 'QUEUED', value: (t) => num(t.queued), right: true },
      { title: 'IN FLIGHT', value: (t) => num(t.inFlight), right: true },
      { title: 'SPENT', value: (t) => num(t.spent), right: true },
      { title: 'REMAINING', value: (t) => (t.budget === null ? 'unlimited' : num(t.remaining)), right: true },
    ]),
  ].join('\n');
}

/** Rates of the newest sample that has them. */
function lastRates(samples: Sample[]): Sample | undefined {
  for (let i = samples.length - 1; i >= 0; i--) if (samples[i]!.admissionsPerSecond) return samples[i];
  return undefined;
}

export function renderWatch(st: ConsoleState, url: string): string {
  const head = `Fairway ${url}  ${st.at ? new Date(st.at).toISOString() : 'no sample yet'}`;
  if (!st.status)
    return `${head}\n${st.error ? `scheduler unavailable: ${st.error}` : 'waiting for the first sample'}`;
  const r = lastRates(st.samples);
  const a = r?.admissionsPerSecond;
  const sh = r?.shedsPerSecond;
  const rates = pairs([
    [
      'admissions/s',
      a ? `interactive ${rate(a.interactive)}, standard ${rate(a.standard)}, batch ${rate(a.batch)}` : '-',
    ],
    ['throttled/s', rate(r?.throttledPerSecond)],
    [
      'sheds/s',
      sh
        ? Object.entries(sh)
            .map(([k, v]) => `${k} ${rate(v)}`)
            .join(', ')
        : '-',
    ],
  ]);
  return [head, '', renderStatus(st.status), rates, '', renderTenants(st.tenants, st.shareWindowMs)].join(
    '\n',
  );
}

/** One line per refresh for a log or CI (no terminal). */
export function watchLine(st: ConsoleState): string {
  const s = st.status;
  if (!s) return `${new Date().toISOString()} scheduler unavailable${st.error ? `: ${st.error}` : ''}`;
  const r = lastRates(st.samples);
  const adm = r?.admissionsPerSecond;
  const total = adm ? adm.interactive + adm.standard + adm.batch : null;
  return (
    `${new Date(st.at ?? Date.now()).toISOString()} mode=${s.mode} intake=${s.intake} inFlight=${s.inFlight}/${s.config.concurrency} ` +
    `queued=${s.queued.total} admissions/s=${rate(total)} targetTpm=${s.governor.tokensPerMinute} throttled/s=${rate(r?.throttledPerSecond)}`
  );
}
