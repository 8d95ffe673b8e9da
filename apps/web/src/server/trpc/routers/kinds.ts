import { databaseNow } from "@holdfast/core/store";
import { isValidZone, waitRuleSchema } from "@holdfast/core/versions";
import { previewWait } from "@holdfast/core/decide";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { router, viewerProcedure } from "../init";

/** What the editor's forms ask the server: the next due instants of a wait rule, by the database's clock. */
export const kinds = router({
  previewWait: viewerProcedure
    .input(z.object({ rule: waitRuleSchema, zone: z.string().max(100) }))
    .query(async ({ ctx, input }) => {
      if (!isValidZone(input.zone)) throw new TRPCError({ code: "BAD_REQUEST", message: `"${input.zone}" is not a time zone` });
      return previewWait(input.rule, input.zone, await databaseNow(ctx.db));
    }),
});
