import type { Member } from "./fleet";
import { fetchWithin } from "./http";

export interface Watch {
  /** Lines like "12.3 s web-2 up" in order. */
  events: string[];
  stop(): void;
}

/**
 * A timeline of the fleet for the report: every new process id (a restart) and every change of a web process's
 * answer to its liveness probe, in seconds after t0.
 */
export function watchFleet(fleet: Member[], webs: Map<string, string>, t0: number): Watch {
  const events: string[] = [];
  const pids = new Map(fleet.map((m) => [m.label, m.proc.pid()]));
  const up = new Map<string, boolean>();
  const at = () => ((Date.now() - t0) / 1000).toFixed(1);
  let probing = false;
  const timer = setInterval(() => {
    for (const m of fleet) {
      const pid = m.proc.pid();
      if (pid !== pids.get(m.label)) {
        pids.set(m.label, pid);
        events.push(`${at()} s ${m.label} restarted`);
      }
    }
    if (probing) return;
    probing = true;
    Promise.all(
      [...webs].map(async ([label, base]) => {
        const ok = await fetchWithin(`${base}/api/health?live=1`, {}, 2_000).then(
          (r) => r.status === 200,
          () => false,
        );
        if (up.get(label) !== ok) events.push(`${at()} s ${label} ${ok ? "answers" : "does not answer"}`);
        up.set(label, ok);
      }),
    ).finally(() => (probing = false));
  }, 500);
  return { events, stop: () => clearInterval(timer) };
}
