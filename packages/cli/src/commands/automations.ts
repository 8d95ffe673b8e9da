import type { Db } from "@holdfast/db";
import { automationsCommand } from "../automations";
import { asUsage, type CommandInput } from "../command-line";

/** `automations publish|export|pause|resume|archive|restore|stop-runs ...`; the exit code is the command's. */
export async function automationsCommandLine(db: Db, { sub, rest, values }: CommandInput): Promise<void> {
  process.exitCode = await asUsage(() => automationsCommand(db, sub, rest, values));
}
