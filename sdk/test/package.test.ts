import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The package as an application installs it (node_modules/mailroom, built dist/), not the sources.
const root = fileURLToPath(new URL("../..", import.meta.url));
const nodeRun = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: "utf8" });

describe("the mailroom package", () => {
  it("loads with import from an ES module", () => {
    expect(nodeRun(["--input-type=module", "-e", 'import { Mailroom } from "mailroom"; process.stdout.write(typeof Mailroom)'])).toBe("function");
  });

  it("loads with require from CommonJS, as Node 20.19+ requires ES modules", () => {
    expect(nodeRun(["--input-type=commonjs", "-e", 'const { Mailroom } = require("mailroom"); process.stdout.write(typeof Mailroom)'])).toBe("function");
  });
});
