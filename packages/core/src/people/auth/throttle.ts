import { createHash } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";
import { RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";

/**
 * Sign-in throttling: failed attempts are counted per account (the email, hashed) and per client address, each in a
 * fixed window. An attempt takes a point from the address first, then from the account; a successful sign-in gives
 * the address its point back and clears the account's count, so only failures (and attempts refused while blocked)
 * add up. The account limit stops a guesser who spreads over many addresses; the address limit stops one address
 * trying many accounts. Counters live in PostgreSQL (table `signin_throttle`, created by a migration), so every web
 * process shares them and the web's database role needs no CREATE right.
 */
export interface SignInLimits {
  /** Failed attempts per account per window before the account is refused. */
  perAccount: number;
  /** Failed attempts per client address per window before the address is refused. */
  perAddress: number;
  windowSeconds: number;
}

export const defaultSignInLimits: SignInLimits = { perAccount: 10, perAddress: 50, windowSeconds: 900 };

export const signInThrottleTable = "signin_throttle";

export type ThrottleScope = "account" | "address";

export type ThrottleVerdict = { kind: "allow" } | { kind: "blocked"; scope: ThrottleScope; retryAfterSeconds: number };

/** The account's key: a digest of the normalised email, so the table holds no addresses and any length fits. */
export function accountKey(email: string): string {
  return createHash("sha256").update(email.trim().toLowerCase()).digest("hex").slice(0, 40);
}

/**
 * The address's key. An IPv4-mapped IPv6 address counts as its IPv4 address; an IPv6 address counts as its /64
 * (one subscriber gets a whole /64, so single IPv6 addresses would cost an attacker nothing to rotate).
 */
export function addressKey(address: string | null | undefined): string {
  const a = (address ?? "").trim().replace(/%.*$/, "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped?.[1] && isIPv4(mapped[1])) return mapped[1];
  if (isIPv4(a)) return a;
  if (isIPv6(a)) return `${expandIPv6(a).slice(0, 4).join(":")}::/64`;
  return "unknown";
}

function expandIPv6(a: string): string[] {
  // A trailing dotted quad (::1.2.3.4) becomes two groups before expanding.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  let s = a;
  if (quad?.[1]) {
    const [p, q, r, t] = quad[1].split(".").map(Number) as [number, number, number, number];
    s = `${a.slice(0, -quad[1].length)}${((p << 8) | q).toString(16)}:${((r << 8) | t).toString(16)}`;
  }
  const [head = "", tail] = s.split("::");
  const h = head ? head.split(":") : [];
  const t = tail === undefined ? [] : tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  return groups.map((g) => Number.parseInt(g || "0", 16).toString(16));
}

/** "14 minutes", "1 minute", "45 seconds": how long until the next attempt, rounded up. */
export function retryPhrase(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 60) return `${s} ${s === 1 ? "second" : "seconds"}`;
  const m = Math.ceil(s / 60);
  return `${m} ${m === 1 ? "minute" : "minutes"}`;
}

/** The sentence the sign-in form shows for a refusal. */
export function throttleMessage(verdict: Extract<ThrottleVerdict, { kind: "blocked" }>): string {
  const who = verdict.scope === "account" ? "for this account" : "from your network address";
  return `Too many sign-in attempts ${who}. Try again in ${retryPhrase(verdict.retryAfterSeconds)}.`;
}

/** A limiter's refusal (a RateLimiterRes) becomes a verdict; a store error (an Error) is not a refusal. */
export function verdictOf(scope: ThrottleScope, refusal: unknown): ThrottleVerdict {
  if (refusal instanceof RateLimiterRes) return { kind: "blocked", scope, retryAfterSeconds: Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)) };
  throw refusal;
}

export interface SignInThrottle {
  /** Takes one attempt from the address and the account; blocked when either has none left in its window. */
  attempt(email: string, address: string | null | undefined): Promise<ThrottleVerdict>;
  /** The attempt was a successful sign-in: the address gets its point back, the account's count is cleared. */
  succeeded(email: string, address: string | null | undefined): Promise<void>;
}

/**
 * The throttle over a `pg` pool. `tableCreated: true`: the table comes from the migration; expired rows are purged
 * by the sweeper (`signinThrottlePurgeExpired`), not by a timer in every web process.
 */
export function createSignInThrottle(pool: unknown, limits: SignInLimits = defaultSignInLimits): SignInThrottle {
  const common = { storeClient: pool, storeType: "pool", tableName: signInThrottleTable, tableCreated: true, clearExpiredByTimeout: false, duration: limits.windowSeconds };
  const byAccount = new RateLimiterPostgres({ ...common, keyPrefix: "account", points: limits.perAccount });
  const byAddress = new RateLimiterPostgres({ ...common, keyPrefix: "address", points: limits.perAddress });
  return {
    async attempt(email, address) {
      // The address first: a refused address does not also count against the accounts it is trying.
      try {
        await byAddress.consume(addressKey(address));
      } catch (refusal) {
        return verdictOf("address", refusal);
      }
      try {
        await byAccount.consume(accountKey(email));
      } catch (refusal) {
        return verdictOf("account", refusal);
      }
      return { kind: "allow" };
    },
    async succeeded(email, address) {
      await Promise.all([byAccount.delete(accountKey(email)), byAddress.reward(addressKey(address))]);
    },
  };
}
