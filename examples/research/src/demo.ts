import { createClient } from 'fairway/client';
import { research, summarize } from './agents';

/**
 * The typed client: submit a research run, wait for its gate, read the proposal, approve it, print the
 * completion; then summarize the answer with the other agent. FAIRWAY_URL (default
 * http://localhost:3000) and FAIRWAY_API_KEY (a tenant's key) say where and as whom.
 */
async function main(): Promise<void> {
  const apiKey = process.env.FAIRWAY_API_KEY;
  if (!apiKey) throw new Error('Set FAIRWAY_API_KEY to a tenant API key (see the README).');
  const fairway = createClient({ baseUrl: process.env.FAIRWAY_URL ?? 'http://localhost:3000', apiKey });
  const question = process.argv[2] ?? 'Why is the sky blue?';

  const run = await fairway.runs.start(research, { question }, { priority: 'interactive' });
  console.log(`research run: ${run.runId}`);
  const gated = await run.waitFor('awaiting_approval', { timeoutMs: 120_000 });
  if (gated.status !== 'awaiting_approval')
    throw new Error(`The research run ended ${gated.status} before its gate: ${JSON.stringify(gated.error)}`);
  console.log('proposal:', JSON.stringify(gated.gate?.proposal));
  await run.approve('checked the sources');
  const done = await run.result({ timeoutMs: 120_000 });
  console.log(`answer (${done.model}): ${done.answer}`);
  console.log(`published: ${done.published}, decided by ${done.decidedBy}`);

  const summary = await fairway.runs.start(summarize, { text: done.answer, words: 20 });
  console.log(`summarize run: ${summary.runId}`);
  const { summary: text, model } = await summary.result({ timeoutMs: 120_000 });
  console.log(`summary (${model}): ${text}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
