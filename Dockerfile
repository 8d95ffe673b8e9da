# One image for every Holdfast process; docker-compose.yml starts each as a command of it (docs/operations.md
# "Deploying with Docker"). The build steps are the README's install steps (e2e/compose-services.test.ts compares
# them): pnpm 12 from npm, the locked dependencies, then `pnpm build` (the Prisma client, each background app compiled
# to apps/<app>/dist/main.mjs, `next build`). The dependencies stay whole: the CLI (`pnpm holdfast`, the migrate
# service) runs its TypeScript through tsx.
FROM node:24-bookworm-slim

WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1
RUN npm install -g pnpm@12
COPY . .
RUN pnpm install --frozen-lockfile
RUN pnpm build
# The code stays root's: the processes (user node) can write only the web's cache, never the code they run.
RUN mkdir -p apps/web/.next/cache && chown -R node:node apps/web/.next/cache
USER node

# The processes run as the unprivileged node user, in production mode; nothing here holds a secret (docker-compose.yml
# passes the key and the passwords from the operator's .env).
ENV NODE_ENV=production
EXPOSE 3000
CMD ["pnpm", "--filter", "@holdfast/web", "start"]
