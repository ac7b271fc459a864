/**
 * A poll loop's sleep that can be cut short: `wake()` ends the current sleep at once (and does
 * nothing when none is running), so work that arrives is taken up without waiting out the poll.
 */
export class WakeableSleep {
  private wakeUp: (() => void) | null = null;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        this.wakeUp = null;
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wakeUp = finish;
    });
  }

  wake(): void {
    this.wakeUp?.();
  }
}
