import { router } from "./init";
import { automations } from "./routers/automations";
import { budgets } from "./routers/budgets";
import { connectionLimitsRouter } from "./routers/connection-limits";
import { connections } from "./routers/connections";
import { contactView } from "./routers/contact-view";
import { contacts } from "./routers/contacts";
import { counts } from "./routers/counts";
import { drafts } from "./routers/drafts";
import { emails } from "./routers/emails";
import { frequencyCap } from "./routers/frequency-cap";
import { goals } from "./routers/goals";
import { kinds } from "./routers/kinds";
import { lifecycle } from "./routers/lifecycle";
import { members } from "./routers/members";
import { migrations } from "./routers/migrations";
import { runs } from "./routers/runs";
import { quietHours } from "./routers/quiet-hours";
import { savedEmails } from "./routers/saved-emails";
import { testRuns } from "./routers/test-runs";
import { suppressions } from "./routers/suppressions";
import { triggers } from "./routers/triggers";
import { versions } from "./routers/versions";

/**
 * The web's API: one router per area (routers/), composed here and nothing else. Every procedure is scoped by
 * `ctx.org.id` (init.ts resolves it from the session's membership of `orgSlug`); apps/web/test/trpc.test.ts calls
 * every procedure as a user of another organisation and fails for one it does not list.
 */
export const appRouter = router({
  automations,
  triggers,
  drafts,
  versions,
  counts,
  migrations,
  connections,
  contacts,
  suppressions,
  members,
  kinds,
  budgets,
  connectionLimits: connectionLimitsRouter,
  contactView,
  lifecycle,
  runs,
  testRuns,
  emails,
  goals,
  quietHours,
  frequencyCap,
  savedEmails,
});
export type AppRouter = typeof appRouter;
