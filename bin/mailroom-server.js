#!/usr/bin/env node
// The server's command line (`mailroom-server serve|migrate|bootstrap`), run from TypeScript
// source through tsx so that there is no build step to forget. bin/mailroom-server starts Node
// with its heap limit and runs this; `node bin/mailroom-server.js` runs without that limit.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
