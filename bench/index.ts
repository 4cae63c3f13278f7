/** `npm run bench -- <scenario> [--flag value …]`. */
const scenarios: Record<string, () => Promise<(argv: string[]) => Promise<void>>> = {
  sim: async () => (await import('./sim')).runSim,
  throughput: async () => (await import('./throughput')).runThroughput,
};

async function main(): Promise<void> {
  const [name = '', ...argv] = process.argv.slice(2);
  const load = scenarios[name];
  if (!load) {
    console.error(`usage: npm run bench -- <${Object.keys(scenarios).join('|')}> [--flag value …]`);
    process.exit(2);
  }
  await (await load())(argv);
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
