import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Projects per DESIGN.md §11: unit (no I/O), integration (real databases: SQLite always,
// MariaDB too when TEST_MYSQL_URL is set), contract (spec <-> handlers, Prism); and the client
// packages' own suites: sdk (injected fetch, the real server, Prism) and cli (in-process and as a
// subprocess against the real server); and e2e (real Chromium against the real server, serving
// the built dashboard).
export default defineConfig({
  test: {
    // The plain summary prints last: `Tests: N passed, N failed, N skipped` (see the reporter).
    reporters: ["default", "./test/reporters/plain-summary.ts"],
    // A file per core: vitest's default leaves one core idle (cores - 1), which on CI's two cores
    // ran every file one after the other while each waited on its database and sockets.
    maxWorkers: availableParallelism(),
    projects: [
      { test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          testTimeout: 30_000,
          hookTimeout: 30_000,
          setupFiles: ["test/helpers/database-pool.ts"],
          // better-sqlite3 and mysql2 are native/pooled; forks isolate them cleanly.
          pool: "forks",
        },
      },
      { test: { name: "contract", include: ["test/contract/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000, setupFiles: ["test/helpers/database-pool.ts"] } },
      { test: { name: "sdk", include: ["sdk/test/**/*.test.ts"], testTimeout: 30_000, hookTimeout: 60_000, pool: "forks" } },
      { test: { name: "cli", include: ["cli/test/**/*.test.ts"], testTimeout: 30_000, hookTimeout: 60_000, pool: "forks" } },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          testTimeout: 90_000,
          hookTimeout: 90_000,
          pool: "forks",
          // One browser at a time: Chromium and the server share two cores.
          fileParallelism: false,
        },
      },
    ],
  },
});
