import { resolveSchemathesis } from './schemathesis-cli';
import { resolveTemporalCli } from './temporal-cli';

/** `npm run tools`: finds or installs the Temporal CLI and schemathesis (`npm run fuzz`), and says how. */
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
