/**
 * Wrong tokens per client address (issue 17): the console's token may be a password a person chose,
 * so a device on the store's LAN must not try many. After `limit` wrong tokens from one address
 * within `windowMs` of the first, that address gets 429 for the rest of the window, even with the
 * right token (else the answer would tell when a guess was right). Only wrong tokens count: a page
 * polling before its person signed in sends none. The table is bounded (oldest address dropped), so
 * a flood of addresses costs a fixed amount of memory.
 */
export class FailedSignIns {
  private readonly failures = new Map<string, { first: number; count: number }>();

  constructor(
    private readonly limit = 5,
    private readonly windowMs = 60_000,
    private readonly maxAddresses = 1024,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds `address` must wait before its next try; 0 when it may try now. */
  waitMs(address: string): number {
    const entry = this.failures.get(address);
    if (!entry) return 0;
    const left = entry.first + this.windowMs - this.now();
    if (left <= 0) {
      this.failures.delete(address);
      return 0;
    }
    return entry.count >= this.limit ? left : 0;
  }

  /** Counts a wrong token from `address`; true when this one used up its tries. */
  failed(address: string): boolean {
    const at = this.now();
    let entry = this.failures.get(address);
    if (!entry || at - entry.first >= this.windowMs) {
      this.failures.delete(address);
      if (this.failures.size >= this.maxAddresses) {
        const oldest = this.failures.keys().next().value;
        if (oldest !== undefined) this.failures.delete(oldest);
      }
      entry = { first: at, count: 0 };
      this.failures.set(address, entry);
    }
    entry.count += 1;
    return entry.count === this.limit;
  }

  /** A right token: the address starts afresh. */
  succeeded(address: string): void {
    this.failures.delete(address);
  }
}
