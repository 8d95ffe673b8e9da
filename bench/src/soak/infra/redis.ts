import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { run, sleep } from "./exec";

/**
 * The soak's own redis-server on a free port, without persistence: a restart (SHUTDOWN NOSAVE, then start) comes
 * back with no keys at all, as a Redis that lost its memory would.
 */
export interface OwnRedis {
  port: number;
  url: string;
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startOwnRedis(dir: string, port: number): Promise<OwnRedis> {
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction", "--dir", dir, "--logfile", join(dir, "redis.log")],
      { stdio: "ignore" },
    );
    for (let i = 0; i < 100; i++) {
      if ((await cli("PING").catch(() => "")).trim() === "PONG") return;
      await sleep(50);
    }
    throw new Error(`redis-server on port ${port} did not answer`);
  };
  const cli = (...args: string[]) => run("redis-cli", ["-p", String(port), ...args], { timeoutMs: 10_000 });
  const shutdown = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    await cli("SHUTDOWN", "NOSAVE").catch(() => c.kill("SIGKILL"));
    await Promise.race([exited, sleep(5_000).then(() => c.kill("SIGKILL"))]);
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async restart(downMs) {
      await shutdown();
      await sleep(downMs);
      await start();
    },
    stop: shutdown,
  };
}
