import type { Member } from "../fleet";
import { sleep } from "../infra/exec";
import type { Fault, FaultKind } from "./schedule";

export interface Outages {
  restartPostgres(downMs: number): Promise<void>;
  restartRedis(downMs: number): Promise<void>;
}

export interface Injected {
  kind: FaultKind;
  /** The process (its label) and its kind; null for PostgreSQL and Redis. */
  target: string | null;
  targetKind: string | null;
  /** Milliseconds after the load began: when it was done, and when it was over (continued, service back). */
  atMs: number;
  endMs: number;
  durationMs: number;
}

export interface Injection {
  /** Resolves when every fault has been done and is over (every frozen process continued, every service back). */
  done: Promise<Injected[]>;
  /** Continue every frozen process now (the soak is ending early). */
  abort(): void;
}

/**
 * Carries out the schedule against the fleet and the services, at its offsets from `t0`. A process fault goes to
 * the chosen member of its kind; one that is frozen already is skipped for the next of its kind, and when all of
 * them are frozen the fault waits until one continues (a fault is never lost, only late).
 */
export function injectFaults(schedule: Fault[], fleet: Member[], outages: Outages, t0: number, log: (line: string) => void): Injection {
  const injected: Injected[] = [];
  let aborted = false;
  const pending: Promise<void>[] = [];
  const since = () => Date.now() - t0;

  const target = async (f: Fault): Promise<Member | null> => {
    const members = fleet.filter((m) => m.kind === f.target);
    for (;;) {
      if (aborted) return null;
      for (let i = 0; i < members.length; i++) {
        const m = members[((f.pick ?? 0) + i) % members.length] as Member;
        if (!m.frozen) return m;
      }
      await sleep(100);
    }
  };

  const apply = async (f: Fault): Promise<void> => {
    const at = since();
    switch (f.kind) {
      case "sigkill": {
        const m = await target(f);
        if (!m) return;
        m.proc.signal("SIGKILL");
        injected.push({ kind: f.kind, target: m.label, targetKind: m.kind, atMs: at, endMs: since(), durationMs: 0 });
        log(`fault ${at} ms: SIGKILL ${m.label}`);
        return;
      }
      case "sigstop": {
        const m = await target(f);
        if (!m) return;
        m.frozen = true;
        m.proc.signal("SIGSTOP");
        log(`fault ${at} ms: SIGSTOP ${m.label} for ${f.durationMs} ms`);
        const until = Date.now() + f.durationMs;
        while (!aborted && Date.now() < until) await sleep(Math.min(100, until - Date.now()));
        m.proc.signal("SIGCONT");
        m.frozen = false;
        injected.push({ kind: f.kind, target: m.label, targetKind: m.kind, atMs: at, endMs: since(), durationMs: f.durationMs });
        return;
      }
      case "pg_restart":
      case "redis_restart": {
        log(`fault ${at} ms: ${f.kind === "pg_restart" ? "PostgreSQL" : "Redis"} down for ${f.durationMs} ms`);
        await (f.kind === "pg_restart" ? outages.restartPostgres(f.durationMs) : outages.restartRedis(f.durationMs));
        injected.push({ kind: f.kind, target: null, targetKind: null, atMs: at, endMs: since(), durationMs: f.durationMs });
        log(`fault ${since()} ms: ${f.kind === "pg_restart" ? "PostgreSQL" : "Redis"} is back`);
        return;
      }
    }
  };

  const done = (async () => {
    for (const f of schedule) {
      const wait = t0 + f.atMs - Date.now();
      if (wait > 0) await sleep(wait);
      if (aborted) break;
      pending.push(apply(f));
    }
    await Promise.all(pending);
    return injected.sort((a, b) => a.atMs - b.atMs);
  })();
  return {
    done,
    abort() {
      aborted = true;
      for (const m of fleet) if (m.frozen) m.proc.signal("SIGCONT");
    },
  };
}
