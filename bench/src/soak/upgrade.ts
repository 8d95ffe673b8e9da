import { spawn } from "node:child_process";
import { startTcpProxy, type TcpProxy } from "@holdfast/testkit";
import pg from "pg";
import type { Invariant } from "./checks";
import { type FleetConfig, type Member, type MemberSpec, type ProcessKind, startMember } from "./fleet";
import { sleep } from "./infra/exec";
import type { Delivery } from "./load";
import { freePort } from "./testkit";

/** The order an operator replaces the process kinds in: background kinds first, the web (behind its front) last. */
export const replaceOrder: ProcessKind[] = ["sweeper", "relay", "engine", "lane-worker", "mail-in", "web"];

export interface Replacement {
  label: string;
  kind: ProcessKind;
  /** Seconds after the first delivery: asked to stop (web: new one started), the old one gone, the new one ready. */
  startedAt: number;
  oldStoppedAt: number;
  newReadyAt: number;
  /** How the old process ended when asked (SIGTERM: a graceful stop exits 0). */
  oldExit: { code: number | null; signal: string | null };
}

export interface UpgradeFigures {
  from: string;
  to: string;
  /** Seconds each step of building the old release took. */
  build: Record<string, number>;
  /** The new release's `holdfast migrate` under traffic: when, how long, what it applied. */
  migrate: { at: number; seconds: number; applied: string[]; output: string };
  /**
   * The old processes on the new schema: runs ended while they ran alone (between the migration and the first
   * replacement, `seconds`), deliveries the old webs acknowledged between the migration and the first front switch.
   */
  oldOnNewSchema: { seconds: number; deliveriesAcked: number; runsEnded: number };
  replacements: Replacement[];
  /** From the migration's start to the last replacement (seconds after the first delivery). */
  window: { from: number; to: number };
  /** The sender's answers during that window, by status (0: no answer within 15 s, -1: no connection). */
  answers: Record<string, number>;
  answered503: number;
  refusedConnections: number;
  /** Exits of old-release processes nobody asked for (each restarted by its supervisor), before their replacement. */
  oldOwnExits: { label: string; code: number | null; signal: string | null }[];
}

/** The web's front: one TCP proxy per web process, the address the senders and the people use. */
export async function startFronts(ports: number[]): Promise<TcpProxy[]> {
  return Promise.all(ports.map((port) => startTcpProxy({ host: "127.0.0.1", port })));
}

/** `holdfast migrate` of the new release (its built CLI), without blocking this process (the senders and providers run here). */
function migrateWith(cli: string, root: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, "migrate"], { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("exit", (code) => resolve({ code, output }));
  });
}

/**
 * The upgrade under traffic: the new release's migrations while the old processes run, `holdMs` of the old
 * processes alone on the new schema, then each process replaced in `replaceOrder`, one at a time: a background
 * process is stopped (SIGTERM, its graceful stop) and the new release's started under the same label; a web process
 * gets its successor on a new port first, the front is switched to it, and only then is the old one stopped.
 * `fleet` is updated in place (the watch and the final stop see the new processes); `retired` gets the old ones.
 */
export async function upgradeUnderTraffic(o: {
  fleet: Member[];
  specs: MemberSpec[];
  retired: Member[];
  fronts: TcpProxy[];
  next: Pick<FleetConfig, "root" | "rootBuild" | "web">;
  /** The new release's CLI (built: infra/source.ts buildSnapshotCli). */
  nextCli: string;
  adminUrl: string;
  workerUrl: string;
  deliveries: Delivery[];
  t0: number;
  holdMs: number;
  log: (line: string) => void;
  events: string[];
}): Promise<Omit<UpgradeFigures, "from" | "to" | "build" | "answers" | "answered503" | "refusedConnections" | "oldOwnExits">> {
  const at = () => (Date.now() - o.t0) / 1000;
  const note = (line: string) => {
    o.events.push(`${at().toFixed(1)} s ${line}`);
    o.log(`soak: ${at().toFixed(1)} s ${line}`);
  };
  const from = at();
  note("upgrade: the new release's holdfast migrate, the old processes running");
  const migrated = await migrateWith(o.nextCli, o.next.root, { DATABASE_URL: o.workerUrl, MIGRATE_DATABASE_URL: o.adminUrl });
  if (migrated.code !== 0) throw new Error(`the new release's holdfast migrate failed under traffic (exit ${migrated.code}):\n${migrated.output}`);
  const applied = [...migrated.output.matchAll(/^ {2}\+ (\S+)$/gm)].map((m) => m[1] as string);
  const migrate = { at: from, seconds: at() - from, applied, output: migrated.output.trim().slice(-2_000) };
  note(`upgrade: migrated in ${migrate.seconds.toFixed(1)} s`);

  const migratedMs = Date.now() - o.t0;
  const ackedSince = (untilMs: number) => o.deliveries.filter((d) => d.ackedAt !== null && d.ackedAt >= migratedMs && d.ackedAt <= untilMs).length;
  const ended = () => runsEnded(o.adminUrl);
  const [endedBefore, holdFrom] = [await ended(), at()];
  await sleep(o.holdMs);
  const oldOnNewSchema = { seconds: at() - holdFrom, deliveriesAcked: 0, runsEnded: (await ended()) - endedBefore };
  note(`upgrade: the old processes alone on the new schema for ${oldOnNewSchema.seconds.toFixed(1)} s: ${oldOnNewSchema.runsEnded} runs ended`);

  const replacements: Replacement[] = [];
  for (const kind of replaceOrder) {
    for (const spec of o.specs.filter((s) => s.kind === kind)) {
      const i = o.fleet.findIndex((m) => m.label === spec.label);
      const old = o.fleet[i] as Member;
      const startedAt = at();
      let member: Member;
      let oldExit: Replacement["oldExit"];
      let oldStoppedAt: number;
      if (kind === "web") {
        const port = await freePort();
        member = startMember(o.next, { ...spec, port });
        await member.ready();
        if (spec.label === "web-1") oldOnNewSchema.deliveriesAcked = ackedSince(Date.now() - o.t0);
        const front = o.fronts[Number(spec.label.replace("web-", "")) - 1] as TcpProxy;
        // As an HTTP load balancer drains a server: kept-alive connections to the old web close after their answer.
        front.switchTo({ host: "127.0.0.1", port }, { drainOld: true });
        note(`upgrade: ${spec.label}'s front switched to the new release's web on :${port}`);
        oldExit = await old.proc.stop(30_000);
        oldStoppedAt = at();
      } else {
        oldExit = await old.proc.stop(30_000);
        oldStoppedAt = at();
        member = startMember(o.next, spec);
        await member.ready();
      }
      o.fleet[i] = member;
      o.retired.push(old);
      const r = { label: spec.label, kind, startedAt, oldStoppedAt, newReadyAt: at(), oldExit };
      replacements.push(r);
      note(`upgrade: ${spec.label} replaced (old one stopped with ${oldExit.signal ?? `code ${oldExit.code}`} after ${(oldStoppedAt - startedAt).toFixed(1)} s; new one ready at ${r.newReadyAt.toFixed(1)} s)`);
    }
  }
  return { migrate, oldOnNewSchema, replacements, window: { from, to: at() } };
}

async function runsEnded(adminUrl: string): Promise<number> {
  const c = new pg.Client({ connectionString: adminUrl });
  c.on("error", () => {});
  await c.connect();
  try {
    return (await c.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE status <> 'running'")).rows[0]?.n ?? 0;
  } finally {
    await c.end();
  }
}

/** The sender's answers in the upgrade's window, and the exits of old processes that nobody asked for. */
export function switchFigures(deliveries: Delivery[], window: { from: number; to: number }, retired: Member[]) {
  const answers: Record<string, number> = {};
  for (const d of deliveries) {
    d.statuses.forEach((status, k) => {
      const s = (d.answeredAt[k] ?? 0) / 1000;
      if (s >= window.from && s <= window.to + 5) answers[status] = (answers[status] ?? 0) + 1;
    });
  }
  // The last exit of each is the stop the upgrade asked for; any before it was the process's own.
  const oldOwnExits = retired.flatMap((m) => m.proc.exits.slice(0, -1).map((e) => ({ label: m.label, code: e.code, signal: e.signal })));
  return { answers, answered503: answers["503"] ?? 0, refusedConnections: answers["-1"] ?? 0, oldOwnExits };
}

/** A graceful stop on SIGTERM: exit 0, 143 (128 + SIGTERM, what `next start` exits with) or the signal itself. */
export const stoppedCleanly = (e: Replacement["oldExit"]) => e.code === 0 || e.code === 143 || e.signal === "SIGTERM";

/** The upgrade's own invariants: every process replaced, the old ones unbroken by the new schema and stopped cleanly. */
export function upgradeInvariants(u: UpgradeFigures, fleetSize: number): Invariant[] {
  const unclean = u.replacements.filter((r) => !stoppedCleanly(r.oldExit));
  return [
    {
      name: "every process of the old release was replaced by the new release's, one at a time",
      figure: `${u.replacements.length} of ${fleetSize} replaced between ${u.window.from.toFixed(1)} s and ${u.window.to.toFixed(1)} s`,
      violations: u.replacements.length === fleetSize ? [] : [`only ${u.replacements.length} of ${fleetSize} processes were replaced`],
    },
    {
      name: "the old release kept working on the new release's schema",
      figure: `after the migration, ${u.oldOnNewSchema.deliveriesAcked} deliveries acknowledged by the old webs, ${u.oldOnNewSchema.runsEnded} runs ended in the ${u.oldOnNewSchema.seconds.toFixed(1)} s the old processes ran alone; ${u.oldOwnExits.length} exits of their own`,
      violations: [
        ...(u.oldOnNewSchema.deliveriesAcked > 0 ? [] : ["no delivery was acknowledged by the old web between the migration and its replacement"]),
        ...(u.oldOnNewSchema.runsEnded > 0 ? [] : ["no run ended between the migration and the first replacement"]),
        ...u.oldOwnExits.map((e) => `${e.label} (old release) exited by itself (${e.signal ?? `code ${e.code}`}) before its replacement`),
      ],
    },
    {
      name: "each old process stopped cleanly when asked (SIGTERM)",
      figure: `${u.replacements.length - unclean.length} of ${u.replacements.length} clean`,
      violations: unclean.map((r) => `${r.label} ended with ${r.oldExit.signal ?? `code ${r.oldExit.code}`} (killed after the 30 s grace, or it failed)`),
    },
  ];
}
