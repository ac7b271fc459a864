import { afterAll } from "vitest";
import { dropPooledDatabases } from "./databases.js";

// A setup file of the projects whose tests take databases from test/helpers/databases.ts: the
// MariaDB databases a test file emptied for reuse are dropped when the file is done.
afterAll(dropPooledDatabases);
