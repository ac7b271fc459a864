// The entry of a compose thread. Worker threads do not inherit the tsx loader the process runs
// under (`node --import tsx`, bin/mailroom-server.js or vitest), so it is registered here before
// the TypeScript thread is loaded; this file is plain JavaScript for that reason alone.
import { register } from "tsx/esm/api";

register();
await import("./compose-thread.ts");
