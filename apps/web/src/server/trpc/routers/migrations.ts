import { runMigrationsIsOf, runMigrationsList } from "@holdfast/core/store";
import { applyMigration, migrationInput, planMigration } from "@holdfast/core/run";
import { TRPCError } from "@trpc/server";
import { editorProcedure, router, viewerProcedure } from "../init";
import { graphs } from "../../graphs";
import { automationId, id, ownAutomation } from "./common";

/** Moving running runs from one published version to another: the dry run, applying it (again), the list. */
export const migrations = router({
  plan: editorProcedure.input(automationId.extend({ migration: migrationInput })).query(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    return planMigration(ctx.db, ctx.org.id, input.automationId, input.migration);
  }),
  run: editorProcedure.input(automationId.extend({ migration: migrationInput, migrationId: id("mig").optional() })).mutation(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    if (input.migrationId) {
      const own = await runMigrationsIsOf(ctx.db, {
        orgId: ctx.org.id,
        migrationId: input.migrationId,
        automationId: input.automationId,
        fromVersion: input.migration.fromVersion,
        toVersion: input.migration.toVersion,
      });
      if (!own) throw new TRPCError({ code: "NOT_FOUND", message: "migration not found" });
    }
    return applyMigration(ctx.db, graphs, ctx.org.id, input.automationId, input.migration, `user:${ctx.user.email}`, {
      ...(input.migrationId ? { migrationId: input.migrationId } : {}),
    });
  }),
  list: viewerProcedure.input(automationId).query(({ ctx, input }) => runMigrationsList(ctx.db, ctx.org.id, input.automationId)),
});
