// The entry of a template render worker. Worker threads do not inherit the tsx loader the process
// runs under (`node --import tsx` or vitest), so it is registered here before the TypeScript
// worker is loaded; this file is plain JavaScript for that reason alone.
import { register } from "tsx/esm/api";

register();
await import("./render-worker.ts");
