import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection } from "@holdfast/core/providers";
import { budgetsSetAllowed } from "@holdfast/core/store";
import { parseGraph, triggerSettings } from "@holdfast/core/versions";
import {
  type ComposeService,
  composeServices,
  dockerfileImage,
  dockerfileInstructions,
  ensureAppsBuilt,
  ensureWebBuilt,
  freePort,
  type HttpTarget,
  type ModelTarget,
  publish,
  readmeSteps,
  repoRoot,
  shellSteps,
  startHttpTarget,
  startModelTarget,
  startTestDeployment,
  type TestDeployment,
  testRedisUrl,
  waitFor,
} from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Deploying with Docker, where there is no Docker (issue 46 item 3): docker-compose.yml's product services are each
 * started with their command exactly as the file gives it (the argv, no shell added), in the repository's root (the
 * image's WORKDIR, where the image has the same files after the README's install steps), with the image's ENV and the
 * service's environment, against this machine's PostgreSQL and Redis. The migrate service exits 0, every long-running
 * service stays up, the web answers ready, and a URL-token webhook delivery starts a run that calls an HTTP target on
 * the io lane, drafts with a model on the slow lane and waits on a timer, and completes; the sweeper holds its
 * leadership. And the Dockerfile's build steps are the README's install steps.
 */

const read = (path: string) => readFileSync(join(repoRoot, path), "utf8");
const image = dockerfileImage(read("Dockerfile"));

let d: TestDeployment;
let target: HttpTarget;
let model: ModelTarget;
let home = "";
const running = new Map<string, ServiceProcess>();

/**
 * The operator's .env: the deployment's key (this test run's), and the roles' passwords left empty: this machine's
 * PostgreSQL trusts local connections, and its holdfast_web and holdfast_worker roles are shared by every test
 * database, so the test does not give them passwords. The egress guard lets the test's stand-ins on loopback through.
 */
const operatorEnv = {
  HOLDFAST_SECRET_KEY: process.env.HOLDFAST_SECRET_KEY,
  POSTGRES_PASSWORD: "",
  HOLDFAST_WORKER_PASSWORD: "",
  HOLDFAST_WEB_PASSWORD: "",
  HOLDFAST_EGRESS_ALLOW: "127.0.0.1",
  METRICS_TOKEN: randomBytes(16).toString("hex"),
};

/**
 * The only changes from the file, each because the services are not in containers on a network of their own: the
 * service hostnames `postgres` and `redis` become this machine's (127.0.0.1, testkit's Redis), the database is this
 * test file's own and the queue prefix its own, and the ports the services listen on (the web's 3000, mail-in's 2525)
 * become free ports on loopback (the web's public URL follows its port).
 */
function outsideContainers(env: Record<string, string>, o: { database: string; prefix: string; webPort: number; smtpPort: number }) {
  const mapped: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    let v = value;
    if (/^postgres(ql)?:\/\//.test(value)) {
      const url = new URL(value);
      if (url.hostname === "postgres") {
        url.hostname = "127.0.0.1";
        url.pathname = `/${o.database}`;
      }
      v = url.toString();
    } else if (/^redis:\/\/redis[:/]/.test(value)) v = testRedisUrl;
    if (key === "QUEUE_PREFIX") v = o.prefix;
    if (key === "PORT") v = String(o.webPort);
    if (key === "HOLDFAST_PUBLIC_URL") v = `http://127.0.0.1:${o.webPort}`;
    if (key === "INBOUND_SMTP_PORT") v = String(o.smtpPort);
    if (key === "INBOUND_SMTP_HOST") v = "127.0.0.1";
    mapped[key] = v;
  }
  return mapped;
}

interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** Starts one service's command as the container would: the argv as given, in WORKDIR, with the image's and the service's environment only. */
function startService(service: ComposeService, env: Record<string, string>): ServiceProcess {
  const [cmd, ...args] = service.command;
  if (!cmd) throw new Error(`service ${service.name} has no command`);
  // A container's environment: the image's ENV, then the service's; PATH finds node and pnpm here as in the image, and HOME is empty like the node user's.
  const child = spawn(cmd, args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: home, ...image.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout?.on("data", (chunk) => (out += chunk));
  child.stderr?.on("data", (chunk) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** SIGTERM to the service's process group (pnpm and the server it started), SIGKILL after 10 s. */
async function stopService(p: ServiceProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null || !p.child.pid) return;
  const pid = p.child.pid;
  process.kill(-pid, "SIGTERM");
  const timer = setTimeout(() => process.kill(-pid, "SIGKILL"), 10_000);
  await p.exited;
  clearTimeout(timer);
}

let services: ComposeService[] = [];
let mapping: { database: string; prefix: string; webPort: number; smtpPort: number };

const productServices = () => services.filter((s) => s.image === "holdfast:latest");

describe("docker-compose.yml's services, each command run as given outside containers", () => {
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "holdfast-compose-home-"));
    d = await startTestDeployment();
    target = d.closeAtStop(await startHttpTarget());
    model = d.closeAtStop(await startModelTarget("sk-test"));
    // What the image's `pnpm build` made: each background app's dist/main.mjs, and the web's build (`next build`, dist/server.mjs).
    await Promise.all([ensureAppsBuilt(), ensureWebBuilt()]);
    services = composeServices(read("docker-compose.yml"), operatorEnv);
    mapping = { database: d.t.name, prefix: d.prefix, webPort: await freePort(), smtpPort: await freePort() };
  }, 300_000);

  afterAll(async () => {
    await Promise.all([...running.values()].map(stopService));
    await d?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("every product service is the one image with a command, waits for the migrate service, and the web gets only its own role", () => {
    const names = productServices().map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(["migrate", "web", "relay", "engine", "sweeper", "lane-io", "lane-slow", "lane-human", "mail-in"]));
    for (const s of productServices()) {
      expect(s.command.length, `${s.name}'s command`).toBeGreaterThan(0);
      expect(s.build, `${s.name} builds the image from the Dockerfile`).toBe(true);
      if (s.name === "migrate") continue;
      expect(s.dependsOn.migrate, `${s.name} waits for migrate`).toBe("service_completed_successfully");
      expect(s.restart, `${s.name}'s restart policy`).toBe("unless-stopped");
    }
    const web = services.find((s) => s.name === "web") as ComposeService;
    expect(Object.keys(web.environment)).not.toContain("DATABASE_URL");
    expect(Object.keys(web.environment)).not.toContain("MIGRATE_DATABASE_URL");
    expect(new URL(web.environment.WEB_DATABASE_URL as string).username).toBe("holdfast_web");
  });

  it("the migrate service exits 0; every other service stays up; the web is ready; a webhook delivery's run completes through every lane", async () => {
    const envOf = (s: ComposeService) => outsideContainers(s.environment, mapping);
    const began = performance.now();
    const phases: string[] = [];
    const phase = (what: string) => phases.push(`${what} ${Math.round((performance.now() - began) / 100) / 10} s`);
    const migrate = services.find((s) => s.name === "migrate") as ComposeService;
    const once = startService(migrate, envOf(migrate));
    running.set("migrate", once);
    expect(await once.exited, `migrate's output:\n${once.output()}`).toBe(0);
    expect(once.output()).toContain("the secret key is this database's");
    phase("migrate exited 0");

    for (const s of productServices().filter((s) => s.name !== "migrate")) running.set(s.name, startService(s, envOf(s)));
    const base = `http://127.0.0.1:${mapping.webPort}`;
    const outputs = () => [...running.entries()].map(([name, p]) => `--- ${name}\n${p.output()}`).join("\n");
    await waitFor(
      async () => {
        for (const [name, p] of running) if (name !== "migrate" && p.child.exitCode !== null) throw new Error(`${name} exited with ${p.child.exitCode}`);
        const health = await fetch(`${base}/api/health`).catch(() => null);
        return health?.status === 200 && (await health.json()).status === "ready";
      },
      90_000,
      `every service up and the web ready\n${outputs()}`,
    ).catch((error) => {
      throw new Error(`${(error as Error).message}\n${outputs()}`);
    });
    for (const name of ["relay", "engine", "sweeper", "lane-io", "lane-slow", "lane-human", "mail-in"]) {
      await waitFor(async () => /ready/.test(running.get(name)?.output() ?? ""), 60_000, `${name} ready\n${outputs()}`);
    }
    phase("every service ready");

    // An automation on every lane with work: an HTTP call (io), a model draft (slow), a timer wait (engine and sweeper).
    const graph = parseGraph({
      nodes: [
        { id: "start", kind: "trigger", config: { eventIdField: "id" } },
        { id: "call", kind: "http_request", config: { url: target.url, method: "POST", body: { from: "compose" } } },
        { id: "draft", kind: "model_draft", config: { connection: "llm", prompt: "Hello {{input.id}}", maxTokens: 20 } },
        { id: "pause", kind: "wait", config: { rule: { kind: "duration", seconds: 1 } } },
        { id: "finish", kind: "end" },
      ],
      edges: [
        { from: "start", to: "call" },
        { from: "call", to: "draft" },
        { from: "draft", to: "pause" },
        { from: "pause", to: "finish" },
      ],
    });
    const seeded = await publish(d.t.db, graph, { org: "acme", automation: "compose", triggerAuth: "url_token" });
    await createConnection(d.t.db, {
      orgId: seeded.orgId,
      kind: "model",
      name: "llm",
      config: { baseUrl: model.baseUrl, model: "m", inputMicrosPerMTok: 1, outputMicrosPerMTok: 1 },
      secret: "sk-test",
    });
    await budgetsSetAllowed(d.t.db, seeded.orgId, 1_000_000_000, "test");
    const { urlToken } = await triggerSettings(d.t.db, seeded.orgId, seeded.automationId, "url_token");
    const delivery = await fetch(`${base}/api/hooks/acme/compose/${urlToken}`, {
      method: "POST",
      headers: { "content-type": "application/json", "webhook-id": "evt_compose" },
      body: JSON.stringify({ id: "evt_compose" }),
    });
    expect(delivery.status).toBe(202);
    const { runId } = (await delivery.json()) as { runId: string };
    await waitFor(async () => (await d.q("SELECT status FROM runs WHERE id = $1", [runId]))[0]?.status === "completed", 60_000, `the run to complete\n${outputs()}`);
    phase("the run completed");
    // Printed, never asserted: the machine's load decides absolute times.
    console.log(`compose services: ${phases.join(", ")}`);
    expect(target.calls.get(`${runId}/call/1`)).toBe(1);
    expect(model.calls).toBe(1);
    expect(await d.q("SELECT name FROM leader_leases WHERE lease_until > now()")).not.toHaveLength(0);

    for (const [name, p] of running) if (name !== "migrate") expect(p.child.exitCode, `${name} stays up`).toBeNull();
  });

  it("a command that names a file the image does not have fails here (the runner is not forgiving)", async () => {
    const engine = services.find((s) => s.name === "engine") as ComposeService;
    const wrong = { ...engine, command: engine.command.map((a) => a.replace("apps/engine/dist/main.mjs", "apps/engine/dist/missing.mjs")) };
    expect(wrong.command).not.toEqual(engine.command);
    const p = startService(wrong, outsideContainers(wrong.environment, mapping));
    expect(await p.exited).not.toBe(0);
  });
});

describe("the Dockerfile", () => {
  it("builds with the README's install steps, then the build step of `pnpm start`, as a user that is not root", () => {
    const readme = readmeSteps(read("README.md"), "**Install everything and start the product**");
    expect(readme.at(-1)).toBe("pnpm start");
    const startSteps = shellSteps(JSON.parse(read("package.json")).scripts.start);
    expect(startSteps).toContain("pnpm build");
    // Giving the web's cache to the node user is not a build step; every other RUN is one of the README's.
    const cacheForNode = ["mkdir -p apps/web/.next/cache", "chown -R node:node apps/web/.next/cache"];
    const built = image.runSteps.filter((step) => !cacheForNode.includes(step));
    expect(built).toEqual([...readme.slice(0, -1), "pnpm build"]);

    const instructions = dockerfileInstructions(read("Dockerfile"));
    expect(instructions[0]).toEqual({ keyword: "FROM", args: "node:24-bookworm-slim" });
    // Built as root, run as node: the processes cannot rewrite the code they run.
    const users = instructions.filter((i) => i.keyword === "USER");
    const build = instructions.findIndex((i) => i.keyword === "RUN" && i.args === "pnpm build");
    const user = instructions.findIndex((i) => i.keyword === "USER");
    expect(users.map((u) => u.args)).toEqual(["node"]);
    expect(user).toBeGreaterThan(build);
    expect(instructions.some((i) => i.keyword === "COPY" && i.args.includes("--chown"))).toBe(false);
    expect(image.env.NODE_ENV).toBe("production");
  });
});
