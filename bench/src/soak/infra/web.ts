import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot, webNodeFlags } from "@holdfast/testkit/procs";
import { run, sleep } from "./exec";
import type { Supervised } from "./supervised";

const webDir = join(repoRoot, "apps/web");

/**
 * A private copy of the built web app. `next start` serves it for the whole soak while other engineers rebuild
 * apps/web; the copy is taken under the house's web lock (/tmp/holdfast-web.lock), which is held only while copying.
 * It sits in node_modules/ at apps/web's depth, so the build's relative links into node_modules/.pnpm resolve.
 */
export async function snapshotWeb(name: string): Promise<{ dir: string; remove(): void }> {
  const dir = join(repoRoot, "node_modules", name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const lock = process.env.SOAK_WEB_LOCK ?? "/tmp/holdfast-web.lock";
  // A test run's own build (testkit's ensureWebBuilt) holds this directory while it builds.
  for (let i = 0; i < 900 && existsSync(join(webDir, ".next-build.lock")); i++) await sleep(1_000);
  // Checked under the lock: a build in progress has removed .next until it finishes.
  // The web's server bundle (dist/server.mjs) with it, as production runs the web; a build made before it had none.
  const copy =
    `test -f ${JSON.stringify(join(webDir, ".next/BUILD_ID"))} || exit 3; cp -a ${JSON.stringify(join(webDir, ".next"))} ${JSON.stringify(join(dir, ".next"))} && rm -rf ${JSON.stringify(join(dir, ".next/cache"))}` +
    ` && { test ! -f ${JSON.stringify(join(webDir, "dist/server.mjs"))} || cp -a ${JSON.stringify(join(webDir, "dist"))} ${JSON.stringify(join(dir, "dist"))}; }`;
  // Run under `flock /tmp/holdfast-web.lock ...` already (as the house asks of web tests): taking it again would wait forever.
  const command: [string, string[]] = heldByAncestor(lock) ? ["sh", ["-c", copy]] : ["flock", [lock, "sh", "-c", copy]];
  await run(...command, { timeoutMs: 15 * 60_000 }).catch((error: Error) => {
    throw /exited 3/.test(error.message) ? new Error("the web app is not built: run `cd apps/web && flock /tmp/holdfast-web.lock pnpm build` first") : error;
  });
  cpSync(join(webDir, "next.config.ts"), join(dir, "next.config.ts"));
  // What next.config.ts imports (Next compiles the config when it starts).
  const headers = join(webDir, "src/server/security-headers.ts");
  if (existsSync(headers)) {
    mkdirSync(join(dir, "src/server"), { recursive: true });
    cpSync(headers, join(dir, "src/server/security-headers.ts"));
  }
  symlinkSync(join(webDir, "node_modules"), join(dir, "node_modules"));
  writeFileSync(join(dir, "SOAK-COPY.txt"), "A copy of apps/web/.next served by `pnpm soak`; removed when it ends.\n");
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The web on a fixed port as that build runs in production (its dist/server.mjs, or `next start` for a release from
 * before the web had a server of its own), restarted after every exit it was not asked for (as a process manager
 * would); `next`: the release's own next binary (default this checkout's).
 */
export function superviseWeb(label: string, dir: string, port: number, env: Record<string, string>, next = join(webDir, "node_modules/next/dist/bin/next")): Supervised {
  let child: ChildProcess | undefined;
  let stopping = false;
  let kills = 0;
  let out = "";
  const exits: Supervised["exits"] = [];
  const start = () => {
    const own = join(dir, "dist/server.mjs");
    // Its own server with the web's Node flags (this checkout's start script), or `next start` for an older release.
    const args = existsSync(own) ? [...webNodeFlags(), own, dir] : [next, "start", dir];
    const proc = spawn(process.execPath, [...args, "-p", String(port), "-H", "127.0.0.1"], {
      cwd: dir,
      env: { ...process.env, ...env, PORT: String(port), NEXT_TELEMETRY_DISABLED: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = proc;
    const keep = (d: Buffer) => {
      out = (out + d.toString()).slice(-200_000);
    };
    proc.stdout?.on("data", keep);
    proc.stderr?.on("data", keep);
    proc.on("exit", (code, signal) => {
      exits.push({ code, signal });
      if (signal === "SIGKILL") kills++;
      out += `\n[${label} exited code=${code} signal=${signal}]\n`;
      if (!stopping) setTimeout(start, 200);
    });
  };
  start();
  return {
    name: label,
    exits,
    kills: () => kills,
    output: () => out,
    pid: () => child?.pid,
    signal: (sig) => child?.kill(sig),
    stop(timeoutMs = 10_000) {
      stopping = true;
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return Promise.resolve(exits.at(-1) ?? { code: 0, signal: null });
      return new Promise((resolve) => {
        const t = setTimeout(() => c.kill("SIGKILL"), timeoutMs);
        c.once("exit", (code, signal) => {
          clearTimeout(t);
          resolve({ code, signal });
        });
        c.kill("SIGCONT");
        c.kill("SIGTERM");
      });
    },
  };
}

/** Whether a process this one descends from holds a flock on `path` (read from /proc/locks). */
function heldByAncestor(path: string): boolean {
  try {
    const inode = statSync(path).ino;
    const holders = readFileSync("/proc/locks", "utf8")
      .split("\n")
      .filter((l) => / FLOCK /.test(l) && l.split(/\s+/)[5]?.endsWith(`:${inode}`))
      .map((l) => Number(l.split(/\s+/)[4]));
    for (let pid = process.pid; pid > 1; ) {
      if (holders.includes(pid)) return true;
      pid = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
    }
  } catch {
    // no lock file, or no /proc: nobody holds it
  }
  return false;
}
