// A no-op HTTP endpoint in its own process: answers 200 at once and counts calls per Idempotency-Key so the
// benchmark can check afterwards that no effect was lost or sent twice. GET /stats returns the counts.
import { createServer } from "node:http";

const calls = new Map<string, number>();
const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    let repeated = 0;
    for (const n of calls.values()) if (n > 1) repeated++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys: calls.size, repeated, total: [...calls.values()].reduce((a, b) => a + b, 0) }));
    return;
  }
  if (req.method === "POST" && req.url === "/reset") {
    calls.clear();
    res.end("{}");
    return;
  }
  req.resume();
  req.on("end", () => {
    const key = String(req.headers["idempotency-key"] ?? "");
    calls.set(key, (calls.get(key) ?? 0) + 1);
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : ""}\n`);
});
