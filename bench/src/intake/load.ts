import { signPayload } from "@holdfast/core/run";
import { Agent, request } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { quantiles, type Quantiles } from "../result";

/** Signed deliveries (Standard Webhooks headers, as a provider sends them) to one trigger URL over keep-alive connections. */
export interface Sender {
  send(n: number): Promise<{ status: number; ms: number }>;
  close(): void;
}

export function sender(url: string, secret: string, tag: string, connections: number): Sender {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(url);
  return {
    send(n) {
      const id = `msg_${tag}_${n}`;
      const body = JSON.stringify({ id: `${tag}-${n}`, email: `lead${n}@example.com`, plan: "pro" });
      const at = Math.floor(Date.now() / 1000);
      const headers = {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "webhook-id": id,
        "webhook-timestamp": String(at),
        "webhook-signature": signPayload(secret, id, at, body),
      };
      const began = performance.now();
      const once = (again: boolean) =>
        new Promise<{ status: number; ms: number }>((resolve) => {
          const req = request({ host: target.hostname, port: target.port, path: target.pathname, method: "POST", agent, headers }, (res) => {
            res.resume();
            res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - began }));
            res.on("error", () => resolve({ status: 0, ms: performance.now() - began }));
          });
          req.on("error", (error: NodeJS.ErrnoException) => {
            // A kept-alive connection the server closed as this request went out on it (its keep-alive timeout
            // raced the reuse): sent once more on a new one, as a sender's HTTP client does. Not a retry of an
            // answered request. Any other failure is a delivery not answered (status 0).
            if (again && req.reusedSocket && error.code === "ECONNRESET") resolve(once(false));
            else resolve({ status: 0, ms: performance.now() - began });
          });
          req.end(body);
        });
      return once(true);
    },
    close: () => agent.destroy(),
  };
}

export interface Burst {
  deliveries: number;
  accepted: number;
  /** Answers other than 202, by status (0: no answer, the connection failed). */
  refused: Record<string, number>;
  seconds: number;
  perSec: number;
  latencyMs: Quantiles | null;
  /** The open loop's slowest deliveries: when each was sent (ms from the row's start) and how long it took. */
  slowest?: { sentMs: number; ms: number }[];
  /**
   * The open loop's own delays, to tell a stall of the server from one of the bench: its latest send behind the
   * schedule (ms, and when), and the longest its event loop was held (ms; a held loop also reads answers late).
   */
  sender?: { lateMs: number; lateAtMs: number; loopDelayMaxMs: number };
}

/** Closed loop: `concurrency` senders, each sending its next delivery when the last was answered, `total` in all. */
export async function closedLoop(s: Sender, total: number, concurrency: number, from: number): Promise<Burst> {
  let next = 0;
  const lat: number[] = [];
  const statuses: number[] = [];
  const began = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const r = await s.send(from + next++);
        lat.push(r.ms);
        statuses.push(r.status);
      }
    }),
  );
  return summary(statuses, lat, (performance.now() - began) / 1000);
}

/** Open loop: deliveries sent at `rate` a second for `seconds`, whatever is still unanswered. */
export async function openLoop(s: Sender, rate: number, seconds: number, from: number): Promise<Burst> {
  const total = Math.max(1, Math.round(rate * seconds));
  const lat: number[] = [];
  const statuses: number[] = [];
  const began = performance.now();
  const pending: Promise<void>[] = [];
  const sent: { sentMs: number; ms: number }[] = [];
  // The histogram's values are in ns and each includes its timer's resolution, taken off below.
  const resolutionMs = 5;
  const loop = monitorEventLoopDelay({ resolution: resolutionMs });
  loop.enable();
  let late = { lateMs: 0, lateAtMs: 0 };
  try {
    for (let i = 0; i < total; i++) {
      const due = (i * 1000) / rate;
      const wait = began + due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const sentMs = performance.now() - began;
      if (sentMs - due > late.lateMs) late = { lateMs: sentMs - due, lateAtMs: sentMs };
      pending.push(
        s.send(from + i).then((r) => {
          lat.push(r.ms);
          statuses.push(r.status);
          sent.push({ sentMs, ms: r.ms });
        }),
      );
    }
    await Promise.all(pending);
  } finally {
    loop.disable();
  }
  const slowest = sent.sort((a, b) => b.ms - a.ms).slice(0, 12);
  const loopDelayMaxMs = Math.max(0, loop.max / 1e6 - resolutionMs);
  return { ...summary(statuses, lat, (performance.now() - began) / 1000), slowest, sender: { ...late, loopDelayMaxMs } };
}

function summary(statuses: number[], lat: number[], seconds: number): Burst {
  const refused: Record<string, number> = {};
  for (const st of statuses) if (st !== 202) refused[st] = (refused[st] ?? 0) + 1;
  const accepted = statuses.filter((st) => st === 202).length;
  return { deliveries: statuses.length, accepted, refused, seconds, perSec: statuses.length / seconds, latencyMs: quantiles(lat) };
}
