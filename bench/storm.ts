import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { flags, startBenchStack, writeResult } from './lib/bench-stack';
import { stormSvg } from './lib/storm-chart';
import { createProgress } from './lib/progress';
import { runStorm } from './lib/storm-run';
import type { StormResult } from './lib/storm-run';
import { agentsFlag, runVariants } from './lib/agent-variants';
import type { AgentsVariant } from './lib/agent-variants';

/**
 * `npm run bench -- storm`: a quota storm on the whole stack (own dev server, real HTTP). Tenants
 * offer about twice the provider's quota; after a steady period the simulator's tokens per minute
 * are cut to 30% for 60 s, then restored. Prints a per-second timeline and the acceptance figures,
 * writes bench/results/storm.json and storm.svg. The quota is small so the run is model-bound, not
 * bound by what one Temporal dev server on two cores can admit. `--agents both` runs the storm with
 * the built-in agent, then with its user-code copy (bench/agents), each on a fresh stack.
 */
export async function runStormBench(argv: string[]): Promise<void> {
  const { agents, variants, rest } = agentsFlag(argv);
  const f = flags(
    rest,
    {
      tpm: 120_000,
      cutShare: 0.3,
      load: 2,
      steps: 4,
      tokensPerStep: 150,
      stepMs: 500,
      tenants: 2,
      maxQueued: 60,
      concurrency: 50,
      // Below 1, units spend more than they declare: the governor must learn it from served tokens.
      estimateShare: 1,
      // The first minute is the provider's and the governor's initial allowance (both start with a full
      // minute of tokens), served at up to twice the quota: steady state is judged after it.
      warmup: 75,
      steady: 60,
      cut: 60,
      after: 60,
    },
    { agents },
  );
  const cutAt = f.warmup + f.steady;
  const phases = { warmup: f.warmup, cutAt, restoreAt: cutAt + f.cut, end: cutAt + f.cut + f.after };
  const stormOf = async (variant: AgentsVariant): Promise<StormResult> => {
    const s = await startBenchStack(
      {
        FLEET_CONCURRENCY: String(f.concurrency),
        MODEL_TPM: String(f.tpm),
        MODEL_RPM: '10000000',
        // The storm is the account's only user: Fairway may aim at nearly all of it.
        MODEL_QUOTA_SHARE: '0.95',
      },
      { agents: variant },
    );
    try {
      const bar = createProgress(`storm (${variant})`, phases.end, { unit: 's' });
      const result = await runStorm(
        s.call,
        s.simUrl ?? '',
        {
          tpm: f.tpm,
          cutShare: f.cutShare,
          phases,
          load: f.load,
          steps: f.steps,
          tokensPerStep: f.tokensPerStep,
          stepMs: f.stepMs,
          tenants: f.tenants,
          maxQueued: f.maxQueued,
          estimateShare: f.estimateShare,
          drainSeconds: 300,
          agent: s.agent,
        },
        (line) => bar.log(line),
        (t) => bar.update(Math.min(t, phases.end), t > phases.end ? 'finishing the backlog' : undefined),
      );
      bar.finish();
      return result;
    } finally {
      await s.stop();
    }
  };
  const all = await runVariants(variants, stormOf);
  for (const result of [all, ...(all.userAgents ? [all.userAgents] : [])]) {
    console.log(`\n${result.agents === 'user' ? 'user-code agent' : 'built-in agent'}:`);
    console.log('\nwindows of the cut (from 30 s after it):');
    for (const w of result.verdict.cutWindows)
      console.log(
        `  ${w.from}–${w.to} s: ${w.throttled}/${w.calls} throttled (${(100 * w.throttledShare).toFixed(1)}%), utilisation ${(100 * w.utilisation).toFixed(1)}%`,
      );
    console.log('steady state:');
    for (const w of result.verdict.steady)
      console.log(
        `  ${w.from}–${w.to} s: ${w.throttled}/${w.calls} throttled (${(100 * w.throttledShare).toFixed(2)}%), utilisation ${(100 * w.utilisation).toFixed(1)}%`,
      );
    const t = result.totals;
    console.log(
      `door: ${t.accepted} accepted, ${t.shed} shed with 429 queue_full (Retry-After min ${result.retryAfter.min} s, median ${result.retryAfter.median} s, max ${result.retryAfter.max} s)`,
    );
    console.log(
      `runs: ${t.completed} completed, ${t.failed} failed; model calls ${t.calls}, throttled ${t.throttled}, early retries ${t.earlyRetries}; scheduler continued-as-new ${t.continuedAsNew}×`,
    );
    console.log('\nacceptance:');
    for (const c of result.checks) console.log(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
    console.log(`storm: ${result.pass ? 'PASS' : 'FAIL'}`);
  }
  console.log(`wrote ${writeResult('storm', all)}`);
  // The chart is the first variant's.
  const svg = path.join(__dirname, 'results', 'storm.svg');
  const title = `quota ${f.tpm} tokens/min cut to ${Math.round(100 * f.cutShare)}% from ${phases.cutAt} s to ${phases.restoreAt} s; load ${f.load}× the quota; ${all.pass ? 'PASS' : 'FAIL'}`;
  writeFileSync(svg, stormSvg(all.seconds, phases, title));
  console.log(`wrote ${svg}`);
  if (!all.pass || all.userAgents?.pass === false) throw new Error('storm: acceptance failed (see above)');
}
