import { egressAgentFor } from "../net/agent";
import type { EgressOptions } from "../net/egress";

/** Bolt's Web API client type (Bolt itself is imported only when a client is made). */
export type WebClient = InstanceType<Awaited<typeof import("@slack/bolt")>["webApi"]["WebClient"]>;

/**
 * Bolt's Web API client, loaded on first use (Bolt is heavy; processes that never post to Slack never load it). Its
 * axios requests go through the egress guard's agent (the API URL is a connection setting an organisation chooses).
 */
export async function slackClient(token: string, apiUrl: string, timeoutMs = 10_000, egress?: EgressOptions): Promise<WebClient> {
  const { webApi } = await import("@slack/bolt");
  return new webApi.WebClient(token, {
    slackApiUrl: apiUrl,
    agent: egress ? egressAgentFor(apiUrl, {}, egress) : slackAgent(apiUrl),
    // Retries are ours (the lease and the sweeper), each one after a lookup, so the client never repeats a post.
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: timeoutMs,
    logLevel: webApi.LogLevel.ERROR,
  });
}

const slackAgents = new Map<string, ReturnType<typeof egressAgentFor>>();
/** One guarded agent per protocol for the process (axios needs the agent of the URL's protocol). */
const slackAgent = (apiUrl: string) => {
  const protocol = new URL(apiUrl).protocol;
  let agent = slackAgents.get(protocol);
  if (!agent) slackAgents.set(protocol, (agent = egressAgentFor(apiUrl)));
  return agent;
};
