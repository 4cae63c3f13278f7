import type { StormPhases } from './storm-eval';
import type { StormSample } from './storm-run';

interface Series {
  label: string;
  color: string;
  values: number[];
  dashed?: boolean;
}

const W = 960;
const PANEL_H = 240;
const M = { left: 70, right: 170, top: 30, bottom: 30 };

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function panel(
  y0: number,
  title: string,
  ts: number[],
  series: Series[],
  phases: StormPhases,
  unit: string,
): string {
  const tMax = Math.max(1, ...ts);
  const vMax = Math.max(1, ...series.flatMap((s) => s.values)) * 1.1;
  const plotW = W - M.left - M.right;
  const plotH = PANEL_H - M.top - M.bottom;
  const x = (t: number) => M.left + (t / tMax) * plotW;
  const y = (v: number) => y0 + M.top + plotH - (v / vMax) * plotH;
  const out: string[] = [];
  out.push(`<text x="${M.left}" y="${y0 + 18}" font-size="14" font-weight="bold">${esc(title)}</text>`);
  // The storm: shaded between cut and restore.
  out.push(
    `<rect x="${x(phases.cutAt)}" y="${y0 + M.top}" width="${x(phases.restoreAt) - x(phases.cutAt)}" height="${plotH}" fill="#fde2e2"/>`,
  );
  for (let i = 0; i <= 4; i++) {
    const v = (vMax / 4) * i;
    out.push(
      `<line x1="${M.left}" x2="${M.left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${M.left - 6}" y="${y(v) + 4}" font-size="11" text-anchor="end">${Math.round(v).toLocaleString('en-US')}</text>`,
    );
  }
  for (let t = 0; t <= tMax; t += 30)
    out.push(`<text x="${x(t)}" y="${y0 + PANEL_H - 12}" font-size="11" text-anchor="middle">${t}s</text>`);
  out.push(
    `<rect x="${M.left}" y="${y0 + M.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`,
  );
  series.forEach((s, i) => {
    const pts = s.values.map((v, j) => `${x(ts[j] ?? 0).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="1.6"${dash} points="${pts}"/>`);
    const ly = y0 + M.top + 14 + i * 18;
    out.push(
      `<line x1="${W - M.right + 12}" x2="${W - M.right + 36}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${dash}/>`,
      `<text x="${W - M.right + 42}" y="${ly}" font-size="12">${esc(s.label)}</text>`,
    );
  });
  out.push(
    `<text x="${W - M.right + 12}" y="${y0 + M.top + 14 + series.length * 18 + 8}" font-size="11" fill="#666">${esc(unit)}</text>`,
  );
  return out.join('\n');
}

/** Moving average over `k` seconds ending at each point (smooths per-second jitter for the eye). */
function smooth(values: number[], k: number): number[] {
  return values.map((_, i) => {
    const from = Math.max(0, i - k + 1);
    const slice = values.slice(from, i + 1);
    return slice.reduce((a, b) => a + b, 0) / slice.length;
  });
}

/** The storm as a two-panel SVG: tokens per minute above, calls and admissions per second below. */
export function stormSvg(seconds: StormSample[], phases: StormPhases, title: string): string {
  const ts = seconds.map((s) => s.t);
  const top = panel(
    0,
    'Tokens per minute',
    ts,
    [
      { label: 'provider quota', color: '#444', values: seconds.map((s) => s.quotaTpm), dashed: true },
      { label: 'governor tpm', color: '#1f77b4', values: seconds.map((s) => s.governorTpm) },
      {
        label: 'served (5 s avg)',
        color: '#2ca02c',
        values: smooth(
          seconds.map((s) => s.tokens * 60),
          5,
        ),
      },
    ],
    phases,
    'shaded: quota cut',
  );
  const bottom = panel(
    PANEL_H,
    'Per second (5 s average)',
    ts,
    [
      {
        label: 'model calls',
        color: '#2ca02c',
        values: smooth(
          seconds.map((s) => s.calls),
          5,
        ),
      },
      {
        label: 'throttled calls',
        color: '#d62728',
        values: smooth(
          seconds.map((s) => s.throttled),
          5,
        ),
      },
      {
        label: 'admitted units',
        color: '#1f77b4',
        values: smooth(
          seconds.map((s) => s.admitted),
          5,
        ),
      },
      { label: 'concurrency limit', color: '#9467bd', values: seconds.map((s) => s.concurrencyLimit) },
      { label: 'in flight', color: '#ff7f0e', values: seconds.map((s) => s.inFlight), dashed: true },
    ],
    phases,
    '',
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${2 * PANEL_H + 30}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    top,
    bottom,
    `<text x="${M.left}" y="${2 * PANEL_H + 20}" font-size="12" fill="#333">${esc(title)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
