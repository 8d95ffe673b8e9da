import { z } from "zod";
import { defineConnectionKind, httpUrl } from "./kind";

const url = httpUrl();

/** A Slack connection: the workspace (team) it belongs to, and the Web API's base URL (a local server in tests). */
export const slackConnectionConfig = z
  .object({
    teamId: z
      .string()
      .trim()
      .min(1, "is required")
      .max(50, "is too long")
      .refine((v) => /^[TE][A-Z0-9]+$/.test(v), "must be a workspace ID: T followed by capital letters and digits, e.g. T024BE7LD"),
    apiUrl: z
      .string()
      .refine((v) => url(v) === true, "must be a web address starting with https://")
      .default("https://slack.com/api/")
      .transform((u) => (u.endsWith("/") ? u : `${u}/`)),
  })
  .strict();
export type SlackConnectionConfig = z.infer<typeof slackConnectionConfig>;

export const slackKind = defineConnectionKind({
  kind: "slack",
  label: "Slack",
  description: "Posts approval requests to a Slack channel or person, with Approve and Reject buttons.",
  config: slackConnectionConfig,
  defaults: { teamId: "", apiUrl: "https://slack.com/api/" },
  fields: [
    {
      name: "teamId",
      label: "Workspace ID",
      required: true,
      help: "Starts with T. Test connection tells you the ID the token belongs to.",
      widget: { type: "text", placeholder: "T024BE7LD" },
    },
    { name: "apiUrl", label: "Slack API address", help: "Leave as it is unless you use Slack through a proxy.", advanced: true, widget: { type: "text", format: "url" } },
  ],
  secret: { label: "Bot token", help: "The app's bot user OAuth token (starts with xoxb-), from Slack's app settings under OAuth & Permissions.", required: true },
  summary: (c) => `workspace ${c.teamId}${c.apiUrl === "https://slack.com/api/" ? "" : ` via ${c.apiUrl}`}`,
});
