import {
  AutomationExistsError,
  addMember,
  createAutomation,
  applyMigration,
  diffGraphs,
  getDraft,
  graphSchema,
  isValidZone,
  migrationInput,
  planMigration,
  publishDraft,
  removeMember,
  saveDraft,
  setContactZone,
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
  const rows = await db.$queryRaw<{ id: string }[]>`SELECT id FROM automations WHERE org_id = ${orgId} AND id = ${automationId}`;
  if (!rows[0]) throw new TRPCError({ code: "NOT_FOUND", message: "automation not found" });
}

const automations = router({
  list: viewerProcedure.query(({ ctx }) =>
    ctx.db.$queryRaw<{ id: string; slug: string; name: string; latest: number | null; publishedAt: Date | null; running: number }[]>`
      SELECT a.id, a.slug, a.name, v.version AS latest, v.published_at AS "publishedAt",
             (SELECT count(*)::int FROM runs r WHERE r.org_id = a.org_id AND r.automation_id = a.id AND r.status = 'running') AS running
      FROM automations a
      LEFT JOIN LATERAL (SELECT version, published_at FROM automation_versions WHERE automation_id = a.id AND org_id = a.org_id
                         ORDER BY version DESC LIMIT 1) v ON true
      WHERE a.org_id = ${ctx.org.id} ORDER BY a.name`,
  ),
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
    return ctx.db.$queryRaw<{ id: string; version: number; publishedAt: Date; publishedBy: string | null; running: number }[]>`
      SELECT v.id, v.version, v.published_at AS "publishedAt", v.published_by AS "publishedBy",
             (SELECT count(*)::int FROM runs r WHERE r.version_id = v.id AND r.status = 'running') AS running
      FROM automation_versions v
      WHERE v.org_id = ${ctx.org.id} AND v.automation_id = ${input.automationId} AND v.published_at IS NOT NULL
      ORDER BY v.version DESC`;
  }),
  diff: viewerProcedure
    .input(automationId.extend({ from: z.number().int().min(1), to: z.number().int().min(1) }))
    .query(async ({ ctx, input }) => {
      const rows = await ctx.db.$queryRaw<{ version: number; graph: unknown }[]>`
        SELECT version, graph FROM automation_versions
        WHERE org_id = ${ctx.org.id} AND automation_id = ${input.automationId} AND published_at IS NOT NULL AND version IN (${input.from}, ${input.to})`;
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
      const own = await ctx.db.$queryRaw<{ id: string }[]>`
        SELECT m.id FROM run_migrations m
        JOIN automation_versions f ON f.id = m.from_version_id AND f.version = ${input.migration.fromVersion}
        JOIN automation_versions t ON t.id = m.to_version_id AND t.version = ${input.migration.toVersion}
        WHERE m.org_id = ${ctx.org.id} AND m.id = ${input.migrationId} AND m.automation_id = ${input.automationId}`;
      if (!own[0]) throw new TRPCError({ code: "NOT_FOUND", message: "migration not found" });
    }
    return applyMigration(ctx.db, graphs, ctx.org.id, input.automationId, input.migration, `user:${ctx.user.email}`, {
      ...(input.migrationId ? { migrationId: input.migrationId } : {}),
    });
  }),
  list: viewerProcedure.input(automationId).query(({ ctx, input }) =>
    ctx.db.$queryRaw<{ id: string; status: string; migrated: number; deferred: number; createdBy: string; createdAt: Date }[]>`
      SELECT id, status, migrated, deferred, created_by AS "createdBy", created_at AS "createdAt" FROM run_migrations
      WHERE org_id = ${ctx.org.id} AND automation_id = ${input.automationId} ORDER BY created_at DESC`,
  ),
});

const contacts = router({
  list: viewerProcedure.input(z.object({ query: z.string().max(320).default("") })).query(({ ctx, input }) =>
    ctx.db.$queryRaw<{ id: string; email: string; timeZone: string | null; consent: string }[]>`
      SELECT id, email, time_zone AS "timeZone", consent FROM contacts
      WHERE org_id = ${ctx.org.id} AND email ILIKE ${`%${input.query.replace(/[\\%_]/g, (m) => `\\${m}`)}%`}
      ORDER BY email LIMIT 200`,
  ),
  upsert: editorProcedure
    .input(z.object({ email, timeZone: z.string().refine(isValidZone, "not an IANA time zone").nullable(), consent: z.enum(["granted", "unknown", "withdrawn"]) }))
    .mutation(async ({ ctx, input }) => {
      const rows = await ctx.db.$queryRaw<{ id: string }[]>`
        INSERT INTO contacts (org_id, email, time_zone, consent, consent_changed_at) VALUES (${ctx.org.id}, ${input.email}, ${input.timeZone}, ${input.consent}, now())
        ON CONFLICT (org_id, email) DO UPDATE SET consent = EXCLUDED.consent,
          consent_changed_at = CASE WHEN contacts.consent <> EXCLUDED.consent THEN now() ELSE contacts.consent_changed_at END, updated_at = now()
        RETURNING id`;
      const id = rows[0]?.id;
      // A changed zone moves the contact's pending waits (with their old and new instants on each run's timeline).
      if (id && input.timeZone !== null) await setContactZone(ctx.db, ctx.org.id, id, input.timeZone, `user:${ctx.user.email}`);
      return { id };
    }),
});

const suppressions = router({
  list: viewerProcedure.query(({ ctx }) =>
    ctx.db.$queryRaw<{ email: string; reason: string; createdAt: Date }[]>`
      SELECT email, reason, created_at AS "createdAt" FROM suppressions WHERE org_id = ${ctx.org.id} ORDER BY created_at DESC LIMIT 500`,
  ),
  add: editorProcedure.input(z.object({ email, reason: z.string().trim().min(1).max(200) })).mutation(async ({ ctx, input }) => {
    await ctx.db.$executeRaw`INSERT INTO suppressions (org_id, email, reason) VALUES (${ctx.org.id}, ${input.email}, ${input.reason}) ON CONFLICT DO NOTHING`;
    return { ok: true };
  }),
  remove: ownerProcedure.input(z.object({ email })).mutation(async ({ ctx, input }) => ({
    removed: (await ctx.db.$executeRaw`DELETE FROM suppressions WHERE org_id = ${ctx.org.id} AND email = ${input.email}`) > 0,
  })),
});

const members = router({
  list: viewerProcedure.query(({ ctx }) =>
    ctx.db.$queryRaw<{ userId: string; email: string; name: string; role: string; slackUserId: string | null }[]>`
      SELECT u.id AS "userId", u.email, u.name, m.role, m.slack_user_id AS "slackUserId"
      FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ${ctx.org.id} ORDER BY u.name`,
  ),
  add: ownerProcedure
    .input(z.object({ email, name: z.string().trim().min(1).max(200), role, password: z.string().min(10).max(1_000).optional() }))
    .mutation(({ ctx, input }) => addMember(ctx.db, { orgId: ctx.org.id, email: input.email, name: input.name, role: input.role, password: input.password ?? null })),
  setRole: ownerProcedure.input(z.object({ userId: id("usr"), role })).mutation(({ ctx, input }) =>
    inTx(ctx.db, async (tx) => {
      // Under the organisation's memberships lock: an organisation always keeps an owner.
      await tx.$queryRaw`SELECT user_id FROM memberships WHERE org_id = ${ctx.org.id} FOR UPDATE`;
      const n = await tx.$executeRaw`UPDATE memberships SET role = ${input.role} WHERE org_id = ${ctx.org.id} AND user_id = ${input.userId}`;
      if (n === 0) throw new TRPCError({ code: "NOT_FOUND", message: "member not found" });
      const [owners] = await tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM memberships WHERE org_id = ${ctx.org.id} AND role = 'owner'`;
      if ((owners?.n ?? 0) === 0) throw new TRPCError({ code: "BAD_REQUEST", message: "the organisation needs at least one owner" });
      return { ok: true };
    }),
  ),
  /** Links the member to their Slack user in the organisation's workspace (Slack approvals decide as them). */
  setSlackUser: ownerProcedure
    .input(z.object({ userId: id("usr"), slackUserId: z.string().regex(/^[UW][A-Z0-9]{2,20}$/, "a Slack user id (U...)").nullable() }))
    .mutation(async ({ ctx, input }) => {
      const n = await ctx.db.$executeRaw`
        UPDATE memberships SET slack_user_id = ${input.slackUserId} WHERE org_id = ${ctx.org.id} AND user_id = ${input.userId}`;
      if (n === 0) throw new TRPCError({ code: "NOT_FOUND", message: "member not found" });
      return { ok: true };
    }),
  remove: ownerProcedure.input(z.object({ userId: id("usr") })).mutation(async ({ ctx, input }) => {
    if (input.userId === ctx.user.id) throw new TRPCError({ code: "BAD_REQUEST", message: "you cannot remove yourself" });
    const [u] = await ctx.db.$queryRaw<{ email: string }[]>`
      SELECT u.email FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.org_id = ${ctx.org.id} AND u.id = ${input.userId}`;
    if (!u) throw new TRPCError({ code: "NOT_FOUND", message: "member not found" });
    return { removed: await removeMember(ctx.db, ctx.org.id, u.email) };
  }),
});

export const appRouter = router({ automations, triggers, drafts, versions, migrations, connections, contacts, suppressions, members, kinds, budgets, connectionLimits: connectionLimitsRouter, contactView, lifecycle });
export type AppRouter = typeof appRouter;
