import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** The no-op HTTP target (noop-server.ts) in its own process, and what it counted. */
export interface NoopServer {
  url: string;
  pid: number | undefined;
  reset(): Promise<void>;
  stats(): Promise<{ keys: number; repeated: number; total: number }>;
  stop(): void;
}

export async function startNoop(): Promise<NoopServer> {
  const child = spawn(process.execPath, ["--import", "tsx", join(here, "noop-server.ts")], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve, reject) => {
    child.on("exit", (code) => reject(new Error(`the no-op server exited (${code})`)));
    child.stdout.on("data", (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m?.[1]) resolve(m[1]);
    });
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/noop`,
    pid: child.pid,
    reset: async () => void (await fetch(`${base}/reset`, { method: "POST" })).text(),
    stats: async () => (await fetch(`${base}/stats`)).json() as never,
    stop: () => child.kill(),
  };
}
