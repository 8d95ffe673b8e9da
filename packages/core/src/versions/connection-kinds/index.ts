import type { ConnectionKindName } from "../forms/fields";
import { crmKind } from "./crm";
import { httpKind } from "./http";
import type { ConnectionKindModule } from "./kind";
import { modelKind } from "./model";
import { slackKind } from "./slack";
import { smtpKind } from "./smtp";

export * from "./crm";
export * from "./http";
export * from "./kind";
export * from "./model";
export * from "./slack";
export * from "./smtp";

/** Every connection kind, in the order the "Add connection" picker shows them. */
export const connectionKinds: readonly ConnectionKindModule[] = [smtpKind, modelKind, crmKind, slackKind, httpKind];

const byKind = new Map<string, ConnectionKindModule>(connectionKinds.map((k) => [k.kind, k]));

/** The module of a kind; undefined for a name that is no kind. */
export function connectionKind(kind: ConnectionKindName): ConnectionKindModule;
export function connectionKind(kind: string): ConnectionKindModule | undefined;
export function connectionKind(kind: string): ConnectionKindModule | undefined {
  return byKind.get(kind);
}

export const connectionKindNames = connectionKinds.map((k) => k.kind) as [ConnectionKindName, ...ConnectionKindName[]];
