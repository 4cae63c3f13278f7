import { flags, startBenchStack, writeResult } from './lib/bench-stack';
import { runLoad, simJson, sumWindow } from './lib/load-run';

/**
 * `npm run bench -- bystander`: another consumer of the same account steadily uses `bystanderShare`
 * of the quota while Fairway is offered `load` × the quota (default MODEL_QUOTA_SHARE, 0.8). Reports
 * the bystander's throttled share (goal ≤ 1%) and Fairway's use of the quota (goal ≥ 70%), judged
 * from `judgeFrom` s to the end of the load.
 */
export async function runBystanderBench(argv: string[]): Promise<void> {
  const f = flags(argv, {
    tpm: 240_000,
    bystanderShare: 0.2,
    load: 2,
    seconds: 120,
    steps: 2,
    tokensPerStep: 500,
    stepMs: 0,
    concurrency: 200,
    judgeFrom: 30,
    maxBystanderThrottled: 0.01,
    minUtilisation: 0.7,
  });
  const s = await startBenchStack({
    FLEET_CONCURRENCY: String(f.concurrency),
    MODEL_TPM: String(f.tpm),
    MODEL_RPM: '10000000',
  });
  try {
    const bystanderTpm = Math.round(f.tpm * f.bystanderShare);
    await simJson(s.simUrl ?? '', '/admin/bystander', { tpm: bystanderTpm, callTokens: 500 });
    const unit = f.steps * f.tokensPerStep;
    const perSecond = (f.load * f.tpm) / 60 / unit;
    console.log(
      `bystander at ${bystanderTpm} tokens/min; Fairway offered ${f.load}× the quota (${perSecond.toFixed(1)} runs/s)`,
    );
    const r = await runLoad(
      s.call,
      s.simUrl ?? '',
      {
        burst: 0,
        perSecond,
        loadSeconds: f.seconds,
        steps: f.steps,
        tokensPerStep: f.tokensPerStep,
        stepMs: f.stepMs,
        tenants: 2,
        maxQueued: 500,
        drainSeconds: 0,
      },
      (line) => console.log(line),
    );
    await simJson(s.simUrl ?? '', '/admin/bystander', { tpm: 0 });
    const w = sumWindow(r.seconds, f.judgeFrom, f.seconds);
    const checks = [
      {
        name: `bystander throttled ≤ ${100 * f.maxBystanderThrottled}%`,
        pass: w.bystander.calls > 0 && w.bystander.throttledShare <= f.maxBystanderThrottled,
        detail: `${w.bystander.throttled}/${w.bystander.calls} = ${(100 * w.bystander.throttledShare).toFixed(2)}%, it used ${(100 * w.bystander.utilisation).toFixed(1)}% of the quota`,
      },
      {
        name: `Fairway uses ≥ ${100 * f.minUtilisation}% of the quota`,
        pass: w.utilisation >= f.minUtilisation,
        detail: `${(100 * w.utilisation).toFixed(1)}%, its calls ${w.throttled}/${w.calls} throttled`,
      },
    ];
    const pass = checks.every((c) => c.pass);
    for (const c of checks) console.log(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
    console.log(`bystander: ${pass ? 'PASS' : 'FAIL'}`);
    console.log(
      `wrote ${writeResult('bystander', { options: f, window: w, checks, pass, seconds: r.seconds })}`,
    );
    if (!pass) throw new Error('bystander: acceptance failed (see above)');
  } finally {
    await s.stop();
  }
}
