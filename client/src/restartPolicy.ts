// How often a crashed server is restarted before the extension gives up. Pure.

export interface CrashVerdict {
  readonly restart: boolean;
  /** Crashes inside the window, this one included. */
  readonly crashes: number;
}

export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    /** Restarts allowed inside the window; the next crash gives up. */
    readonly maxRestarts = 4,
    readonly windowMs = 3 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a crash; says whether to restart. */
  crashed(): CrashVerdict {
    const now = this.now();
    this.crashes = this.crashes.filter((time) => now - time < this.windowMs);
    this.crashes.push(now);
    return { restart: this.crashes.length <= this.maxRestarts, crashes: this.crashes.length };
  }

  /** Forgets past crashes (a start the user asked for). */
  reset(): void {
    this.crashes = [];
  }
}
