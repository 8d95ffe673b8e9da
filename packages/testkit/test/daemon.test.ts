import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { startDaemon } from "../src/cluster/daemon";

const dir = mkdtempSync(join(tmpdir(), "hf-daemon-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("a daemon's log takes what its second stream writes after its first ended, and keeps the test process up", async () => {
  // stdout closes first, stderr writes after it (a killed server's streams end one after the other): piped with their
  // default end, the log ended with stdout and the late write was an unheard 'error' event that ended this process.
  const log = join(dir, "late-stderr.log");
  const errors: unknown[] = [];
  const onError = (e: unknown) => errors.push(e);
  process.on("uncaughtException", onError);
  try {
    const d = startDaemon("late", "sh", ["-c", "echo out; exec 1>&-; sleep 0.3; echo late on stderr >&2"], { log });
    await new Promise<void>((resolve) => d.child.once("close", () => resolve()));
    await new Promise((r) => setTimeout(r, 100));
    expect(errors).toEqual([]);
    expect(readFileSync(log, "utf8")).toBe("out\nlate on stderr\n");
  } finally {
    process.off("uncaughtException", onError);
  }
});
