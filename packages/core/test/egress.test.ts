import { once } from "node:events";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createTestDatabase, publish, type SmtpTarget, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slackClient } from "../src/people/approvals/notify";
import { lanes } from "../src/base/catalog";
import { createConnection } from "../src/providers/connections/connect";
import { performHttpRequest } from "../src/providers/effects/http-request";
import { performSendEmail, type SmtpConnectionConfig } from "../src/providers/effects/send-email";
import { advanceRun } from "../src/run/engine/advance";
import { baseEnv, egressAllowFromEnv } from "../src/base/env";
import { createLogger } from "../src/base/log";
import { classifyAddress } from "../src/providers/net/address";
import { type AllowList, parseAllowList } from "../src/base/allow-list";
import { EgressRefusedError, egressRefusalOf, literalUrlRefusal, type LookupAll, normalizeHost, resolveEgress } from "../src/providers/net/egress";
import { egressFetch } from "../src/providers/net/fetch";
import { egressSmtpTransport } from "../src/providers/net/smtp";
import { startRun } from "../src/run/start/start-run";
import { StepRunner } from "../src/run/steps/runner";
import { draftProblems } from "../src/run/automations/drafts";
import { GraphCache } from "../src/versions/graph-cache";
import { parseGraph } from "../src/versions/graph";

const none: AllowList = [];

/** Rejects with an EgressRefusedError (or an error wrapping one) and returns it. */
async function refusal(p: Promise<unknown>): Promise<EgressRefusedError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  const refused = egressRefusalOf(error);
  if (!refused) throw new Error(`expected an egress refusal, got ${String(error)}`);
  return refused;
}

describe("address classification", () => {
  // [spelling in a URL, the address it is, the words of its reason]
  const refusedUrls: [string, string, string][] = [
    ["http://127.0.0.1/", "127.0.0.1", "a loopback address"],
    ["http://2130706433/", "127.0.0.1", "a loopback address"],
    ["http://0x7f.0.0.1/", "127.0.0.1", "a loopback address"],
    ["http://0x7f000001/", "127.0.0.1", "a loopback address"],
    ["http://0177.0.0.1/", "127.0.0.1", "a loopback address"],
    ["http://127.1/", "127.0.0.1", "a loopback address"],
    ["http://127.0.1/", "127.0.0.1", "a loopback address"],
    ["http://127.255.255.254/", "127.255.255.254", "a loopback address"],
    ["http://[::1]/", "::1", "a loopback address"],
    ["http://[0:0:0:0:0:0:0:1]/", "::1", "a loopback address"],
    ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1", "an IPv4-mapped form of 127.0.0.1, a loopback address"],
    ["http://[::ffff:7f00:1]/", "::ffff:7f00:1", "an IPv4-mapped form of 127.0.0.1, a loopback address"],
    ["http://[::ffff:a9fe:a9fe]/", "::ffff:a9fe:a9fe", "an IPv4-mapped form of 169.254.169.254, a link-local address (cloud metadata)"],
    ["http://[::ffff:0:7f00:1]/", "::ffff:0:7f00:1", "an IPv4-translated form of 127.0.0.1, a loopback address"],
    ["http://[::127.0.0.1]/", "::7f00:1", "an IPv4-compatible form of 127.0.0.1, a loopback address"],
    ["http://[64:ff9b::a00:1]/", "64:ff9b::a00:1", "a NAT64 form of 10.0.0.1, a private address (RFC 1918)"],
    // The local-use NAT64 prefix in its /48 layout: 169.254.169.254 split around byte 8.
    ["http://[64:ff9b:1:a9fe:a9:fe00:808:808]/", "64:ff9b:1:a9fe:a9:fe00:808:808", "a local-use NAT64 address (it may translate to any IPv4 address)"],
    ["http://[2002:7f00:1::1]/", "2002:7f00:1::1", "a 6to4 form of 127.0.0.1, a loopback address"],
    ["http://[2002:c0a8:101::]/", "2002:c0a8:101::", "a 6to4 form of 192.168.1.1, a private address (RFC 1918)"],
    // Teredo: server 65.54.227.120, client 127.0.0.1 inverted (80ff:fffe).
    ["http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "2001:0:4136:e378:8000:63bf:80ff:fffe", "a Teredo form of 127.0.0.1, a loopback address"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254", "a link-local address (cloud metadata)"],
    ["http://2852039166/", "169.254.169.254", "a link-local address (cloud metadata)"],
    ["http://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254", "a link-local address (cloud metadata)"],
    ["http://169.254.1.1/", "169.254.1.1", "a link-local address"],
    ["http://10.0.0.1/", "10.0.0.1", "a private address (RFC 1918)"],
    ["http://012.0.0.1/", "10.0.0.1", "a private address (RFC 1918)"],
    ["http://172.16.0.1/", "172.16.0.1", "a private address (RFC 1918)"],
    ["http://172.31.255.255/", "172.31.255.255", "a private address (RFC 1918)"],
    ["http://192.168.1.1/", "192.168.1.1", "a private address (RFC 1918)"],
    ["http://3232235777/", "192.168.1.1", "a private address (RFC 1918)"],
    ["http://100.64.0.1/", "100.64.0.1", "a carrier-grade NAT address (100.64.0.0/10)"],
    ["http://100.100.100.200/", "100.100.100.200", "a carrier-grade NAT address (100.64.0.0/10)"],
    ["http://0.0.0.0/", "0.0.0.0", "an unspecified address (0.0.0.0/8)"],
    ["http://0/", "0.0.0.0", "an unspecified address (0.0.0.0/8)"],
    ["http://[::]/", "::", "the unspecified address (::)"],
    ["http://255.255.255.255/", "255.255.255.255", "the broadcast address"],
    ["http://224.0.0.1/", "224.0.0.1", "a multicast address"],
    ["http://[ff02::1]/", "ff02::1", "a multicast address"],
    ["http://240.0.0.1/", "240.0.0.1", "a reserved address"],
    ["http://192.0.2.1/", "192.0.2.1", "a reserved address"],
    ["http://[fc00::1]/", "fc00::1", "a unique local address (fc00::/7)"],
    ["http://[fd12:3456::1]/", "fd12:3456::1", "a unique local address (fc00::/7)"],
    ["http://[fd00:ec2::254]/", "fd00:ec2::254", "a unique local address (fc00::/7) (cloud metadata)"],
    ["http://[fe80::1]/", "fe80::1", "a link-local address (fe80::/10)"],
    ["http://[fec0::1]/", "fec0::1", "a site-local address (fec0::/10)"],
    ["http://[2001:db8::1]/", "2001:db8::1", "a reserved address"],
  ];

  it.each(refusedUrls)("%s is %s, refused as %s", async (url, address, what) => {
    const hostname = new URL(url).hostname;
    const host = normalizeHost(hostname);
    expect(host).toBe(address);
    expect(classifyAddress(address)).toEqual(expect.objectContaining({ allowed: false, what, reason: `${address} is ${what}` }));
    const refused = await refusal(resolveEgress(hostname, 80, { allow: none }));
    expect(refused).toBeInstanceOf(EgressRefusedError);
    expect(refused.code).toBe("egress_refused");
    expect(refused.reason).toBe(what);
    const shown = address.includes(":") ? `[${address}]` : address;
    expect(refused.message).toBe(`refused to connect to ${shown}: ${what}; set HOLDFAST_EGRESS_ALLOW to allow it`);
    // The same destination is refused at publish, before anything is resolved.
    expect(literalUrlRefusal(url, none)?.reason).toBe(what);
  });

  it("bare hosts (an SMTP host) are read the way a URL reads them", async () => {
    for (const spelling of ["2130706433", "0x7f.0.0.1", "0x7f.1", "0177.0.0.1", "127.1", "127.0.0.1.", "[::ffff:127.0.0.1]", "::ffff:7f00:1", "::1"]) {
      const refused = await refusal(resolveEgress(spelling, 25, { allow: none }));
      expect(refused.reason, spelling).toMatch(/loopback address$/);
    }
    expect(normalizeHost("LOCALHOST.")).toBe("localhost");
    // Not a host: refused, never handed to a resolver that might read it differently.
    for (const bad of ["user@127.0.0.1", "127.0.0.1/x", "a b", "evil.com#@127.0.0.1", ""]) {
      expect(normalizeHost(bad), bad).toBeNull();
      expect((await refusal(resolveEgress(bad, 25, { allow: none }))).reason).toBe("not a valid host name");
    }
  });

  it("plain public unicast is allowed, in every spelling", async () => {
    for (const host of ["8.8.8.8", "134744072", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "[2a00:1450:4001::200e]", "::ffff:8.8.8.8"]) {
      await expect(resolveEgress(host, 443, { allow: none }), host).resolves.toEqual(expect.objectContaining({ literal: true }));
    }
    expect(classifyAddress("172.32.0.1")).toEqual({ allowed: true, address: "172.32.0.1" });
    expect(classifyAddress("100.128.0.1")).toEqual({ allowed: true, address: "100.128.0.1" });
  });
});

describe("names that resolve to refused addresses", () => {
  it("localhost, through the system resolver", async () => {
    const refused = await refusal(resolveEgress("localhost", 80, { allow: none }));
    expect(refused.message).toMatch(/^refused to connect to localhost: it resolves to a loopback address/);
  });

  it("any name, through the resolver it is given; every candidate is checked, the first allowed one is used", async () => {
    const lookups: string[] = [];
    const resolver =
      (answers: Record<string, string[]>): LookupAll =>
      async (host) => {
        lookups.push(host);
        return (answers[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
      };
    const lookup = resolver({
      "app.localhost": ["127.0.0.1"],
      "metadata.google.internal": ["169.254.169.254"],
      "intranet.example": ["10.0.0.5", "fd00::5"],
      "mixed.example": ["10.0.0.5", "93.184.216.34"],
    });
    expect((await refusal(resolveEgress("app.localhost", 80, { allow: none, lookup }))).reason).toBe("it resolves to a loopback address");
    expect((await refusal(resolveEgress("metadata.google.internal", 80, { allow: none, lookup }))).message).toBe(
      "refused to connect to metadata.google.internal: it resolves to a link-local address (cloud metadata); set HOLDFAST_EGRESS_ALLOW to allow it",
    );
    expect((await refusal(resolveEgress("intranet.example", 80, { allow: none, lookup }))).reason).toBe(
      "it resolves to a private address (RFC 1918) (and 1 more refused address)",
    );
    lookups.length = 0;
    await expect(resolveEgress("mixed.example", 443, { allow: none, lookup })).resolves.toEqual({
      host: "mixed.example",
      address: "93.184.216.34",
      family: 4,
      port: 443,
      literal: false,
    });
    expect(lookups).toEqual(["mixed.example"]);
  });
});

describe("HOLDFAST_EGRESS_ALLOW", () => {
  it("opens hosts, addresses and ranges, each with or without a port", async () => {
    const allow = parseAllowList(" crm.internal , 10.1.2.3:8443, 192.168.0.0/16, [::1]:25, fd00::/8, [fe80::/10]:80, 127.1:2525 ");
    const lookup: LookupAll = async () => [{ address: "10.9.9.9", family: 4 }];
    await expect(resolveEgress("CRM.internal", 443, { allow, lookup })).resolves.toEqual(expect.objectContaining({ address: "10.9.9.9" }));
    await expect(resolveEgress("10.1.2.3", 8443, { allow })).resolves.toBeTruthy();
    await refusal(resolveEgress("10.1.2.3", 443, { allow }));
    await expect(resolveEgress("192.168.44.1", 80, { allow })).resolves.toBeTruthy();
    await expect(resolveEgress("[::1]", 25, { allow })).resolves.toBeTruthy();
    await refusal(resolveEgress("::1", 26, { allow }));
    await expect(resolveEgress("fd12::1", 1, { allow })).resolves.toBeTruthy();
    await expect(resolveEgress("fe80::1", 80, { allow })).resolves.toBeTruthy();
    await refusal(resolveEgress("fe80::1", 81, { allow }));
    // "127.1" is the address it spells; an IPv4 entry also opens its IPv4-mapped form.
    await expect(resolveEgress("127.0.0.1", 2525, { allow })).resolves.toBeTruthy();
    await expect(resolveEgress("[::ffff:127.0.0.1]", 2525, { allow })).resolves.toBeTruthy();
    await refusal(resolveEgress("127.0.0.2", 2525, { allow }));
    // A name entry opens the name, not the address it happens to resolve to.
    await refusal(resolveEgress("other.internal", 443, { allow, lookup }));
  });

  it("is validated with the environment, with a readable message per bad entry", () => {
    expect(baseEnv.parse({}).HOLDFAST_EGRESS_ALLOW).toEqual([]);
    expect(baseEnv.parse({ HOLDFAST_EGRESS_ALLOW: "127.0.0.1:2525,localhost" }).HOLDFAST_EGRESS_ALLOW).toHaveLength(2);
    const parsed = baseEnv.safeParse({ HOLDFAST_EGRESS_ALLOW: "ok.example, 10.0.0.0/33, host:99999, a b, [example.com]:1" });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.message)).toEqual([
      '"10.0.0.0/33" is not a host, IP address or CIDR range with an optional :port (an invalid CIDR range)',
      '"host:99999" is not a host, IP address or CIDR range with an optional :port (the port must be 1-65535)',
      '"a b" is not a host, IP address or CIDR range with an optional :port (an invalid host name)',
      '"[example.com]:1" is not a host, IP address or CIDR range with an optional :port (only IPv6 addresses go in brackets)',
    ]);
    expect(() => egressAllowFromEnv({ HOLDFAST_EGRESS_ALLOW: "1.2.3.4:0" })).toThrow(/^HOLDFAST_EGRESS_ALLOW: "1.2.3.4:0" is not/);
    // The tests' own exception (vitest.config.ts) is what the module default reads.
    expect(egressAllowFromEnv().map((e) => e.text)).toEqual(["127.0.0.1", "::1", "localhost"]);
  });
});

/** A listener on a refused address that counts the connections it receives and answers like Slack's API. */
async function countingListener(host = "127.0.0.1"): Promise<{ server: Server; port: number; url: string; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server = createHttpServer((req, res) => {
    if (req.url === "/redirect") {
      res.writeHead(302, { location: String(req.headers["x-redirect-to"]) }).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, channel: "C1", ts: "1.000100" }));
  });
  server.on("connection", () => connections++);
  server.listen(0, host);
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://${host}:${port}/`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("every transport, pointed at a listener on a refused address", () => {
  let target: Awaited<ReturnType<typeof countingListener>>;
  let smtp: SmtpTarget;
  beforeAll(async () => {
    target = await countingListener();
    smtp = await startSmtpTarget();
  });
  afterAll(async () => {
    await target?.close();
    await smtp?.close();
  });

  const httpCall = (url: string, allow: AllowList) =>
    performHttpRequest({
      config: { url, method: "POST", headers: {}, body: { hi: 1 }, sendInput: false, timeoutMs: 5_000, idempotent: true },
      idempotencyKey: "k1",
      runId: "run_1",
      input: null,
      signal: AbortSignal.timeout(10_000),
      egress: { allow },
    });
  const smtpConfig = (host: string, port: number): SmtpConnectionConfig => ({
    host,
    port,
    tls: "none",
    from: "Holdfast <flows@holdfast.test>",
    dedupesMessageId: false,
    timeoutMs: 5_000,
  });
  const email = (host: string, port: number, allow: AllowList) =>
    performSendEmail({
      config: smtpConfig(host, port),
      password: null,
      message: { to: "ada@example.com", subject: "hello", text: "hi" },
      idempotencyKey: "k2",
      runId: "run_1",
      egress: { allow },
    });

  it("receives no connection with the allow list empty", async () => {
    const { port } = target;
    const spellings = [
      `http://127.0.0.1:${port}/`,
      `http://2130706433:${port}/`,
      `http://0x7f.0.0.1:${port}/`,
      `http://0177.0.0.1:${port}/`,
      `http://127.1:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`,
      `http://localhost:${port}/`,
    ];
    for (const url of spellings) {
      // http_request (node:http over the guarded agents): a permanent failure that names the host and the reason.
      const outcome = await httpCall(url, none);
      expect(outcome, url).toEqual({
        kind: "fail",
        error: expect.objectContaining({ code: "egress_refused", permanent: true, notPerformed: true, message: expect.stringMatching(/^refused to connect to .+: .*loopback address; set HOLDFAST_EGRESS_ALLOW to allow it$/) }),
      });
      // fetch: the refusal is the cause of fetch's TypeError.
      const fetchError = await egressFetch({ allow: none })(url).then(
        () => null,
        (e: Error) => e,
      );
      expect(fetchError, url).toBeInstanceOf(TypeError);
      expect(egressRefusalOf(fetchError)?.reason, url).toMatch(/loopback/);
      // Slack's WebClient (axios over the guarded agent).
      const client = await slackClient("xoxb-test", `${url}api/`, 3_000, { allow: none });
      const slackError = await client.chat.postMessage({ channel: "C1", text: "hi" }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(egressRefusalOf(slackError)?.reason, url).toMatch(/loopback/);
    }
    // SMTP, in the bare-host spellings a connection's config has.
    for (const host of ["127.0.0.1", "2130706433", "0x7f.1", "0177.0.0.1", "127.1", "::ffff:127.0.0.1", "localhost"]) {
      const outcome = await email(host, port, none);
      expect(outcome, host).toEqual({ kind: "fail", error: expect.objectContaining({ code: "egress_refused", permanent: true, message: expect.stringMatching(/loopback address/) }) });
      await refusal(egressSmtpTransport({ host, port }, { allow: none }));
    }
    expect(target.connections()).toBe(0);
    expect(smtp.received).toHaveLength(0);
  });

  it("a redirect to a refused address is refused when fetch follows it", async () => {
    const front = await countingListener();
    try {
      const fetch = egressFetch({ allow: parseAllowList(`127.0.0.1:${front.port}`) });
      const error = await fetch(`${front.url}redirect`, { headers: { "x-redirect-to": target.url } }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(egressRefusalOf(error)?.message).toBe("refused to connect to 127.0.0.1: a loopback address; set HOLDFAST_EGRESS_ALLOW to allow it");
      expect(front.connections()).toBe(1);
      expect(target.connections()).toBe(0);
    } finally {
      await front.close();
    }
  });

  it("goes through when 127.0.0.1:<port> is allowed", async () => {
    const allow = parseAllowList(`127.0.0.1:${target.port}`);
    const before = target.connections();
    expect(await httpCall(target.url, allow)).toEqual(expect.objectContaining({ kind: "done", output: expect.objectContaining({ status: 200 }) }));
    expect(await httpCall(`http://2130706433:${target.port}/`, allow)).toEqual(expect.objectContaining({ kind: "done" }));
    expect((await egressFetch({ allow })(target.url)).status).toBe(200);
    const client = await slackClient("xoxb-test", `${target.url}api/`, 3_000, { allow });
    expect(await client.chat.postMessage({ channel: "C1", text: "hi" })).toEqual(expect.objectContaining({ ok: true, ts: "1.000100" }));
    expect(target.connections()).toBe(before + 4);
    // The port matters: the same address on another port stays refused.
    expect((await refusal(egressFetch({ allow })(`http://127.0.0.1:${target.port + 1}/`))).reason).toBe("a loopback address");

    expect(await email("127.0.0.1", smtp.port, parseAllowList(`127.0.0.1:${smtp.port}`))).toEqual(expect.objectContaining({ kind: "done" }));
    // A name entry: nodemailer is given the checked address, not the name to resolve again.
    expect(await email("localhost", smtp.port, parseAllowList(`localhost:${smtp.port}`))).toEqual(expect.objectContaining({ kind: "done" }));
    expect(smtp.received).toHaveLength(2);
  });
});

describe("the http_request step and publishing", () => {
  let t: TestDatabase;
  let refused: Awaited<ReturnType<typeof countingListener>>;
  const graphs = new GraphCache();
  const log = createLogger("test", "silent");
  const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

  beforeAll(async () => {
    t = await createTestDatabase();
    // 127.0.0.2 is loopback too, and not in the tests' exception (which names 127.0.0.1 only).
    refused = await countingListener("127.0.0.2");
  });
  afterAll(async () => {
    await refused?.close();
    await t?.drop();
  });

  it("fails permanently after one attempt, naming the host and the reason, with no connection made", async () => {
    await publish(
      t.db,
      parseGraph({
        nodes: [
          { id: "t", kind: "trigger", config: { eventIdField: "id" } },
          { id: "call", kind: "http_request", config: { url: `${refused.url}hook`, maxAttempts: 5 } },
          { id: "e", kind: "end" },
        ],
        edges: [
          { from: "t", to: "call" },
          { from: "call", to: "e" },
        ],
      }),
      { automation: "ssrf" },
    );
    const { runId } = await startRun(t.db, {
      orgSlug: "acme",
      automationSlug: "ssrf",
      rawBody: "{}",
      body: { id: "e1" },
      headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
      via: "test",
      auth: { kind: "operator" },
    });
    const [{ org_id: orgId }] = await rows("SELECT org_id FROM runs WHERE id = $1", [runId]);
    await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
    const [{ id: stepId }] = await rows("SELECT id FROM steps WHERE run_id = $1", [runId]);
    const runner = new StepRunner({ db: t.db, graphs, worker: "w", lane: { ...lanes.io, leaseMs: 2_000, heartbeatMs: 600 }, log });
    expect((await runner.run(stepId)).kind).toBe("failed");
    const [step] = await rows("SELECT status, attempt, error FROM steps WHERE id = $1", [stepId]);
    expect(step).toEqual({
      status: "failed",
      attempt: 1,
      error: expect.objectContaining({
        code: "egress_refused",
        message: "refused to connect to 127.0.0.2: a loopback address; set HOLDFAST_EGRESS_ALLOW to allow it",
        host: "127.0.0.2",
        permanent: true,
      }),
    });
    // Nothing left to retry: a second run of the runner finds no claimable step.
    expect((await runner.run(stepId)).kind).toBe("not_claimable");
    expect(refused.connections()).toBe(0);
  });

  it("a literal URL in a refused range is refused at publish, naming the node and the field", () => {
    const graph = (url: string) => ({
      nodes: [
        { id: "t", kind: "trigger" },
        { id: "steal_keys", kind: "http_request", config: { url } },
        { id: "templated", kind: "http_request", config: { url: "https://example.com/{{input.path}}" } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "steal_keys" },
        { from: "steal_keys", to: "templated" },
        { from: "templated", to: "e" },
      ],
    });
    expect(draftProblems(graph("http://169.254.169.254/latest/meta-data/"), none)).toEqual([
      {
        path: "node:steal_keys.config.url",
        message: "the egress guard refuses 169.254.169.254: a link-local address (cloud metadata) (set HOLDFAST_EGRESS_ALLOW to allow it)",
      },
    ]);
    expect(draftProblems(graph("http://0x7f.1:5432/"), none)).toEqual([expect.objectContaining({ path: "node:steal_keys.config.url", message: expect.stringMatching(/127\.0\.0\.1: a loopback address/) })]);
    expect(draftProblems(graph("http://localhost:6379/"), none)).toEqual([expect.objectContaining({ message: expect.stringMatching(/localhost: a loopback name/) })]);
    expect(draftProblems(graph("https://example.com/hook"), none)).toEqual([]);
    // The tests' exception (127.0.0.1) is the default allow list.
    expect(draftProblems(graph("http://127.0.0.1:9/x"))).toEqual([]);
  });

  it("a connection whose literal host is refused is not created", async () => {
    const create = (config: Record<string, unknown>, kind: "smtp" | "crm" = "smtp") =>
      createConnection(t.db, { orgId: "org_none", kind, name: "c", config, secret: null });
    await expect(create({ host: "10.0.0.25", port: 25, from: "a@b.c" })).rejects.toThrow(
      "refused to connect to 10.0.0.25: a private address (RFC 1918); set HOLDFAST_EGRESS_ALLOW to allow it",
    );
    await expect(create({ baseUrl: "http://[::ffff:169.254.169.254]/v1" }, "crm")).rejects.toThrow(/IPv4-mapped form of 169\.254\.169\.254, a link-local address \(cloud metadata\)/);
  });
});
