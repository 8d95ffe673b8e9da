import type { Injected } from "./faults/inject";
import type { Delivery } from "./load";

/** One cluster outage as the senders saw it, beside what the cluster measured of it. */
export interface OutageSeen {
  kind: "pg_failover" | "redis_failover" | "db_cut";
  /** The node killed, or the process whose path was cut. */
  target: string;
  /** Ms after the load began. */
  atMs: number;
  /** Kill to writes accepted (PostgreSQL) or cluster_state:ok (Redis), measured by the cluster's handle; null for a cut. */
  clusterMs: number | null;
  /**
   * From the first delivery that failed (any answer but 2xx, or none) after the fault began, to the first one
   * accepted after that; 0 when no delivery failed.
   */
  unavailableMs: number;
  /** Answers 503 meanwhile (between that first failure and that first acceptance), and how many said Retry-After. */
  answered503: number;
  with503RetryAfter: number;
}

export interface Spread {
  n: number;
  p50: number;
  max: number;
}

export interface FailoverFigures {
  postgres: { n: number; unavailableMs: Spread; answered503: number; with503RetryAfter: number; clusterMs: Spread };
  redis: { n: number; unavailableMs: Spread; answered503: number; with503RetryAfter: number; clusterMs: Spread };
  cuts: { n: number; unavailableMs: Spread; answered503: number };
  each: OutageSeen[];
}

/** How long after the cluster reports itself back a failed answer still counts as the outage's: the sender's timeout. */
export const lateAnswerMs = 15_000;

interface Answer {
  at: number;
  status: number;
  retryAfter: boolean;
}

/** Every answer the senders got, in time order. */
export function answersOf(deliveries: Delivery[]): Answer[] {
  return deliveries
    .flatMap((d) => d.statuses.map((status, k) => ({ at: d.answeredAt[k] ?? 0, status, retryAfter: d.retryAfter[k] ?? false })))
    .sort((a, b) => a.at - b.at);
}

const accepted = (a: Answer) => a.status >= 200 && a.status < 300;

/**
 * The senders' view of one outage: the first failed answer in [fault began, untilMs] (the service back plus the
 * sender's timeout, and never past the next outage's start), then the first accepted answer after it. Other faults (a web process killed meanwhile) can fail a delivery in that
 * window too; outages run one at a time, so the figure is at worst an outage's plus a neighbour's.
 */
export function seenBySenders(answers: Answer[], fromMs: number, untilMs: number): { unavailableMs: number; answered503: number; with503RetryAfter: number } {
  const firstFailed = answers.find((a) => a.at >= fromMs && a.at <= untilMs && !accepted(a));
  if (!firstFailed) return { unavailableMs: 0, answered503: 0, with503RetryAfter: 0 };
  const firstAccepted = answers.find((a) => a.at >= firstFailed.at && accepted(a));
  const until = firstAccepted?.at ?? Number.POSITIVE_INFINITY;
  const meanwhile = answers.filter((a) => a.at >= firstFailed.at && a.at <= until && a.status === 503);
  return {
    // Never accepted again: unavailable to the end of what the senders saw.
    unavailableMs: (firstAccepted?.at ?? answers.at(-1)?.at ?? firstFailed.at) - firstFailed.at,
    answered503: meanwhile.length,
    with503RetryAfter: meanwhile.filter((a) => a.retryAfter).length,
  };
}

export function spread(values: number[]): Spread {
  if (!values.length) return { n: 0, p50: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50: sorted[Math.floor((sorted.length - 1) / 2)] as number, max: sorted.at(-1) as number };
}

/** The failover figures of a cluster soak, from the injected faults and the senders' answers. */
export function failoverFigures(injected: Injected[], deliveries: Delivery[]): FailoverFigures {
  const answers = answersOf(deliveries);
  const outages = injected.filter((f) => f.kind === "pg_failover" || f.kind === "redis_failover" || f.kind === "db_cut").sort((a, b) => a.atMs - b.atMs);
  const each: OutageSeen[] = outages
    .map((f, i) => {
      const back = f.failover ? f.failover.writableAtMs : f.endMs;
      const until = Math.min(back + lateAnswerMs, outages[i + 1]?.atMs ?? Number.POSITIVE_INFINITY);
      return {
        kind: f.kind as OutageSeen["kind"],
        target: f.target ?? "",
        atMs: f.atMs,
        clusterMs: f.failover?.failoverMs ?? null,
        ...seenBySenders(answers, f.atMs, until),
      };
    });
  const of = (kind: OutageSeen["kind"]) => {
    const xs = each.filter((x) => x.kind === kind);
    return {
      n: xs.length,
      unavailableMs: spread(xs.map((x) => x.unavailableMs)),
      answered503: xs.reduce((n, x) => n + x.answered503, 0),
      with503RetryAfter: xs.reduce((n, x) => n + x.with503RetryAfter, 0),
      clusterMs: spread(xs.map((x) => x.clusterMs ?? 0)),
    };
  };
  const cuts = of("db_cut");
  return { postgres: of("pg_failover"), redis: of("redis_failover"), cuts: { n: cuts.n, unavailableMs: cuts.unavailableMs, answered503: cuts.answered503 }, each };
}
