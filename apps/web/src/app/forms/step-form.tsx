"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { type FieldSpec, fieldValue, friendlyIssue, type KindModule } from "@holdfast/core/kinds";
import { type ComponentType, useEffect, useLayoutEffect, useRef } from "react";
import { type Control, Controller, type FieldValues, get, useForm, useWatch } from "react-hook-form";
import { WaitRuleWidget } from "./wait-rule";
import {
  ApproversWidget,
  BooleanWidget,
  ConnectionWidget,
  DurationWidget,
  type FormContext,
  NumberWidget,
  SelectWidget,
  StepWidget,
  TemplateWidget,
  TextWidget,
  type WidgetProps,
} from "./widgets";
import { ConditionWidget, JsonWidget, KeyValuesWidget } from "./structured-widgets";
import { DeclaredFieldsWidget, IdFieldWidget, PayloadPathWidget, ZoneWidget } from "./payload-widgets";

/**
 * A step's settings as a form, generated from its kind module's fields and validated with its zod schema
 * (react-hook-form + the zod resolver, messages in plain words). Every change goes to the node's config at once (the
 * editor autosaves); the server's publish checks for this node show under their fields.
 */

// Each widget is typed by its own value; the form hands it the field's value as stored.
const widgets = {
  text: TextWidget,
  template: TemplateWidget,
  secret: TextWidget,
  number: NumberWidget,
  duration: DurationWidget,
  boolean: BooleanWidget,
  select: SelectWidget,
  connection: ConnectionWidget,
  approvers: ApproversWidget,
  zone: ZoneWidget,
  "payload-path": PayloadPathWidget,
  "id-field": IdFieldWidget,
  step: StepWidget,
  "wait-rule": WaitRuleWidget,
  condition: ConditionWidget,
  "key-values": KeyValuesWidget,
  json: JsonWidget,
  "declared-fields": DeclaredFieldsWidget,
} as unknown as Record<FieldSpec["widget"]["type"], ComponentType<WidgetProps<unknown> & { zone?: unknown; zoneFrom?: unknown }>>;

/** The config as saved: empty texts and empty groups left out, so optional settings stay unset. */
export function cleanConfig(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cleanConfig);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const c = cleanConfig(v);
    if (c === undefined || c === "" || (c !== null && typeof c === "object" && !Array.isArray(c) && Object.keys(c).length === 0 && k !== "headers" && k !== "fields")) continue;
    out[k] = c;
  }
  return out;
}

export const fieldId = (nodeId: string, name: string) => `field-${nodeId}-${name.replaceAll(".", "-")}`;

/** What a form is generated from: a step kind's module, or a template's questions (automations/templates/). */
export type FormModule = Pick<KindModule, "label" | "description" | "config" | "fields">;

export function StepForm({
  module,
  config,
  onChange,
  ctx,
  problems,
}: {
  module: FormModule;
  config: unknown;
  onChange: (config: unknown) => void;
  ctx: FormContext;
  /** The server's problems for this node: [field under config ("" for the node), message]. */
  problems: [string, string][];
}) {
  const form = useForm<FieldValues>({
    defaultValues: (config ?? {}) as FieldValues,
    resolver: zodResolver(module.config as never, { error: friendlyIssue } as never),
    mode: "all",
  });
  // Show what is missing at once: a new node's empty required fields say so.
  useEffect(() => {
    void form.trigger();
  }, [form]);
  // One subscription for the form's life, calling the newest onChange: re-subscribing on each render would leave a
  // moment between the old subscription's end and the new one's start in which a widget's change reaches no one.
  const onChangeRef = useRef(onChange);
  useLayoutEffect(() => {
    onChangeRef.current = onChange;
  });
  // Subscribed in the layout phase: the form hears a change from its first paint on.
  useLayoutEffect(() => {
    const sub = form.watch((values) => {
      onChangeRef.current(cleanConfig(values));
      void form.trigger();
    });
    return () => sub.unsubscribe();
  }, [form]);

  const basic = module.fields.filter((f) => !f.advanced);
  const advanced = module.fields.filter((f) => f.advanced);
  const nodeProblems = problems.filter(([f]) => f === "" || !module.fields.some((x) => f === x.name || f.startsWith(`${x.name}.`)));
  return (
    <form className="step-form stack" onSubmit={(e) => e.preventDefault()} aria-label={`${module.label} settings`}>
      <p className="small muted">{module.description}</p>
      {basic.map((f) => (
        <Field key={f.name} field={f} control={form.control} ctx={ctx} problems={problems} />
      ))}
      {advanced.length > 0 && (
        <details className="more-settings">
          <summary>More settings</summary>
          <div className="stack">
            {advanced.map((f) => (
              <Field key={f.name} field={f} control={form.control} ctx={ctx} problems={problems} />
            ))}
          </div>
        </details>
      )}
      {nodeProblems.length > 0 && (
        <ul className="field-error node-problems">
          {nodeProblems.map(([f, m]) => (
            <li key={`${f}:${m}`}>{f ? `${labelOf(module, f)}: ${m}` : m}</li>
          ))}
        </ul>
      )}
    </form>
  );
}

/** The label of the field a problem path names (its longest matching field), else the path. */
export function labelOf(module: FormModule | undefined, path: string): string {
  const match = module?.fields.filter((f) => path === f.name || path.startsWith(`${f.name}.`)).sort((a, b) => b.name.length - a.name.length)[0];
  return match?.label ?? path;
}

function Field({ field, control, ctx, problems }: { field: FieldSpec; control: Control<FieldValues>; ctx: FormContext; problems: [string, string][] }) {
  const watched = useWatch({ control, name: [field.showIf?.field ?? field.name, "zone", "zoneFrom"] }) as unknown[];
  if (field.showIf && !field.showIf.in.includes(watched[0])) return null;
  const Widget = widgets[field.widget.type];
  const id = fieldId(ctx.nodeId, field.name);
  const server = problems.filter(([f]) => f === field.name || f.startsWith(`${field.name}.`)).map(([, m]) => m);
  const inline = field.widget.type === "boolean";
  return (
    <Controller
      name={field.name}
      control={control}
      render={({ field: f, fieldState, formState }) => {
        // A group's own error, or its first inner one (approvers.users.0: Not an email address).
        const own = fieldState.error?.message ?? firstMessage(get(formState.errors, field.name));
        const messages = [...new Set([...(own ? [own] : []), ...server])];
        return (
          <div className={`form-field${inline ? " form-field-inline" : ""}`} data-field={field.name}>
            <label htmlFor={id}>
              {field.label}
              {field.required ? <span className="required" title="required"> *</span> : null}
            </label>
            <Widget
              field={field}
              id={id}
              value={f.value}
              onChange={f.onChange}
              onBlur={f.onBlur}
              ctx={ctx}
              invalid={messages.length > 0}
              zone={watched[1]}
              zoneFrom={watched[2]}
            />
            {field.help ? <span className="help small muted">{field.help}</span> : null}
            {messages.map((m) => (
              <span key={m} className="field-error small" role="alert">
                {m}
              </span>
            ))}
          </div>
        );
      }}
    />
  );
}

function firstMessage(error: unknown, depth = 0): string | undefined {
  if (!error || typeof error !== "object" || depth > 5) return undefined;
  const e = error as { message?: unknown };
  if (typeof e.message === "string" && e.message) return e.message;
  // Nested field errors only (an error's `ref` is a DOM element: never walked).
  for (const [k, v] of Object.entries(error as Record<string, unknown>)) {
    if (k === "ref" || k === "types" || k === "type") continue;
    const m = firstMessage(v, depth + 1);
    if (m) return m;
  }
  return undefined;
}

export { fieldValue };
