import { afterAll } from "vitest";
import { dropPooledDatabases } from "./databases.js";
import { openTestApps } from "./test-app.js";

// A setup file of the projects whose tests take databases from test/helpers/databases.ts. When a
// file is done, the MariaDB databases it emptied for reuse are dropped, and a test app it never
// closed is closed (so its database goes too) and fails the file: the leak is the test's bug.
afterAll(async () => {
  const leaked = [...openTestApps.values()];
  for (const app of [...openTestApps.keys()]) await app.close();
  await dropPooledDatabases();
  if (leaked.length > 0) throw new Error(`test apps never closed: ${leaked.join("; ")}`);
});
