import { destinationChanged, retypeSecret } from "./destination";
import type { Db } from "@holdfast/db";
import { slackClient } from "./slack-client";
import { smtpTransport } from "./smtp-transport";
import type { ConnectionKindName } from "../../versions/forms/fields";
import { type EgressOptions, type EgressRefusedError, egressRefusalOf } from "../net/egress";
import { egressFetch, guardedFetch } from "../net/fetch";
import { connectionsById } from "../../store/sql/connections";
import { connectionEgressRefusal } from "./connect";
import {
  type ConnectionKindModule,
  type CrmConnectionConfig,
  connectionConfigProblems,
  connectionKind,
  connectionSecretProblem,
  type HttpConnectionConfig,
  type ModelConnectionConfig,
  problemSentence,
  type SlackConnectionConfig,
  type SmtpConnectionConfig,
} from "../../versions/connection-kinds";
import { ConnectionNotFoundError } from "./manage";
import { decryptSecret } from "./secrets";

/**
 * Test connection: logs in the way the steps will, without doing anything (no email, no draft, no record, no
 * message), and says what happened in plain words: SMTP EHLO + AUTH, the model's `GET /models`, a CRM read that needs
 * the token, Slack `auth.test`, an HTTP API's base URL with the credential. Every call goes through the egress guard.
 * A library's own message is only ever appended, in brackets, after a sentence saying what to do.
 */
export type ConnectionTestResult = { ok: true; message: string } | { ok: false; message: string };

const timeoutMs = 15_000;
const ok = (message: string): ConnectionTestResult => ({ ok: true, message });
const refused = (message: string): ConnectionTestResult => ({ ok: false, message });

/** Tests settings and a secret as typed in the form (before saving), or as saved. */
export async function testConnectionSettings(kind: ConnectionKindName, config: unknown, secret: string | null, egress?: EgressOptions): Promise<ConnectionTestResult> {
  const k = connectionKind(kind) as ConnectionKindModule | undefined;
  if (!k) return refused(`"${kind}" is not a kind of connection.`);
  const problems = connectionConfigProblems(k, config);
  if (problems.length) return refused(`Fix the settings first: ${problems.map(problemSentence).join("; ")}.`);
  const secretProblem = connectionSecretProblem(k, config, secret !== null && secret !== "");
  if (secretProblem) return refused(`Type the secret first: ${secretProblem}.`);
  const parsed = k.config.parse(config) as Record<string, unknown>;
  const literal = connectionEgressRefusal(parsed);
  if (literal) return refused(egressWords(literal));
  try {
    switch (k.kind) {
      case "smtp":
        return await testSmtp(parsed as SmtpConnectionConfig, secret || null, egress);
      case "model":
        return await testModel(parsed as ModelConnectionConfig, secret || null, egress);
      case "crm":
        return await testCrm(parsed as CrmConnectionConfig, secret || null, egress);
      case "slack":
        return await testSlack(parsed as SlackConnectionConfig, secret ?? "", egress);
      case "http":
        return await testHttp(parsed as HttpConnectionConfig, secret ?? "", egress);
    }
  } catch (error) {
    const guard = egressRefusalOf(error);
    if (guard) return refused(egressWords(guard));
    return refused(`The test stopped on an unexpected error: try again, and tell your operator if it stays (${(error as Error).message}).`);
  }
}

/**
 * Tests a saved connection with its stored secret; `override` tests changed settings or a new secret typed in the edit
 * form before saving them. Reads the row scoped by the organisation; writes nothing.
 */
export async function testSavedConnection(
  db: Db,
  orgId: string,
  id: string,
  override: { config?: unknown; secret?: string } = {},
  egress?: EgressOptions,
): Promise<ConnectionTestResult> {
  const row = await connectionsById(db, orgId, id);
  if (!row) throw new ConnectionNotFoundError();
  let secret: string | null = override.secret ?? null;
  if (secret === null && row.secret && override.config !== undefined && destinationChanged(row.config, override.config)) return refused(retypeSecret);
  if (secret === null && row.secret) {
    try {
      secret = decryptSecret(row.secret, row.orgId, row.id);
    } catch {
      return refused("The saved secret cannot be read with this deployment's key: type it again and save.");
    }
  }
  return testConnectionSettings(row.kind, override.config ?? row.config, secret, egress);
}

// --- SMTP: EHLO, STARTTLS when asked, AUTH; nothing is sent. ---

async function testSmtp(config: SmtpConnectionConfig, password: string | null, egress?: EgressOptions): Promise<ConnectionTestResult> {
  const where = `${config.host}:${config.port}`;
  let transport: Awaited<ReturnType<typeof smtpTransport>> | undefined;
  try {
    transport = await smtpTransport({ ...config, timeoutMs: Math.min(config.timeoutMs, timeoutMs) }, password, egress);
    await transport.verify();
  } catch (error) {
    const guard = egressRefusalOf(error);
    if (guard) return refused(egressWords(guard));
    const e = error as Error & { code?: string; response?: string; responseCode?: number; command?: string };
    const said = e.response ? ` (the server said: ${clip(e.response)})` : "";
    if (e.code === "EAUTH") {
      if (e.command === "API" || !e.response) return refused(`The server asks for a login that could not be made: check the user name and password${said || ` (${clip(e.message)})`}.`);
      return refused(`The server refused the user name or password: check them and save again${said}.`);
    }
    if (e.code === "ETLS" || /STARTTLS/i.test(e.message)) {
      return refused(`${where} does not offer STARTTLS: pick "TLS from the start" for port 465, or ask your provider which security to use${said}.`);
    }
    if (e.code === "ESOCKET" && /wrong version number|ssl|tls|certificate|handshake/i.test(e.message)) {
      return refused(`The secure connection to ${where} failed: check the Security setting (port 465 is usually "TLS from the start", 587 "STARTTLS") (${clip(e.message)}).`);
    }
    if (e.code === "EPROTOCOL" || e.code === "EENVELOPE") return refused(`${where} does not speak SMTP as expected: check the server and port${said}.`);
    return refused(networkWords(error, config.host, config.port, "Server and Port"));
  } finally {
    transport?.close();
  }
  return ok(config.user ? `Logged in to ${where} as ${config.user}.` : `Reached ${where}; it accepted us without a login (no user name is set).`);
}

// --- HTTP APIs: model, CRM, HTTP credential. ---

interface Answer {
  status: number;
  reason: string;
  location: string | null;
  body: unknown;
}

async function call(url: string, method: "GET" | "HEAD", headers: Record<string, string>, limitMs: number, egress?: EgressOptions): Promise<Answer> {
  const doFetch = egress ? egressFetch(egress) : guardedFetch;
  // No redirects: a credential goes to the address the person typed, nowhere else.
  const res = await doFetch(url, { method, headers, redirect: "manual", signal: AbortSignal.timeout(Math.min(limitMs, timeoutMs)) });
  const text = method === "HEAD" ? "" : (await res.text()).slice(0, 64 * 1024);
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, reason: shortReason(body), location: res.headers.get("location"), body };
}

/** The provider's own short reason from an error body ({error: {message}}, {error}, {message}). */
function shortReason(body: unknown): string {
  if (typeof body === "string") return clip(body.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim());
  if (!body || typeof body !== "object") return "";
  const o = body as { error?: unknown; message?: unknown; detail?: unknown };
  const e = o.error;
  if (e && typeof e === "object" && typeof (e as { message?: unknown }).message === "string") return clip((e as { message: string }).message);
  for (const v of [e, o.message, o.detail]) if (typeof v === "string") return clip(v);
  return "";
}

const answered = (a: Answer) => ` (it answered ${a.status}${a.reason ? `: ${a.reason}` : ""})`;
const bearer = (secret: string | null): Record<string, string> => (secret ? { Authorization: `Bearer ${secret}` } : {});
const hostOf = (url: string) => new URL(url).host;

async function testModel(config: ModelConnectionConfig, key: string | null, egress?: EgressOptions): Promise<ConnectionTestResult> {
  const url = `${config.baseUrl.replace(/\/$/, "")}/models`;
  let a: Answer;
  try {
    a = await call(url, "GET", { Accept: "application/json", ...bearer(key) }, config.timeoutMs, egress);
  } catch (error) {
    return refused(networkWords(error, hostOf(url), null, "API base URL"));
  }
  if (a.status === 401 || a.status === 403) return refused(`The model's API refused the key: check the API key and save again${answered(a)}.`);
  if (a.status === 404) return refused(`${url} does not exist: check the API base URL (it usually ends in /v1)${answered(a)}.`);
  if (a.status >= 300 && a.status < 400) return refused(`${url} redirects${a.location ? ` to ${a.location}` : ""}: type the API base URL it redirects to.`);
  if (a.status === 429) return refused(`The model's API is rate-limiting this key: try again in a minute${answered(a)}.`);
  if (a.status < 200 || a.status >= 300) return refused(`The model's API answered with an error: check the API base URL, or try again later${answered(a)}.`);
  const listed = (a.body as { data?: unknown } | null)?.data;
  const ids = Array.isArray(listed) ? listed.map((m) => (m as { id?: unknown })?.id).filter((id): id is string => typeof id === "string") : null;
  if (ids && ids.length > 0 && !ids.includes(config.model)) {
    const some = ids.slice(0, 5).join(", ");
    return refused(`The key works, but "${config.model}" is not among the ${ids.length} models this key may use (${some}${ids.length > 5 ? ", ..." : ""}): check the Model.`);
  }
  return ok(`Logged in to ${hostOf(url)}: the key works${ids ? ` and "${config.model}" is available` : ""}.`);
}

async function testCrm(config: CrmConnectionConfig, token: string | null, egress?: EgressOptions): Promise<ConnectionTestResult> {
  // A read that needs the token and changes nothing: a search for an id no record has.
  const url = `${config.baseUrl.replace(/\/$/, "")}/objects/contacts/records?externalId=${encodeURIComponent("holdfast-connection-test")}`;
  let a: Answer;
  try {
    a = await call(url, "GET", { Accept: "application/json", ...bearer(token) }, config.timeoutMs, egress);
  } catch (error) {
    return refused(networkWords(error, hostOf(url), null, "API base URL"));
  }
  if (a.status === 401 || a.status === 403) return refused(`The CRM refused the API token: check it and save again${answered(a)}.`);
  if (a.status === 404) return refused(`The CRM has no records API under ${config.baseUrl}: check the API base URL${answered(a)}.`);
  if (a.status >= 300 && a.status < 400) return refused(`${config.baseUrl} redirects${a.location ? ` to ${a.location}` : ""}: type the address it redirects to.`);
  if (a.status < 200 || a.status >= 300) return refused(`The CRM answered with an error: check the API base URL, or try again later${answered(a)}.`);
  return ok(`Logged in to the CRM at ${hostOf(url)}: the API token works.`);
}

async function testHttp(config: HttpConnectionConfig, value: string, egress?: EgressOptions): Promise<ConnectionTestResult> {
  if (!config.baseUrl) return refused("Nothing to test: this connection has no base URL. Add the API's base URL to test the credential, or save it as it is.");
  const headers = { [config.header]: value };
  let a: Answer;
  try {
    a = await call(config.baseUrl, "HEAD", headers, timeoutMs, egress);
    // Some APIs answer HEAD with 405 or 501: ask with GET.
    if (a.status === 405 || a.status === 501) a = await call(config.baseUrl, "GET", headers, timeoutMs, egress);
  } catch (error) {
    return refused(networkWords(error, hostOf(config.baseUrl), null, "Base URL"));
  }
  const host = hostOf(config.baseUrl);
  if (a.status === 401 || a.status === 403) return refused(`${host} refused the credential: check the ${config.header} header's value and save again${answered(a)}.`);
  if (a.status >= 500) return refused(`${host} answered with an error: try again later${answered(a)}.`);
  if (a.status >= 300 && a.status < 400) return ok(`Reached ${host}; it redirects${a.location ? ` to ${a.location}` : ""} and did not refuse the credential.`);
  if (a.status >= 400) return ok(`Reached ${host}; it answered ${a.status} at the base URL and did not refuse the credential.`);
  return ok(`Reached ${host} with the ${config.header} header: it answered ${a.status}.`);
}

// --- Slack: auth.test with the bot token. ---

const slackAuthErrors = new Set(["invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive", "no_permission", "missing_scope"]);

async function testSlack(config: SlackConnectionConfig, token: string, egress?: EgressOptions): Promise<ConnectionTestResult> {
  const client = await slackClient(token, config.apiUrl, timeoutMs, egress);
  let res: { team?: string; team_id?: string; user?: string };
  try {
    res = await client.auth.test();
  } catch (error) {
    const guard = egressRefusalOf(error);
    if (guard) return refused(egressWords(guard));
    const e = error as { code?: string; data?: { error?: string }; statusCode?: number; original?: unknown; message?: string };
    const slackError = e.data?.error;
    if (slackError && slackAuthErrors.has(slackError)) {
      return refused(`Slack refused the bot token: check it (it starts with xoxb-) and save again (Slack said: ${slackError}).`);
    }
    if (slackError) return refused(`Slack answered with an error: check the bot token and the Slack API address (Slack said: ${slackError}).`);
    if (e.code === "slack_webapi_rate_limited_error") return refused("Slack is rate-limiting this token: try again in a minute.");
    if (e.code === "slack_webapi_http_error") return refused(`The Slack API address answered ${e.statusCode ?? "an error"}: check the Slack API address.`);
    return refused(networkWords(e.original ?? error, hostOf(config.apiUrl), null, "Slack API address"));
  }
  const team = res.team ? `"${res.team}"` : "the workspace";
  if (res.team_id && res.team_id !== config.teamId) {
    return refused(`The token works, but it belongs to ${team} (${res.team_id}), not ${config.teamId}: type ${res.team_id} as the Workspace ID.`);
  }
  return ok(`Logged in to Slack workspace ${team}${res.user ? ` as ${res.user}` : ""}.`);
}

// --- Words for what went wrong on the way. ---

function egressWords(e: EgressRefusedError): string {
  return `Holdfast does not connect to ${e.host}: ${e.reason}. Use the service's public address (an operator can allow others).`;
}

/** The code of the error behind an error (fetch wraps the socket's in `cause`). */
function codeOf(error: unknown): { code: string | undefined; name: string | undefined; message: string } {
  let e: unknown = error;
  let first: { code?: string; name?: string; message?: string } | undefined;
  for (let i = 0; i < 5 && e && typeof e === "object"; i++) {
    const o = e as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    first ??= { message: typeof o.message === "string" ? o.message : String(e) };
    if (typeof o.code === "string") return { code: o.code, name: typeof o.name === "string" ? o.name : undefined, message: typeof o.message === "string" ? o.message : first.message ?? "" };
    if (o.name === "TimeoutError" || o.name === "AbortError") return { code: "ETIMEDOUT", name: o.name, message: String(o.message ?? "") };
    e = o.cause;
  }
  return { code: undefined, name: undefined, message: first?.message ?? String(error) };
}

function networkWords(error: unknown, host: string, port: number | null, fields: string): string {
  const found = codeOf(error);
  const { message } = found;
  // nodemailer's codes are its own (ECONNECTION, ESOCKET); the socket's is in its message.
  const code = found.code === "ECONNECTION" || found.code === "ESOCKET" ? (/\b(E[A-Z_]{3,})\b/.exec(message)?.[1] ?? found.code) : found.code;
  const where = port ? `${host}:${port}` : host;
  switch (code) {
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EDNS":
      return `The name ${host} could not be found: check the ${fields} for typos.`;
    case "ECONNREFUSED":
      return `${where} refused the connection: check the ${fields} (is the port right, is the server up?).`;
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
    case "UND_ERR_HEADERS_TIMEOUT":
    case "ESOCKETTIMEDOUT":
      return `${where} did not answer within ${timeoutMs / 1000} seconds: check the ${fields}, and that the server can be reached from the internet.`;
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
    case "EPIPE":
      return `${where} closed the connection: check the ${fields}${port ? " and the Security setting" : ""} (${clip(message)}).`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${where} cannot be reached from here: check the ${fields}.`;
    default:
      if (code && /CERT|SSL|TLS|EPROTO/i.test(code)) return `The secure connection to ${where} failed: its certificate or TLS setup is not accepted (${code}). Check the ${fields}.`;
      return `Could not reach ${where}: check the ${fields} (${clip(message)}).`;
  }
}

function clip(text: string, max = 160): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}
