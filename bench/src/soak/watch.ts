import type { Member } from "./fleet";
import { readFileSync } from "node:fs";
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
  // CPU share per process over each 10 s (of one core; the current incarnation only), to tell busy from blocked.
  const cpuBefore = new Map<string, { pid: number | undefined; cpu: number }>();
  let lastCpuAt = Date.now();
  let ownBefore = process.cpuUsage();
  const cpuTimer = setInterval(() => {
    const now = Date.now();
    const shares: string[] = [];
    for (const m of fleet) {
      const pid = m.proc.pid();
      const cpu = pidCpu(pid);
      const before = cpuBefore.get(m.label);
      if (before && before.pid === pid) shares.push(`${m.label} ${Math.round(((cpu - before.cpu) * 100_000) / (now - lastCpuAt))}`);
      cpuBefore.set(m.label, { pid, cpu });
    }
    const own = process.cpuUsage(ownBefore);
    ownBefore = process.cpuUsage();
    shares.push(`soak (sender, people, providers) ${Math.round((own.user + own.system) / 10 / (now - lastCpuAt))}`);
    lastCpuAt = now;
    if (shares.length) events.push(`${at()} s cpu %: ${shares.join(", ")}`);
  }, 10_000);
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
  return {
    events,
    stop: () => {
      clearInterval(timer);
      clearInterval(cpuTimer);
    },
  };
}

/** CPU seconds a process has used (user + system), from /proc; 0 when it is gone. */
function pidCpu(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}
