import { automationsExists } from "@holdfast/core/store";
import type { Db } from "@holdfast/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";

/** Inputs and checks several routers share. Every procedure is scoped by `ctx.org.id` (init.ts). */

/** A database id with its prefix (`aut_`, `usr_`, `mig_` ...): 32 hex digits. */
export const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{32}$`), `not a ${prefix}_ id`);
export const automationId = z.object({ automationId: id("aut") });
export const email = z.string().trim().toLowerCase().email().max(320);

/** An automation of another organisation is "not found", like one that does not exist. */
export async function ownAutomation(db: Db, orgId: string, automationId: string): Promise<void> {
  if (!(await automationsExists(db, orgId, automationId))) throw new TRPCError({ code: "NOT_FOUND", message: "automation not found" });
}
