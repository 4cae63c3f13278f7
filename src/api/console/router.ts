import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Router } from 'express';
import type { Response } from 'express';
import { ApiError } from '../../contract/errors';
import type { ConsoleSampler } from './sampler';
import { ConsoleQuerySchema } from './schema';
import { parseOr400 } from '../intake/validation';

/**
 * Every asset of the page is served from this machine: the page's own files from ./static and
 * uPlot from the installed npm package. The CSP forbids anything else, so a stray CDN reference
 * fails loudly in the browser test instead of phoning out.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  file: string;
  type: string;
}

const STATIC_DIR = path.join(__dirname, 'static');
const ASSETS: Record<string, Asset> = {
  'app.js': { file: path.join(STATIC_DIR, 'app.js'), type: 'text/javascript; charset=utf-8' },
  'app.css': { file: path.join(STATIC_DIR, 'app.css'), type: 'text/css; charset=utf-8' },
  'uplot.js': {
    file: require.resolve('uplot/dist/uPlot.iife.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
  'uplot.css': { file: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
};
const INDEX = path.join(STATIC_DIR, 'index.html');

const cache = new Map<string, Buffer>();
const read = (file: string) => {
  let b = cache.get(file);
  if (!b) {
    b = readFileSync(file);
    cache.set(file, b);
  }
  return b;
};

function send(res: Response, file: string, type: string): void {
  res.set('content-security-policy', CSP);
  res.set('x-content-type-options', 'nosniff');
  res.set('referrer-policy', 'no-referrer');
  res.set('cache-control', 'no-cache');
  res.type(type).send(read(file));
}

/** `/console`: the page and its assets (no token needed: the data comes from the admin endpoint). */
export function consolePageRouter(): Router {
  const router = Router();
  router.get('/console', (_req, res) => send(res, INDEX, 'text/html; charset=utf-8'));
  router.get('/console/assets/:name', (req, res) => {
    // Own properties only: `constructor`, `__proto__` and the like are not assets.
    const asset = Object.hasOwn(ASSETS, req.params.name) ? ASSETS[req.params.name] : undefined;
    if (!asset) throw new ApiError('not_found', `No console asset named ${req.params.name}.`);
    send(res, asset.file, asset.type);
  });
  return router;
}

/** `/v1/admin/console`: the sampled state (admin only; mounted behind requireAdmin). */
export function consoleStateRouter(sampler: ConsoleSampler): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const { since } = parseOr400(ConsoleQuerySchema, req.query);
    if (!sampler.running) {
      // Not started by the process (a test app): start on first use, and answer with a first sample.
      sampler.start();
      await sampler.sample();
    }
    res.set('cache-control', 'no-store');
    res.json(sampler.state(Number(since ?? 0)));
  });
  return router;
}
