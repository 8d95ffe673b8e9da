import type { EgressOptions } from "../net/egress";
import { egressFetch, guardedFetch } from "../net/fetch";

/** Bolt's Web API client type (Bolt itself is imported only when a client is made). */
export type WebClient = InstanceType<Awaited<typeof import("@slack/bolt")>["webApi"]["WebClient"]>;
type SlackFetch = NonNullable<ConstructorParameters<Awaited<typeof import("@slack/bolt")>["webApi"]["WebClient"]>[1]>["fetch"];

/**
 * Bolt's Web API client, loaded on first use (Bolt is heavy; processes that never post to Slack never load it). Its
 * requests go through the egress guard: the client's `fetch` is the guarded one (an undici dispatcher that checks
 * every address it connects to), since the API URL is a connection setting an organisation chooses.
 */
export async function slackClient(token: string, apiUrl: string, timeoutMs = 10_000, egress?: EgressOptions): Promise<WebClient> {
  const { webApi } = await import("@slack/bolt");
  return new webApi.WebClient(token, {
    slackApiUrl: apiUrl,
    fetch: (egress ? egressFetch(egress) : guardedFetch) as unknown as SlackFetch,
    // Retries are ours (the lease and the sweeper), each one after a lookup, so the client never repeats a post.
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: timeoutMs,
    logLevel: webApi.LogLevel.ERROR,
  });
}
