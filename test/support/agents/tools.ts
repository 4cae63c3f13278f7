import type { ToolHandler } from '../../../src';

const handler: ToolHandler = async (args, ctx) => ({
  hit: `result for ${String(args.q)}`,
  actedAs: ctx.identity,
});

/**
 * A user's tools module (`fairway worker --tools`): `search` answers from its arguments, under the
 * credential SEARCH_CREDENTIAL names (a random one per process without it).
 */
export const search = process.env.SEARCH_CREDENTIAL
  ? { handler, credential: process.env.SEARCH_CREDENTIAL }
  : handler;
