import { ensureServerTools, serverBinary } from './cluster/server-tools';
import { resolveSchemathesis } from './schemathesis-cli';
import { resolveTemporalCli } from './temporal-cli';

/**
 * `npm run tools`: finds or installs the Temporal CLI and schemathesis (`npm run fuzz`), and says how.
 * `npm run tools -- --cluster` also builds the Temporal server for `npm run cluster` and its smoke test
 * (once, with Go: ~12 minutes on 2 cores without Go's caches, seconds with them).
 */
const r = resolveTemporalCli(process.env.TEMPORAL_CLI_PATH, (m) => console.log(m));
if (r.kind === 'path') console.log(`Temporal CLI: ${r.path} (found via ${r.source})`);
else {
  console.log(r.reason);
  console.log(
    "npm start and npm test will fall back to the Temporal SDK's own download (needs the internet).",
  );
}
const st = resolveSchemathesis((m) => console.log(m));
console.log(`schemathesis: ${[st.command, ...st.prefix].join(' ')} (${st.source})`);
if (process.argv.includes('--cluster')) {
  ensureServerTools((m) => console.log(m));
  console.log(`Temporal server: ${serverBinary}`);
}
