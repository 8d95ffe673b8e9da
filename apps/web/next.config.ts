import type { NextConfig } from "next";
import { securityHeaders } from "./src/server/security-headers";

const config: NextConfig = {
  // Workspace packages export their TypeScript source, so Next compiles them like app code.
  transpilePackages: ["@holdfast/core", "@holdfast/db", "@holdfast/queue"],
  // Node-only libraries (native bindings, worker threads, dynamic requires) load from node_modules at run time.
  serverExternalPackages: ["pg", "pino", "@prisma/adapter-pg", "@prisma/client", "bullmq", "ioredis", "@slack/bolt", "prom-client"],
  poweredByHeader: false,
  experimental: {
    // The app's server actions post a few small form fields (a decision, a note): refuse anything bigger early.
    serverActions: { bodySizeLimit: "64kb" },
    // The proxy (src/proxy.ts: the pages' CSP) makes Next copy a page request's body to let both read it: no more
    // than a server action may post.
    proxyClientMaxBodySize: "64kb",
    // Turbopack's build cache (.next/cache) speeds up the next build on the same machine; CI builds once on a fresh
    // clone and throws it away, so there it is not written (about 18 s of a 80 s build on two cores).
    turbopackFileSystemCacheForBuild: !process.env.CI,
  },
  // Every answer (src/server/security-headers.ts says which and why).
  headers: async () => [{ source: "/:path*", headers: Object.entries(securityHeaders).map(([key, value]) => ({ key, value })) }],
};

export default config;
