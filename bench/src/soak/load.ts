import { createHmac } from "node:crypto";
import { fetchWithin } from "./http";
import { sleep } from "./infra/exec";
import { type Plan, planFor } from "./mix";

/** What the sender saw for one delivery (one event, one webhook-id, however many attempts). */
export interface Delivery {
  i: number;
  webhookId: string;
  attempts: number;
  /** Every 2xx answer's run id (the first, and any redelivery's). */
  runIds: string[];
  statuses: number[];
  /** When each answer came (ms after t0), beside `statuses`. */
  answeredAt: number[];
  /** Whether each answer carried a Retry-After, beside `statuses` (a 503 should: the sender then knows when to retry). */
  retryAfter: boolean[];
  /** Answers that were neither success nor worth a retry (4xx other than 408/429): a delivery refused for good. */
  refused: { status: number; body: string }[];
  firstAt: number;
  ackedAt: number | null;
}

/** The sender's answers per 10 s of the load, by status (0: none within 15 s, -1: no connection), e.g. {"40": {"202": 31, "503": 12}}. */
export function answersOverTime(deliveries: Delivery[], bucketMs = 10_000): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const d of deliveries) {
    d.statuses.forEach((status, k) => {
      const at = String(Math.floor((d.answeredAt[k] ?? 0) / bucketMs) * (bucketMs / 1000));
      const row = (out[at] ??= {});
      row[status] = (row[status] ?? 0) + 1;
    });
  }
  return out;
}

export interface LoadOptions {
  seed: number;
  runs: number;
  /** Deliveries started per second (open loop: an outage does not slow the sender down, it only piles up retries). */
  rate: number;
  webs: string[];
  path: string;
  signingSecret: string;
  /** Requests in flight at once: the provider's delivery workers (the rest wait their turn, as in its queue). */
  concurrency?: number;
  log: (line: string) => void;
}

export interface Load {
  deliveries: Delivery[];
  /** Resolves when every delivery was acknowledged (or refused for good). */
  done: Promise<void>;
  /** When the last delivery was first sent, ms after t0. */
  startedAll: Promise<number>;
  stop(): void;
}

/**
 * The webhook sender, as a provider behaves: each event is POSTed with a Standard Webhooks signature (signed anew
 * for every attempt, the same webhook-id throughout) to one of the web processes, by a pool of 24 delivery workers;
 * a 5xx, 408, 429, a failed connection or no answer within 15 s is retried with backoff (2 s, 5 s, 15 s, 30 s, then
 * every 60 s, with jitter; a Retry-After wins) until it is acknowledged. A few events are delivered again after their
 * first success, as providers do.
 */
export function startLoad(o: LoadOptions, t0: number): Load {
  const deliveries: Delivery[] = [];
  let stopped = false;
  const senders = limit(o.concurrency ?? 24);
  let webTurn = 0;
  const key = Buffer.from(o.signingSecret.replace(/^whsec_/, ""), "base64");
  const sign = (id: string, body: string) => {
    const ts = Math.floor(Date.now() / 1000);
    return { ts, signature: `v1,${createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64")}` };
  };

  const attempt = (d: Delivery, body: string) => senders.run(() => attemptNow(d, body));
  const attemptNow = async (d: Delivery, body: string): Promise<{ ok: boolean; retryAfterMs?: number; final?: boolean }> => {
    const base = o.webs[webTurn++ % o.webs.length] as string;
    const { ts, signature } = sign(d.webhookId, body);
    d.attempts++;
    try {
      const res = await fetchWithin(
        `${base}${o.path}`,
        {
          method: "POST",
          headers: { "content-type": "application/json", "webhook-id": d.webhookId, "webhook-timestamp": String(ts), "webhook-signature": signature },
          body,
        },
        15_000,
      );
      const text = res.text;
      d.statuses.push(res.status);
      d.answeredAt.push(Date.now() - t0);
      d.retryAfter.push(res.headers.has("retry-after"));
      if (res.status >= 200 && res.status < 300) {
        const parsed = JSON.parse(text) as { runId: string };
        d.runIds.push(parsed.runId);
        return { ok: true };
      }
      const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
      if (!retryable) {
        d.refused.push({ status: res.status, body: text.slice(0, 300) });
        return { ok: false, final: true };
      }
      const after = Number(res.headers.get("retry-after"));
      return { ok: false, ...(Number.isFinite(after) && after > 0 ? { retryAfterMs: after * 1000 } : {}) };
    } catch (error) {
      // 0: no answer in time; -1: no connection (refused or reset).
      d.statuses.push(/no answer within/.test((error as Error).message) ? 0 : -1);
      d.answeredAt.push(Date.now() - t0);
      d.retryAfter.push(false);
      return { ok: false };
    }
  };

  const deliver = async (p: Plan, d: Delivery) => {
    const body = JSON.stringify({ id: d.webhookId, email: p.email, plan: p.plan, topic: `order ${p.i}` });
    for (let n = 0; !stopped; n++) {
      const r = await attempt(d, body);
      if (r.ok) {
        d.ackedAt ??= Date.now() - t0;
        break;
      }
      if (r.final) return;
      // As providers back off: 1 s doubling to 30 s, with jitter; a Retry-After wins.
      await sleep(r.retryAfterMs ?? backoffMs(n));
    }
    if (p.redeliver) {
      for (let k = 0; k < 2 && !stopped; k++) {
        await sleep(200 + Math.random() * 1_000);
        for (let n = 0; !stopped; n++) {
          const r = await attempt(d, body);
          if (r.ok || r.final) break;
          await sleep(r.retryAfterMs ?? backoffMs(n));
        }
      }
    }
  };

  const all: Promise<void>[] = [];
  let resolveStarted: (ms: number) => void = () => undefined;
  const startedAll = new Promise<number>((r) => (resolveStarted = r));
  const feeder = (async () => {
    for (let i = 0; i < o.runs && !stopped; i++) {
      const due = t0 + (i * 1000) / o.rate;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      const p = planFor(o.seed, i);
      const d: Delivery = { i, webhookId: `msg_soak_${o.seed}_${i}`, attempts: 0, runIds: [], statuses: [], answeredAt: [], retryAfter: [], refused: [], firstAt: Date.now() - t0, ackedAt: null };
      deliveries.push(d);
      all.push(deliver(p, d));
      if ((i + 1) % 500 === 0) o.log(`load: ${i + 1} deliveries started`);
    }
    resolveStarted(Date.now() - t0);
  })();
  return {
    deliveries,
    startedAll,
    done: feeder.then(async () => {
      await Promise.all(all);
    }),
    stop() {
      stopped = true;
    },
  };
}

/** A provider's retry schedule, compressed to minutes: 2 s, 5 s, 15 s, 30 s, then 60 s, each with +-25% jitter. */
export function backoffMs(attempt: number): number {
  const base = [2_000, 5_000, 15_000, 30_000][attempt] ?? 60_000;
  return base * (0.75 + Math.random() / 2);
}

/** At most n of the given tasks run at once; the others wait in order. */
export function limit(n: number): { run<T>(task: () => Promise<T>): Promise<T> } {
  let active = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(task) {
      if (active >= n) await new Promise<void>((r) => waiting.push(r));
      active++;
      try {
        return await task();
      } finally {
        active--;
        waiting.shift()?.();
      }
    },
  };
}
