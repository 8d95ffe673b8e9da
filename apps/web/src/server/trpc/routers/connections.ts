import { connectionKind, connectionKindNames } from "@holdfast/core/versions";
import { addConnection, type ConnectionTestResult, ConnectionInUseError, deleteConnection, listConnections, testConnectionSettings, testSavedConnection, updateConnection } from "@holdfast/core/providers";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { ownerProcedure, router, viewerProcedure } from "../init";

/**
 * Settings -> Connections. Secrets are write-only: never selected, only set or replaced (and used by Test connection
 * on the server). Settings are checked by the kind's schema in core (connections/kinds/), so refusals name the field
 * in a sentence; a rename or delete is refused while a published version that can still run names the connection.
 * Every procedure is scoped by `ctx.org.id` (init.ts); another organisation's connection id is "not found".
 */
const connectionId = z.string().regex(/^cnx_[0-9a-f]{32}$/, "not a connection id");
const kind = z.enum(connectionKindNames);
const config = z.record(z.string(), z.unknown());
/** Names are checked in core, so the refusal is a sentence, not a schema's error. */
const name = z.string().max(200);
/** An empty secret field means "keep the saved one". */
const secret = z
  .string()
  .max(10_000)
  .optional()
  .transform((s) => (s === undefined || s === "" ? undefined : s));

/** A refusal that names the versions in the way: 409, as a sentence. */
async function refusingInUse<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ConnectionInUseError) throw new TRPCError({ code: "CONFLICT", message: error.message });
    throw error;
  }
}

function summaryOf(kindName: string, settings: unknown): string {
  const k = connectionKind(kindName);
  const parsed = k?.config.safeParse(settings);
  return k && parsed?.success ? k.summary(parsed.data) : "The settings need attention: open the connection and save it again.";
}

const sentence = (...parts: (string | null)[]) => parts.filter(Boolean).join(" ");

export const connections = router({
  list: viewerProcedure.query(async ({ ctx }) =>
    (await listConnections(ctx.db, ctx.org.id)).map((c) => ({
      ...c,
      label: connectionKind(c.kind)?.label ?? c.kind,
      summary: summaryOf(c.kind, c.config),
    })),
  ),
  create: ownerProcedure.input(z.object({ kind, name, config, secret })).mutation(async ({ ctx, input }) => {
    const id = await addConnection(ctx.db, { orgId: ctx.org.id, kind: input.kind, name: input.name, config: input.config, secret: input.secret ?? null });
    return { id, message: `Saved "${input.name}".` };
  }),
  /** New settings, name and/or secret; a new secret also resumes the steps parked on the connection. */
  update: ownerProcedure
    .input(z.object({ connectionId, name: name.optional(), config: config.optional(), secret }))
    .mutation(({ ctx, input }) =>
      refusingInUse(async () => {
        const r = await updateConnection(
          ctx.db,
          ctx.org.id,
          input.connectionId,
          {
            ...(input.name !== undefined ? { name: input.name } : {}),
            ...(input.config !== undefined ? { config: input.config } : {}),
            ...(input.secret !== undefined ? { secret: input.secret } : {}),
          },
          `user:${ctx.user.email}`,
        );
        const resumed = r.resumed > 0 ? `${r.resumed} step${r.resumed === 1 ? "" : "s"} waiting on it resumed.` : null;
        return { name: r.name, resumed: r.resumed, message: sentence(`Saved "${r.name}".`, resumed, r.note) };
      }),
    ),
  delete: ownerProcedure.input(z.object({ connectionId })).mutation(({ ctx, input }) =>
    refusingInUse(async () => {
      const r = await deleteConnection(ctx.db, ctx.org.id, input.connectionId);
      return { name: r.name, message: sentence(`Deleted "${r.name}".`, r.note) };
    }),
  ),
  /**
   * Logs in without side effects. A saved connection (by id, with its stored secret unless a new one is typed, and
   * the form's settings when given), or a new one's form values before it is saved.
   */
  test: ownerProcedure
    .input(
      z.union([
        z.object({ connectionId, config: config.optional(), secret }),
        z.object({ kind, config, secret }),
      ]),
    )
    .mutation(({ ctx, input }): Promise<ConnectionTestResult> => {
      if ("connectionId" in input) {
        return testSavedConnection(ctx.db, ctx.org.id, input.connectionId, {
          ...(input.config !== undefined ? { config: input.config } : {}),
          ...(input.secret !== undefined ? { secret: input.secret } : {}),
        });
      }
      return testConnectionSettings(input.kind, input.config, input.secret ?? null);
    }),
});
