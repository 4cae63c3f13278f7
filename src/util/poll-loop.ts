/**
 * Runs `pass` again `everyMs` after each one ends (never two at once), until stopped; a pass that
 * throws is handed to `onError` and the loop goes on. Its timer does not keep the process alive.
 */
export class PollLoop {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private running = false;
  private stopCalled = false;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly everyMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** True once `stop` was called (a pass under way may look, to end early). */
  get stopped(): boolean {
    return this.stopCalled;
  }

  start(): void {
    this.running = true;
    this.stopCalled = false;
    const tick = () => {
      if (!this.running) return;
      this.current = this.pass()
        .then(() => undefined)
        .catch(this.onError)
        .finally(() => {
          if (this.running) this.timer = setTimeout(tick, this.everyMs).unref();
        });
    };
    tick();
  }

  /** Stops the loop and waits for the pass under way. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopCalled = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current;
  }
}
