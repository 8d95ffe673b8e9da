import { readFileSync } from "node:fs";

const ticks = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat; 0 when it is gone. */
export function cpuSeconds(pid: number | undefined, withChildren = false): number {
  if (!pid) return 0;
  try {
    // Fields after "(comm) ": state is [0]; utime, stime, cutime, cstime are [11..14] (14..17 in proc(5)).
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    const own = Number(fields[11]) + Number(fields[12]);
    return (own + (withChildren ? Number(fields[13]) + Number(fields[14]) : 0)) / ticks;
  } catch {
    return 0;
  }
}

/** The machine's 1-minute load average. */
export function loadAverage(): number {
  return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
}
