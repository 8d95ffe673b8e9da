import { contactPaths } from "./declared-fields";
import { kindOf } from "./registry";
import type { TriggerConfig } from "./trigger";

/**
 * The config a new node of `kind` starts from in this graph: its kind's defaults, told what the graph knows. A wait
 * counts in the contact's time zone when the trigger says where the zone is (a declared field with that role, or the
 * path typed by hand), with no fixed zone: a run whose payload has none uses the contact's stored zone, else UTC.
 * Pure (the editor calls it when a step is added).
 */
export function defaultConfigIn(kind: string, nodes: readonly { kind: string; config?: unknown }[]): unknown {
  const module = kindOf(kind);
  if (!module) return {};
  const defaults = structuredClone(module.defaults) as Record<string, unknown>;
  if (kind !== "wait") return defaults;
  const zonePath = triggerZonePath(nodes);
  if (!zonePath) return defaults;
  const { zone: _fixed, ...rest } = defaults;
  return { ...rest, zoneFrom: `input.${zonePath}` };
}

/** Where the graph's trigger reads the contact's time zone, or null. */
export function triggerZonePath(nodes: readonly { kind: string; config?: unknown }[]): string | null {
  const config = nodes.find((n) => n.kind === "trigger")?.config as Partial<TriggerConfig> | undefined;
  if (!config) return null;
  const fields = Array.isArray(config.fields) ? config.fields.filter((f) => typeof f?.name === "string" && /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(f.name)) : undefined;
  return contactPaths({ contactEmailField: config.contactEmailField ?? "email", contactTimeZoneField: config.contactTimeZoneField, fields }).timeZone;
}
