import { parse } from "yaml";

/**
 * Reading the deployment files as Docker reads them, for e2e/compose-services.test.ts: docker-compose.yml's services
 * (YAML merge keys and `${VAR}`, `${VAR:-default}`, `${VAR-default}` interpolation, as Compose does), the Dockerfile's
 * instructions, and the README's install line. Pure: text in, values out.
 */

export interface ComposeService {
  name: string;
  /** The command's argv exactly as the file gives it (the exec form; a string command is refused). */
  command: string[];
  environment: Record<string, string>;
  profiles: string[];
  /** Services this one waits for, with the condition. */
  dependsOn: Record<string, string>;
  /** The image's tag, and whether the service builds it. */
  image?: string;
  build: boolean;
  restart?: string;
}

/** Compose's interpolation of one string: `$$` is a dollar; an unset variable without a default is an error here. */
export function interpolate(text: string, vars: Record<string, string | undefined>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, braced, op, fallback, bare) => {
    if (whole === "$$") return "$";
    const name = (braced ?? bare) as string;
    const value = vars[name];
    if (op === ":-") return value ? value : (fallback as string);
    if (op === "-") return value ?? (fallback as string);
    if (value === undefined) throw new Error(`docker-compose.yml uses \${${name}} with no default and the test did not give it`);
    return value;
  });
}

function interpolateAll(value: unknown, vars: Record<string, string | undefined>): unknown {
  if (typeof value === "string") return interpolate(value, vars);
  if (Array.isArray(value)) return value.map((v) => interpolateAll(v, vars));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateAll(v, vars)]));
  return value;
}

function environmentOf(raw: unknown): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (Array.isArray(raw)) {
    return Object.fromEntries(
      raw.map((entry: string) => {
        const at = entry.indexOf("=");
        return at < 0 ? [entry, ""] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(raw as Record<string, unknown>).map(([k, v]) => [k, v === null ? "" : String(v)]));
}

/** The services of a compose file, interpolated with `vars` (the operator's .env). */
export function composeServices(text: string, vars: Record<string, string | undefined>): ComposeService[] {
  const doc = interpolateAll(parse(text, { merge: true }), vars) as { services: Record<string, Record<string, unknown>> };
  return Object.entries(doc.services).map(([name, s]) => {
    const command = s.command;
    if (command !== undefined && !Array.isArray(command)) throw new Error(`service ${name}: command must be a list (the exec form), not a string`);
    const depends = s.depends_on;
    const dependsOn = Array.isArray(depends)
      ? Object.fromEntries(depends.map((d: string) => [d, "service_started"]))
      : Object.fromEntries(Object.entries((depends ?? {}) as Record<string, { condition?: string }>).map(([k, v]) => [k, v?.condition ?? "service_started"]));
    return {
      name,
      command: ((command as unknown[] | undefined) ?? []).map(String),
      environment: environmentOf(s.environment),
      profiles: (s.profiles as string[] | undefined) ?? [],
      dependsOn,
      ...(typeof s.image === "string" ? { image: s.image } : {}),
      build: s.build !== undefined,
      ...(s.restart !== undefined ? { restart: String(s.restart) } : {}),
    };
  });
}

export interface DockerfileInstruction {
  keyword: string;
  args: string;
}

/** A Dockerfile's instructions in order (comments dropped, `\` continuations joined). */
export function dockerfileInstructions(text: string): DockerfileInstruction[] {
  const joined = text.replace(/\\\r?\n/g, " ");
  return joined
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => {
      const [keyword = "", ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(" ") };
    });
}

/** Shell commands joined by `&&`, each with its words single-spaced. */
export const shellSteps = (line: string): string[] =>
  line
    .split("&&")
    .map((step) => step.trim().split(/\s+/).join(" "))
    .filter(Boolean);

/** The image's ENV settings (the `KEY=value` form), WORKDIR and the build's RUN steps (each split at `&&`). */
export function dockerfileImage(text: string): { env: Record<string, string>; workdir: string; runSteps: string[] } {
  const env: Record<string, string> = {};
  let workdir = "/";
  const runSteps: string[] = [];
  for (const { keyword, args } of dockerfileInstructions(text)) {
    if (keyword === "WORKDIR") workdir = args;
    if (keyword === "RUN") runSteps.push(...shellSteps(args));
    if (keyword === "ENV") {
      for (const pair of args.split(/\s+/)) {
        const at = pair.indexOf("=");
        if (at < 0) throw new Error(`Dockerfile: ENV ${args}: use the KEY=value form`);
        env[pair.slice(0, at)] = pair.slice(at + 1);
      }
    }
  }
  return { env, workdir, runSteps };
}

/** The README's first shell block after `heading`: its steps (one line, joined by `&&`). */
export function readmeSteps(readme: string, heading: string): string[] {
  const at = readme.indexOf(heading);
  if (at < 0) throw new Error(`README.md has no "${heading}"`);
  const block = /```sh\n([^\n]*)\n```/.exec(readme.slice(at));
  if (!block?.[1]) throw new Error(`README.md: no one-line sh block after "${heading}"`);
  return shellSteps(block[1]);
}
