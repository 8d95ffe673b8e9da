import { NotFoundError } from "@holdfast/core/base";
import { membershipsEmailOf, membershipsList, membershipsSetSlackUser } from "@holdfast/core/store";
import { invitationEmailState, invitationPath, inviteMember, LastOwnerError, inviteMemberByEmail, listOpenInvitations, removeMember, revokeInvitation, setMemberRole } from "@holdfast/core/people";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { env } from "../../../env";
import { ownerProcedure, router, viewerProcedure } from "../init";
import { id } from "./common";

/**
 * People and roles: owners invite, change, link to Slack and remove members; an organisation always keeps an owner.
 * Nobody becomes a member without accepting: `invite` has the link emailed to the person (with a system mailbox) or
 * answers it for the owner to pass on (without one), the same answer whether or not the address has an account
 * (people/auth/invitations.ts), and the person is listed only once they accept.
 */
const role = z.enum(["owner", "editor", "approver", "viewer"]);

export const members = router({
  list: viewerProcedure.query(({ ctx }) => membershipsList(ctx.db, ctx.org.id)),
  /**
   * Invites an address (or renews its pending invitation). With a system mailbox the sweeper emails the link to the
   * address and the answer holds no link; without one the link is answered, once, for the owner to send. Either way
   * the answer is the same whether or not the address has an account.
   */
  invite: ownerProcedure
    .input(z.object({ email: z.string().trim().email("enter an email address").max(320), role }))
    .mutation(async ({ ctx, input }) => {
      const base = env.HOLDFAST_PUBLIC_URL.replace(/\/$/, "");
      const who = { orgId: ctx.org.id, email: input.email, role: input.role, invitedBy: ctx.user.id };
      if (env.HOLDFAST_SYSTEM_SMTP_URL) {
        const made = await inviteMemberByEmail(ctx.db, { ...who, linkBase: base });
        return { delivery: "email" as const, invitationId: made.invitationId, sentTo: made.sentTo, expiresAt: made.expiresAt };
      }
      const made = await inviteMember(ctx.db, who);
      return { delivery: "link" as const, invitationId: made.invitationId, sentTo: input.email, link: `${base}${invitationPath(made.token)}`, expiresAt: made.expiresAt };
    }),
  /** Pending invitations (not yet accepted, declined or revoked; expired ones marked), with their email's state, for owners. */
  invitations: ownerProcedure.query(async ({ ctx }) =>
    (await listOpenInvitations(ctx.db, ctx.org.id)).map((i) => ({
      id: i.id,
      email: i.email,
      role: i.role,
      createdAt: i.createdAt,
      expiresAt: i.expiresAt,
      expired: i.expired,
      emailState: invitationEmailState(i),
    })),
  ),
  revokeInvitation: ownerProcedure.input(z.object({ invitationId: id("inv") })).mutation(async ({ ctx, input }) => {
    if (!(await revokeInvitation(ctx.db, ctx.org.id, input.invitationId))) throw new TRPCError({ code: "NOT_FOUND", message: "that invitation is no longer pending" });
    return { revoked: true };
  }),
  setRole: ownerProcedure.input(z.object({ userId: id("usr"), role })).mutation(async ({ ctx, input }) => {
    try {
      await setMemberRole(ctx.db, ctx.org.id, input.userId, input.role);
    } catch (error) {
      if (error instanceof NotFoundError) throw new TRPCError({ code: "NOT_FOUND", message: "member not found" });
      if (error instanceof LastOwnerError) throw new TRPCError({ code: "BAD_REQUEST", message: error.message });
      throw error;
    }
    return { ok: true };
  }),
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
