import {
  AutomationExistsError,
  addMember,
  applyMigration,
  automationVersionsListPublished,
  automationVersionsPublishedPair,
  automationsExists,
  automationsListWithLatest,
  contactsSearch,
  contactsUpsertConsent,
  createAutomation,
  diffGraphs,
  getDraft,
  graphSchema,
  isValidZone,
  membershipsCountOwners,
  membershipsEmailOf,
  membershipsList,
  membershipsLockOrg,
  membershipsSetRole,
  membershipsSetSlackUser,
  migrationInput,
  planMigration,
  publishDraft,
  removeMember,
  runMigrationsIsOf,
  runMigrationsList,
  saveDraft,
  setContactZone,
  suppressionsDelete,
  suppressionsInsert,
  suppressionsList,
} from "@holdfast/core";
import { inTx } from "@holdfast/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { graphs } from "../graphs";
import { budgets } from "./budgets";
import { connections } from "./connections";
import { contactView } from "./contact-view";
import { editorProcedure, ownerProcedure, router, viewerProcedure } from "./init";
import { kinds } from "./kinds";
import { lifecycle } from "./lifecycle";
import { connectionLimitsRouter } from "./limits";
import { triggers } from "./triggers";

/** Every procedure is scoped by `ctx.org.id` (init.ts resolves it from the session's membership of `orgSlug`). */
const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{32}$`), `not a ${prefix}_ id`);
const automationId = z.object({ automationId: id("aut") });
const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and -");
const email = z.string().trim().toLowerCase().email().max(320);
const role = z.enum(["owner", "editor", "approver", "viewer"]);

async function ownAutomation(db: import("@holdfast/db").Db, orgId: string, automationId: string): Promise<void> {
  if (!(await automationsExists(db, orgId, automationId))) throw new TRPCError({ code: "NOT_FOUND", message: "automation not found" });
}

const automations = router({
  list: viewerProcedure.query(({ ctx }) => automationsListWithLatest(ctx.db, ctx.org.id)),
  // The automation's trigger credentials (signing secret and URL token) are created with it: no trigger is ever open.
  create: editorProcedure.input(z.object({ name: z.string().trim().min(1).max(200), slug })).mutation(async ({ ctx, input }) => {
    try {
      return await ctx.db.$transaction((tx) => createAutomation(tx, { orgId: ctx.org.id, slug: input.slug, name: input.name }));
    } catch (error) {
      if (error instanceof AutomationExistsError) throw new TRPCError({ code: "CONFLICT", message: error.message });
      throw error;
    }
  }),
});

const drafts = router({
  get: viewerProcedure.input(automationId).query(({ ctx, input }) => getDraft(ctx.db, ctx.org.id, input.automationId)),
  save: editorProcedure
    .input(automationId.extend({ graph: z.unknown(), baseRevision: z.number().int().min(1) }))
    .mutation(({ ctx, input }) => saveDraft(ctx.db, ctx.org.id, input.automationId, input.graph, input.baseRevision, `user:${ctx.user.email}`)),
});

const versions = router({
  list: viewerProcedure.input(automationId).query(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    return automationVersionsListPublished(ctx.db, ctx.org.id, input.automationId);
  }),
  diff: viewerProcedure
    .input(automationId.extend({ from: z.number().int().min(1), to: z.number().int().min(1) }))
    .query(async ({ ctx, input }) => {
      const rows = await automationVersionsPublishedPair(ctx.db, ctx.org.id, input.automationId, input.from, input.to);
      const from = rows.find((r) => r.version === input.from);
      const to = rows.find((r) => r.version === input.to);
      if (!from || !to) throw new TRPCError({ code: "NOT_FOUND", message: "version not found" });
      return diffGraphs(graphSchema.parse(from.graph), graphSchema.parse(to.graph));
    }),
  publish: editorProcedure.input(automationId).mutation(({ ctx, input }) => publishDraft(ctx.db, ctx.org.id, input.automationId, `user:${ctx.user.email}`)),
});

const migrations = router({
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

const contacts = router({
  list: viewerProcedure.input(z.object({ query: z.string().max(320).default("") })).query(({ ctx, input }) => contactsSearch(ctx.db, ctx.org.id, input.query)),
  upsert: editorProcedure
    .input(z.object({ email, timeZone: z.string().refine(isValidZone, "not an IANA time zone").nullable(), consent: z.enum(["granted", "unknown", "withdrawn"]) }))
    .mutation(async ({ ctx, input }) => {
      const id = await contactsUpsertConsent(ctx.db, { orgId: ctx.org.id, email: input.email, timeZone: input.timeZone, consent: input.consent });
      // A changed zone moves the contact's pending waits (with their old and new instants on each run's timeline).
      if (id && input.timeZone !== null) await setContactZone(ctx.db, ctx.org.id, id, input.timeZone, `user:${ctx.user.email}`);
      return { id };
    }),
});

const suppressions = router({
  list: viewerProcedure.query(({ ctx }) => suppressionsList(ctx.db, ctx.org.id)),
  add: editorProcedure.input(z.object({ email, reason: z.string().trim().min(1).max(200) })).mutation(async ({ ctx, input }) => {
    await suppressionsInsert(ctx.db, ctx.org.id, input.email, input.reason);
    return { ok: true };
  }),
  remove: ownerProcedure.input(z.object({ email })).mutation(async ({ ctx, input }) => ({
    removed: (await suppressionsDelete(ctx.db, ctx.org.id, input.email)) > 0,
  })),
});

const members = router({
  list: viewerProcedure.query(({ ctx }) => membershipsList(ctx.db, ctx.org.id)),
  add: ownerProcedure
    .input(z.object({ email, name: z.string().trim().min(1).max(200), role, password: z.string().min(10).max(1_000).optional() }))
    .mutation(({ ctx, input }) => addMember(ctx.db, { orgId: ctx.org.id, email: input.email, name: input.name, role: input.role, password: input.password ?? null })),
  setRole: ownerProcedure.input(z.object({ userId: id("usr"), role })).mutation(({ ctx, input }) =>
    inTx(ctx.db, async (tx) => {
      // Under the organisation's memberships lock: an organisation always keeps an owner.
      await membershipsLockOrg(tx, ctx.org.id);
      const n = await membershipsSetRole(tx, ctx.org.id, input.userId, input.role);
      if (n === 0) throw new TRPCError({ code: "NOT_FOUND", message: "member not found" });
      if ((await membershipsCountOwners(tx, ctx.org.id)) === 0) throw new TRPCError({ code: "BAD_REQUEST", message: "the organisation needs at least one owner" });
      return { ok: true };
    }),
  ),
  /** Links the member to their Slack user in the organisation's workspace (Slack approvals decide as them). */
  setSlackUser: ownerProcedure
    .input(z.object({ userId: id("usr"), slackUserId: z.string().regex(/^[UW][A-Z0-9]{2,20}$/, "a Slack user id (U...)").nullable() }))
    .mutation(async ({ ctx, input }) => {
      const n = await membershipsSetSlackUser(ctx.db, ctx.org.id, input.userId, input.slackUserId);
      if (n === 0) throw new TRPCError({ code: "NOT_FOUND", message: "member not found" });
      return { ok: true };
    }),
  remove: ownerProcedure.input(z.object({ userId: id("usr") })).mutation(async ({ ctx, input }) => {
    if (input.userId === ctx.user.id) throw new TRPCError({ code: "BAD_REQUEST", message: "you cannot remove yourself" });
    const memberEmail = await membershipsEmailOf(ctx.db, ctx.org.id, input.userId);
    if (!memberEmail) throw new TRPCError({ code: "NOT_FOUND", message: "member not found" });
    return { removed: await removeMember(ctx.db, ctx.org.id, memberEmail) };
  }),
});

export const appRouter = router({ automations, triggers, drafts, versions, migrations, connections, contacts, suppressions, members, kinds, budgets, connectionLimits: connectionLimitsRouter, contactView, lifecycle });
export type AppRouter = typeof appRouter;
