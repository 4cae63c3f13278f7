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
  'common.js': { file: path.join(STATIC_DIR, 'common.js'), type: 'text/javascript; charset=utf-8' },
  'app.js': { file: path.join(STATIC_DIR, 'app.js'), type: 'text/javascript; charset=utf-8' },
  'runs.js': { file: path.join(STATIC_DIR, 'runs.js'), type: 'text/javascript; charset=utf-8' },
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

function sendBody(res: Response, body: Buffer, type: string): void {
  res.set('content-security-policy', CSP);
  res.set('x-content-type-options', 'nosniff');
  res.set('referrer-policy', 'no-referrer');
  res.set('cache-control', 'no-cache');
  res.type(type).send(body);
}
const send = (res: Response, file: string, type: string) => sendBody(res, read(file), type);

const attr = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * The page with the Temporal Web UI's address in its `fairway-temporal-ui` meta tags (empty: no link),
 * so the page links each run to its workflow there without asking the API.
 */
function indexPage(temporalUi: { url: string; namespace: string } | undefined): Buffer {
  const html = read(INDEX)
    .toString('utf8')
    .replace(
      '<meta name="fairway-temporal-ui" content="" />',
      `<meta name="fairway-temporal-ui" content="${attr(temporalUi?.url.replace(/\/+$/, '') ?? '')}" />`,
    )
    .replace(
      '<meta name="fairway-temporal-namespace" content="" />',
      `<meta name="fairway-temporal-namespace" content="${attr(temporalUi?.namespace ?? '')}" />`,
    );
  return Buffer.from(html);
}

/**
 * `/console`: the page and its assets. No token is needed for them: the data comes from the API, with
 * the token the operator signs in with.
 */
export function consolePageRouter(temporalUi?: { url: string; namespace: string }): Router {
  const router = Router();
  let page: Buffer | undefined;
  router.get('/console', (_req, res) => {
    page ??= indexPage(temporalUi);
    sendBody(res, page, 'text/html; charset=utf-8');
  });
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
