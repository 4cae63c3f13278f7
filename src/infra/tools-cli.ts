import { resolveTemporalCli } from './temporal-cli';

/** `npm run tools`: finds or installs the Temporal CLI and says which route worked. */
const r = resolveTemporalCli(process.env.TEMPORAL_CLI_PATH, (m) => console.log(m));
if (r.kind === 'path') console.log(`Temporal CLI: ${r.path} (found via ${r.source})`);
else {
  console.log(r.reason);
  console.log(
    "npm start and npm test will fall back to the Temporal SDK's own download (needs the internet).",
  );
}
