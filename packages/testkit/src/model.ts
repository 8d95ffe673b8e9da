import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real OpenAI-compatible chat-completions endpoint on 127.0.0.1 (`POST /v1/chat/completions`): it answers with a
 * draft built from the prompt and honest `usage` token counts (4 characters a token), after `delayMs`. It counts
 * calls and the most in flight, and can fail the next calls with a status.
 */
export interface ModelTarget {
  baseUrl: string;
  calls: number;
  prompts: string[];
  maxInFlight(): number;
  behave(b: Partial<{ delayMs: number; failNext: number; failStatus: number }>): void;
  close(): Promise<void>;
}

export async function startModelTarget(apiKey = "sk-test"): Promise<ModelTarget> {
  let behaviour = { delayMs: 0, failNext: 0, failStatus: 500 };
  let inFlight = 0;
  let maxInFlight = 0;
  const target: ModelTarget = {
    baseUrl: "",
    calls: 0,
    prompts: [],
    maxInFlight: () => maxInFlight,
    behave(b) {
      behaviour = { ...behaviour, ...b };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer(async (req, res) => {
    const body = await new Promise<string>((resolve) => {
      let data = "";
      req.on("data", (c) => (data += c));
      req.on("end", () => resolve(data));
    });
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (req.headers.authorization !== `Bearer ${apiKey}`) return send(401, { error: { message: "invalid api key" } });
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") return send(404, { error: { message: "not found" } });
    target.calls++;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
      if (behaviour.failNext > 0) {
        behaviour.failNext--;
        return send(behaviour.failStatus, { error: { message: "model overloaded" } });
      }
      const request = JSON.parse(body) as { model: string; max_tokens?: number; messages: { role: string; content: string }[] };
      const prompt = request.messages.map((m) => m.content).join("\n");
      target.prompts.push(prompt);
      const content = `Draft: ${request.messages.at(-1)?.content ?? ""}`.slice(0, (request.max_tokens ?? 800) * 4);
      send(200, {
        id: `chatcmpl-${target.calls}`,
        object: "chat.completion",
        model: request.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: Math.ceil(content.length / 4) },
      });
    } finally {
      inFlight--;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  target.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return target;
}
