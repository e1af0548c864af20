/**
 * A client-side token bucket like client-go's, for a platform that wants the operator capped on its
 * side too (KUBE_API_QPS; off by default, docs/operator.md). Watches are not limited.
 */
export interface TokenBucketOptions {
  qps: number;
  burst: number;
  /** Monotonic milliseconds; injectable for tests. */
  now?: () => number;
}

export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly o: Required<TokenBucketOptions>;
  /** Reservations are handed out in order, so a waiter is never overtaken. */
  private tail: Promise<void> = Promise.resolve();

  constructor(o: TokenBucketOptions) {
    if (!(o.qps > 0) || !(o.burst >= 1)) throw new Error('a token bucket needs qps > 0 and burst >= 1');
    this.o = { now: () => performance.now(), ...o };
    this.tokens = o.burst;
    this.last = this.o.now();
  }

  /** Milliseconds to wait before one more request may go (and takes its token). */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.o.qps) * 1000;
  }

  /** Takes a token if one is there now and says so; never reserves one ahead (for callers that refuse instead of waiting). */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private refill(): void {
    const now = this.o.now();
    this.tokens = Math.min(this.o.burst, this.tokens + ((now - this.last) / 1000) * this.o.qps);
    this.last = now;
  }

  /** Resolves when a request may go. */
  take(): Promise<void> {
    const wait = this.reserve();
    if (wait === 0) return Promise.resolve();
    const turn = this.tail.then(() => new Promise<void>((resolve) => setTimeout(resolve, wait)));
    this.tail = turn;
    return turn;
  }
}
