import { describe, expect, it } from "vitest";
import { parseRetryAfter, retryDelayMs, settlementFor } from "../src/run/steps/retry";

describe("retry policy", () => {
  it("draws full jitter below min(cap, base * 2^attempt)", () => {
    expect(retryDelayMs(3, { baseMs: 1000, capMs: 300_000 }, () => 0.999)).toBeCloseTo(7992);
    expect(retryDelayMs(20, { baseMs: 1000, capMs: 300_000 }, () => 0.5)).toBe(150_000);
    expect(retryDelayMs(1, { baseMs: 1000, capMs: 300_000 }, () => 0)).toBe(0);
  });

  it("reads Retry-After as seconds or an HTTP date against the provider's clock", () => {
    expect(parseRetryAfter("7", null, 0)).toBe(7000);
    expect(parseRetryAfter("Sun, 29 Nov 2026 10:00:30 GMT", "Sun, 29 Nov 2026 10:00:00 GMT", 0)).toBe(30_000);
    expect(parseRetryAfter("soon", null, 0)).toBeUndefined();
  });

  it("lets Retry-After win, stops at maxAttempts, never retries a permanent error", () => {
    const policy = { baseMs: 1000, capMs: 60_000 };
    const retry = { kind: "retry" as const, error: { code: "http_429", message: "slow down" }, retryAfterMs: 5000 };
    expect(settlementFor(retry, 1, 3, policy)).toEqual({ kind: "retry", error: retry.error, delayMs: 5000 });
    expect(settlementFor(retry, 3, 3, policy)).toMatchObject({ kind: "fail", error: { exhausted: true, attempts: 3 } });
    expect(settlementFor({ kind: "fail", error: { code: "http_404", message: "gone" } }, 1, 3, policy).kind).toBe("fail");
  });
});
