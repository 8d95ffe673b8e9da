import { join } from "node:path";
import { type AppName, spawnApp } from "@holdfast/testkit/procs";
import { fetchWithin } from "./http";
import { superviseWeb } from "./infra/web";
import type { Supervised } from "./infra/supervised";

/** The process kinds faults are aimed at; each kind is killed and frozen the same number of times. */
export const processKinds = ["web", "relay", "engine", "sweeper", "lane-worker", "mail-in"] as const;
export type ProcessKind = (typeof processKinds)[number];

export interface Member {
  kind: ProcessKind;
  label: string;
  proc: Supervised;
  /** True while SIGSTOPped by the soak (a frozen process is not picked for another fault). */
  frozen: boolean;
  /** Resolves once the process says it is ready (the web: once it answers). */
  ready(): Promise<void>;
}

export interface FleetConfig {
  /** The copy of the source the apps run from. */
  root: string;
  /** That copy's own build of the apps (infra/source.ts buildSnapshot); unset = its sources through tsx. */
  rootBuild?: string;
  env: Record<string, string>;
  /** Settings of one process over `env` (the cluster soak: which URLs each kind connects through). */
  envFor?: (kind: ProcessKind, label: string) => Record<string, string>;
  /** The built web app `next start` serves (`next`: that release's own next, default this checkout's). */
  web: { dir: string; ports: number[]; env: Record<string, string>; next?: string };
  mailInPort: number;
  inboundDomain: string;
  /** Lane worker processes per lane (at least six in all). */
  lanes: Record<"io" | "slow" | "human", number>;
  engines: number;
  sweepers: number;
  relays: number;
  /** The queue fault wrapper, preloaded into every relay (it is the queue's only producer of wake-ups); unset: none. */
  queueFaults?: { preload: string; env: Record<string, string> };
}

/** One process of the fleet before it starts: what the upgrade starts again from the new release under the same label. */
export interface MemberSpec {
  kind: ProcessKind;
  label: string;
  /** The background app (unset for a web process). */
  app?: AppName;
  /** A web process's port. */
  port?: number;
  env: Record<string, string>;
  nodeArgs: string[];
}

/** Every process of the deployment `c` describes, in start order. */
export function fleetSpecs(c: FleetConfig): MemberSpec[] {
  const specs: MemberSpec[] = [];
  const app = (kind: ProcessKind, name: AppName, label: string, env: Record<string, string> = {}, nodeArgs: string[] = []) =>
    specs.push({ kind, label, app: name, env: { ...c.env, ...c.envFor?.(kind, label), ...env }, nodeArgs });
  c.web.ports.forEach((port, i) => {
    const label = `web-${i + 1}`;
    specs.push({ kind: "web", label, port, env: { ...c.env, ...c.envFor?.("web", label), ...c.web.env }, nodeArgs: [] });
  });
  const faults = c.queueFaults;
  for (let i = 0; i < c.relays; i++) {
    const label = `relay-${i + 1}`;
    if (faults) app("relay", "relay", label, { ...faults.env, SOAK_PROCESS: label }, ["--import", faults.preload]);
    else app("relay", "relay", label);
  }
  for (let i = 0; i < c.engines; i++) app("engine", "engine", `engine-${i + 1}`);
  for (let i = 0; i < c.sweepers; i++) app("sweeper", "sweeper", `sweeper-${i + 1}`);
  for (const [lane, n] of Object.entries(c.lanes)) {
    for (let i = 0; i < n; i++) app("lane-worker", "lane-worker", `lane-${lane}-${i + 1}`, { LANE: lane, INBOUND_EMAIL_DOMAIN: c.inboundDomain });
  }
  app("mail-in", "mail-in", "mail-in", { INBOUND_SMTP_PORT: String(c.mailInPort), INBOUND_EMAIL_DOMAIN: c.inboundDomain });
  return specs;
}

/** Starts one process of `spec` from the release `c` describes (its source copy, its build, its web). */
export function startMember(c: Pick<FleetConfig, "root" | "rootBuild" | "web">, spec: MemberSpec): Member {
  const { kind, label } = spec;
  if (spec.app === undefined) {
    const port = spec.port as number;
    const proc = superviseWeb(label, c.web.dir, port, spec.env, c.web.next);
    return { kind, label, frozen: false, proc, ready: () => answers(`http://127.0.0.1:${port}/api/health?live=1`, 120_000) };
  }
  const proc = spawnApp(spec.app, { env: spec.env, restart: true, label, nodeArgs: spec.nodeArgs, root: c.root, ...(c.rootBuild ? { rootBuild: c.rootBuild } : {}) });
  return { kind, label, frozen: false, proc, ready: () => proc.waitForOutput(/ready/, 120_000) };
}

/**
 * Every process of a deployment, several of each, each supervised: a process that exits (killed by the soak, or
 * dying on its own during an outage) is started again, as a process manager would.
 */
export function startFleet(c: FleetConfig): Member[] {
  return fleetSpecs(c).map((spec) => startMember(c, spec));
}

export async function stopFleet(members: Member[]): Promise<void> {
  for (const m of members) m.proc.signal("SIGCONT");
  await Promise.all(members.map((m) => m.proc.stop(15_000)));
}

/** Exits the soak did not cause (its own kills are SIGKILL): processes that died by themselves, e.g. in an outage. */
export function ownExits(members: Member[]): { label: string; code: number | null; signal: string | null; before: string }[] {
  return members.flatMap((m) => {
    // The supervisor writes "[label exited code=... signal=...]" after each exit: keep what the process said last.
    const parts = m.proc.output().split(/\n\[[^\]\n]* exited code=/);
    return m.proc.exits
      // Without the stack frames: the error's own lines (message, code, cause) are what tell why.
      .map((e, k) => ({ e, before: (parts[k] ?? "").split("\n").filter((l) => !/^\s+at /.test(l)).slice(-14).join("\n") }))
      .filter(({ e }) => e.signal !== "SIGKILL")
      .map(({ e, before }) => ({ label: m.label, code: e.code, signal: e.signal, before: before.slice(-2_000) }));
  });
}

async function answers(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await fetchWithin(url, {}, 5_000).then((r) => r.status === 200, () => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

export const queueFaultPreload = join(import.meta.dirname, "faults", "queue-faults.mjs");
