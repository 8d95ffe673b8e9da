import { GraphCache } from "@holdfast/core/versions";
import { repairAll, runChecks } from "@holdfast/core/run";
import type { Db } from "@holdfast/db";
import { type CommandInput, UsageError } from "../command-line";

/** `doctor [--repair] [--json]`: the silent-failure checks; exit 1 when something was found and not repaired. */
export async function doctorCommand(db: Db, { sub, values }: CommandInput): Promise<void> {
  if (sub !== undefined) throw new UsageError("doctor [--repair] [--json]");
  const before = await runChecks(db, 5);
  const repaired = values.repair ? await repairAll(db, new GraphCache(), "doctor") : null;
  if (values.json) {
    console.log(JSON.stringify({ findings: before, repaired }, null, 2));
  } else {
    for (const f of before) {
      console.log(`${f.count === 0 ? "ok  " : "FIND"}  ${f.check.padEnd(22)} ${String(f.count).padStart(6)}${f.count ? `  repair: ${f.repair}` : ""}`);
      for (const e of f.examples) console.log(`        ${e.runId}  ${e.detail}`);
    }
    if (repaired) console.log(`repaired: ${Object.entries(repaired).map(([k, v]) => `${k} ${v}`).join(", ")}`);
    else if (before.some((f) => f.count > 0)) console.log("run with --repair to re-wake what can be re-woken safely");
  }
  process.exitCode = before.some((f) => f.count > 0) && !repaired ? 1 : 0;
}
