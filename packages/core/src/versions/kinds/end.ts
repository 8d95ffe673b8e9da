import { z } from "zod";
import { defineInlineKind } from "./kind";

export const end = defineInlineKind({
  kind: "end",
  label: "End",
  icon: "■",
  description: "The run is complete.",
  group: "Logic",
  inline: true,
  config: z.object({}).strict().default({}),
  defaults: {},
  fields: [],
  outputs: [],
  output: [],
  summary: () => "The run completes",
});
