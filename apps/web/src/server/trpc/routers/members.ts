import {
  addMember,
  membershipsCountOwners,
  membershipsEmailOf,
  membershipsList,
  membershipsLockOrg,
  membershipsSetRole,
  membershipsSetSlackUser,
  removeMember,
} from "@holdfast/core";
import { inTx } from "@holdfast/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { ownerProcedure, router, viewerProcedure } from "../init";
import { email, id } from "./common";

/** People and roles: owners add, change, link to Slack and remove members; an organisation always keeps an owner. */
const role = z.enum(["owner", "editor", "approver", "viewer"]);

export const members = router({
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
