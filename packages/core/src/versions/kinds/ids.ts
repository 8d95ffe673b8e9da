import { z } from "zod";

/** A node id: a stable, human-readable slug; it names steps in the database and in migrations, so it never changes once published. */
export const nodeId = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,62}$/, "node ids are lowercase slugs: a letter, then letters, digits or _");
