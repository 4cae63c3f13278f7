import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PULL_BYTES, reportPull } from '../../../src/activities/report-pull';
import { openSqliteReportLog } from '../../../src/stores/report-log/report-log-sqlite';
import type { ReportLog } from '../../../src/stores/report-log/report-log';

/** The scheduler's pull over a real (in-memory SQLite) report log. */
describe('pullReports', () => {
  const logs: ReportLog[] = [];
  const open = () => {
    const l = openSqliteReportLog(':memory:');
    logs.push(l);
    return l;
  };
  afterEach(async () => {
    for (const l of logs.splice(0)) await l.close();
  });
  const report = (id: string) => JSON.stringify({ id, releases: [] });

  it('answers the reports past the cursor and acknowledges the cursor it was given', async () => {
    const log = open();
    for (let i = 1; i <= 3; i++) await log.append('s', `r${i}`, report(`r${i}`), i);
    const pull = reportPull(log, { waitMs: 50 });
    const first = await pull({ schedulerId: 's', after: null });
    expect(first.reports.map((r) => r.id)).toEqual(['r1', 'r2', 'r3']);
    expect(await log.acked('s')).toBe(0); // nothing booked yet
    // A retried pull (same cursor) answers the same reports.
    expect((await pull({ schedulerId: 's', after: null })).reports).toHaveLength(3);
    const second = await pull({ schedulerId: 's', after: first.after });
    expect(second).toEqual({ reports: [], after: first.after });
    expect(await log.acked('s')).toBe(first.after);
    // A chain without a cursor begins where the log was acknowledged.
    await log.append('s', 'r4', report('r4'), 4);
    expect((await pull({ schedulerId: 's', after: null })).reports.map((r) => r.id)).toEqual(['r4']);
  });

  it('waits for a first report and answers as soon as one is logged', async () => {
    const log = open();
    const pull = reportPull(log, { waitMs: 10_000 });
    const t0 = Date.now();
    const answer = pull({ schedulerId: 's', after: 0 });
    setTimeout(() => void log.append('s', 'late', report('late'), 1), 100);
    expect((await answer).reports.map((r) => r.id)).toEqual(['late']);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('answers at once, empty, when its worker stops', async () => {
    const log = open();
    let stopping = false;
    const pull = reportPull(log, { waitMs: 60_000, stopping: () => stopping });
    const answer = pull({ schedulerId: 's', after: 0 });
    setTimeout(() => (stopping = true), 50);
    expect(await answer).toEqual({ reports: [], after: 0 });
  });

  it('stops adding reports past its byte budget; the cursor ends at the last one answered', async () => {
    const log = open();
    const big = 'x'.repeat(Math.ceil(MAX_PULL_BYTES / 3));
    for (let i = 1; i <= 5; i++) await log.append('s', `b${i}`, JSON.stringify({ id: `b${i}`, pad: big }), i);
    const pull = reportPull(log, { waitMs: 50 });
    const first = await pull({ schedulerId: 's', after: 0 });
    expect(first.reports.map((r) => r.id)).toEqual(['b1', 'b2']);
    const rest = await pull({ schedulerId: 's', after: first.after });
    expect(rest.reports.map((r) => r.id)).toEqual(['b3', 'b4']);
  });

  it('a worker without a report log fails the pull (another worker takes the retry)', async () => {
    await expect(reportPull(undefined, { waitMs: 50 })({ schedulerId: 's', after: 0 })).rejects.toThrow(
      /no report log/,
    );
  });
});
