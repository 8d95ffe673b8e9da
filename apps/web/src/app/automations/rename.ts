/**
 * Renaming a step rewrites every reference to it in the other steps' settings: `steps.<id>` in templates and branch
 * conditions (`{{steps.draft.output.text}}`, `path: "steps.draft.output.ok"`), and a reply wait's `replyTo`. Pure.
 */
export function renameReferences(config: unknown, from: string, to: string): { config: unknown; changed: number } {
  let changed = 0;
  const pattern = new RegExp(`(?<![\\w.])steps\\.${from.replace(/[^a-z0-9_]/g, "")}(?![\\w])`, "g");
  const walk = (value: unknown, key: string | null): unknown => {
    if (typeof value === "string") {
      if (key === "replyTo" && value === from) {
        changed++;
        return to;
      }
      return value.replace(pattern, () => {
        changed++;
        return `steps.${to}`;
      });
    }
    if (Array.isArray(value)) return value.map((v) => walk(v, null));
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    return value;
  };
  return { config: walk(config, null), changed };
}
