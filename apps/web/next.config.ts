import type { NextConfig } from "next";

const config: NextConfig = {
  // Server code reaches Postgres (and, through @prim/db, the engine's native SQLite binding):
  // loaded by Node at run time, never bundled.
  serverExternalPackages: ["@prim/db", "@prim/engine", "@prim/wire", "pg", "better-sqlite3", "@prisma/adapter-pg"],
  poweredByHeader: false,
  // `npm run typecheck` checks apps/web (tsc, the same options); the build does not check again
  // (it took 28 s of `npm ci`'s build, measured in issue 36).
  typescript: { ignoreBuildErrors: true },
  reactStrictMode: true,
};

export default config;
