import { run } from './main';

/** The `fairway` command (package.json bin → bin/fairway.cjs → here). */
let stopped = false;
let wake: (() => void) | undefined;
process.on('SIGINT', () => {
  stopped = true;
  wake?.();
});

const io = {
  out: (text: string) => process.stdout.write(`${text}\n`),
  err: (text: string) => process.stderr.write(`${text}\n`),
  isTty: Boolean(process.stdout.isTTY),
  sleep: (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (stopped) return resolve(false);
      const t = setTimeout(() => resolve(!stopped), ms);
      wake = () => {
        clearTimeout(t);
        resolve(false);
      };
    }),
};

void run(process.argv.slice(2), io).then((code) => {
  process.exitCode = code;
});
