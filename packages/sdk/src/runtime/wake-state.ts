/**
 * A `wake` command as agent code sees it (docs/design.md §6.4): `onWake` listeners run at once, and
 * `interrupted` stays set until the code reaches a safe point and asks (`safePoint()`), so a loop that
 * cannot be interrupted anywhere can change course where it is safe to.
 */
export type WakeListener = (reason: string | undefined) => void;

export class WakeState {
  /** True after a `wake` until {@link safePoint} consumed it. */
  interrupted = false;
  private listeners: WakeListener[] | null = null;

  /** Run `fn` on every `wake`; returns a function that unsubscribes. */
  onWake(fn: WakeListener): () => void {
    if (typeof fn !== 'function') throw new TypeError('onWake(fn): fn must be a function');
    this.listeners ??= [];
    this.listeners.push(fn);
    return () => {
      const i = this.listeners?.indexOf(fn) ?? -1;
      if (i !== -1) this.listeners?.splice(i, 1);
    };
  }

  /** A `wake` arrived: set `interrupted`, run the listeners (a throwing one is handed to `onError`). */
  wake(reason: string | undefined, onError: (err: unknown) => void): void {
    this.interrupted = true;
    for (const fn of [...(this.listeners ?? [])]) {
      try {
        fn(reason);
      } catch (err) {
        onError(err);
      }
    }
  }

  /** True when a wake was pending; clears it. */
  safePoint(): boolean {
    const was = this.interrupted;
    this.interrupted = false;
    return was;
  }
}
