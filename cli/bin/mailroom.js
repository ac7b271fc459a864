#!/usr/bin/env node
// The `mailroom` binary. It lives outside dist/ so that npm links it on install, before the
// TypeScript is built; the program itself is cli/dist/bin.js (`make build`).
import process from "node:process";
try {
  await import("../dist/bin.js");
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/bin.js")) throw error;
  process.stderr.write("The mailroom CLI is not built yet: run `make build` in the repository (or `npm run build -w cli`).\n");
  process.exitCode = 2;
}
