/**
 * Progress of long work (benches, drills): on a terminal, one bar redrawn in place with units done,
 * rate and ETA; elsewhere (CI, a log file) a plain line every `everyMs` and one at the end.
 */
export interface Progress {
  /** Units done so far (absolute), and a short note shown after the figures. */
  update(done: number, note?: string): void;
  /** Prints a line above the bar (the bar is redrawn below it). */
  log(line: string): void;
  /** Final figures; the bar stays on screen. */
  finish(note?: string): void;
}

export interface ProgressOptions {
  stream?: { write(s: string): unknown; isTTY?: boolean; columns?: number };
  now?: () => number;
  /** Not a TTY: seconds between plain lines (default 10 s). */
  everyMs?: number;
  /** Unit name in the figures, e.g. "units" or "s". */
  unit?: string;
}

const RATE_WINDOW_MS = 10_000;

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

export function createProgress(label: string, total: number, opts: ProgressOptions = {}): Progress {
  const stream = opts.stream ?? process.stdout;
  const now = opts.now ?? Date.now;
  const tty = Boolean(stream.isTTY);
  const everyMs = opts.everyMs ?? 10_000;
  const unit = opts.unit ?? 'units';
  const t0 = now();
  const points: { t: number; done: number }[] = [{ t: t0, done: 0 }];
  let done = 0;
  let note = '';
  let lastPlain = t0;
  let lastDraw = 0;
  let drawn = false;

  /** Rate over the last few seconds (falls back to the whole run while it is younger). */
  const rate = () => {
    const t = now();
    while (points.length > 2 && points[1]!.t < t - RATE_WINDOW_MS) points.shift();
    const first = points[0]!;
    const dt = (t - first.t) / 1000;
    return dt > 0 ? (done - first.done) / dt : 0;
  };

  const figures = () => {
    const r = rate();
    const share = total > 0 ? Math.min(1, done / total) : 0;
    const eta = r > 0 ? (total - done) / r : Infinity;
    return {
      share,
      text:
        `${done}/${total} ${unit} ${(share * 100).toFixed(0).padStart(3)}%  ${r.toFixed(1)} ${unit}/s  ` +
        `elapsed ${formatDuration((now() - t0) / 1000)}  ETA ${done >= total ? '0:00' : formatDuration(eta)}` +
        (note ? `  ${note}` : ''),
    };
  };

  const draw = () => {
    const f = figures();
    const width = 24;
    const filled = Math.round(f.share * width);
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
    let line = `${label} ${bar} ${f.text}`;
    const cols = stream.columns ?? 120;
    if (line.length > cols - 1) line = line.slice(0, cols - 1);
    stream.write(`\r${line}\x1b[K`);
    drawn = true;
    lastDraw = now();
  };

  const plain = () => {
    stream.write(`${label}: ${figures().text}\n`);
    lastPlain = now();
  };

  return {
    update(n, text) {
      done = n;
      if (text !== undefined) note = text;
      points.push({ t: now(), done });
      if (tty) {
        if (now() - lastDraw >= 100 || done >= total) draw();
      } else if (now() - lastPlain >= everyMs) {
        plain();
      }
    },
    log(line) {
      if (tty && drawn) {
        stream.write(`\r\x1b[K${line}\n`);
        draw();
      } else {
        stream.write(`${line}\n`);
      }
    },
    finish(text) {
      if (text !== undefined) note = text;
      if (tty) {
        draw();
        stream.write('\n');
      } else {
        plain();
      }
    },
  };
}
