/** Knobs of the scheduler simulator, all settable as `--kebab-case value` flags. */
export interface SimOptions {
  tenants: number;
  units: number;
  seed: number;
  /** Fleet concurrency (slots). */
  concurrency: number;
  /** Units arrive (Poisson) over this many virtual seconds. */
  arrivalSeconds: number;
  /** Virtual time step of the driver loop. */
  stepMs: number;
  /** Model-plane quota in tokens per minute, and whether it is cut to a third mid-run. */
  tpm: number;
  storm: boolean;
  /** Fairness windows close after this many lane admissions per tenant backlogged at their start. */
  windowUnits: number;
  /** Share of admitted units whose worker vanishes (their lease expires and they are retried). */
  vanish: number;
  /** Steady-state decision timing: backlog held at this depth for this many decisions (0 skips it). */
  steadyQueued: number;
  steadyDecisions: number;
  /**
   * Sharded mode (issue 48) when > 0: this many cores as shards under the fleet governor, on a
   * skewed trace, beside one core (the oracle) on the same trace. 0 keeps the single-core sim.
   */
  shards: number;
  /** The skewed trace: whale tenants, their share of the units, and end-user fairness keys per whale. */
  whales: number;
  whaleShare: number;
  whaleKeys: number;
  /** The fleet governor's renewal period, ms (a grant's lease is three of them). */
  grantMs: number;
  /** Share of the quota held back as the shards' floors. */
  floorShare: number;
  /** Whether shard 0 stops renewing for a tenth of the run (its grant lapses to its floor). */
  lapse: boolean;
  /** Sharded mode: every unit in the standard lane (isolates fairness across shards from lane mixes). */
  oneLane: boolean;
  /** Sharded mode: shards send a demand curve per lane and set their lane floors from the governor's split. */
  laneGrants: boolean;
  out: string;
}

export const DEFAULT_SIM_OPTIONS: SimOptions = {
  tenants: 1000,
  units: 1_000_000,
  seed: 42,
  concurrency: 1000,
  arrivalSeconds: 2000,
  stepMs: 50,
  tpm: 80_000_000,
  storm: true,
  windowUnits: 100,
  vanish: 0.0002,
  steadyQueued: 100_000,
  steadyDecisions: 200_000,
  shards: 0,
  whales: 4,
  whaleShare: 0.5,
  whaleKeys: 2000,
  grantMs: 1000,
  floorShare: 0.1,
  lapse: true,
  oneLane: false,
  laneGrants: true,
  out: 'bench/results/sim.json',
};

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Parses `--name value`, `--flag` and `--no-flag`; unknown flags are an error. */
export function parseSimOptions(argv: readonly string[]): SimOptions {
  const o: Record<string, unknown> = { ...DEFAULT_SIM_OPTIONS };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) throw new Error(`Unexpected argument ${arg}`);
    const negated = arg.startsWith('--no-');
    const key = camel(arg.slice(negated ? 5 : 2));
    if (!(key in DEFAULT_SIM_OPTIONS)) throw new Error(`Unknown option ${arg}`);
    const def = DEFAULT_SIM_OPTIONS[key as keyof SimOptions];
    if (typeof def === 'boolean') {
      o[key] = !negated;
    } else {
      const value = argv[++i];
      if (value === undefined) throw new Error(`Missing value for ${arg}`);
      o[key] = typeof def === 'number' ? Number(value) : value;
      if (typeof def === 'number' && !Number.isFinite(o[key]))
        throw new Error(`Not a number: ${arg} ${value}`);
    }
  }
  return o as unknown as SimOptions;
}
