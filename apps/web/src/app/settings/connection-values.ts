import { type ConnectionKindModule, connectionNameProblem, connectionSecretProblem, type FieldSpec } from "@holdfast/core/kinds";
import { z } from "zod";

/** A connection form's values and their rules, apart from the form that shows them. */
export interface ConnectionFormValues {
  name: string;
  config: Record<string, unknown>;
  secret: string;
}

/** The kind's own config schema, a valid name, and a secret when the kind needs one and none is saved. */
export function connectionFormSchema(kind: ConnectionKindModule, hasSavedSecret: boolean) {
  return z
    .object({
      name: z.string().superRefine((v, ctx) => {
        const problem = connectionNameProblem(v);
        if (problem) ctx.addIssue({ code: "custom", message: problem.replace(/^Name: /, "") });
      }),
      config: kind.config,
      secret: z.string(),
    })
    .superRefine((v, ctx) => {
      const problem = connectionSecretProblem(kind, v.config, v.secret !== "" || hasSavedSecret);
      if (problem && kind.secret) ctx.addIssue({ code: "custom", path: ["secret"], message: problem.replace(`${kind.secret.label}: `, "") });
    });
}

/**
 * Number fields with a `scale` are shown in the unit people use (dollars per million tokens) and stored in the
 * kind's (micro-dollars): the form holds shown values; what is tested and saved is converted back.
 */
export function scaled(fields: readonly FieldSpec[], config: Record<string, unknown>, to: "shown" | "stored"): Record<string, unknown> {
  const out = { ...config };
  for (const f of fields) {
    const scale = f.widget.type === "number" ? f.widget.scale : undefined;
    const v = out[f.name];
    if (!scale || typeof v !== "number" || !Number.isFinite(v)) continue;
    out[f.name] = to === "stored" ? Math.round(v * scale) : v / scale;
  }
  return out;
}

/** Empty optional text is "not set" (undefined), so the schema's defaults and optionals apply. */
export const textValue = (required: boolean) => (v: unknown) => (typeof v === "string" && v.trim() === "" && !required ? undefined : v);
export const numberValue = (v: unknown) => (v === "" || v === null || v === undefined ? undefined : typeof v === "number" ? v : Number(v));
