import react from "@vitejs/plugin-react";
import { defineConfig, loadEnv } from "vite";

// The server serves dist/ at `/` with a strict CSP (script-src 'self'), so everything is bundled:
// no inline script, no CDN. `npm run dev` proxies the API and the session routes to a local
// server (`make run`; MAILROOM_DEV_SERVER to point elsewhere), so the page and the API share one
// origin, as in production: the session cookie is SameSite=Strict and /auth checks the Origin.
export default defineConfig(({ mode }) => {
  const target = loadEnv(mode, ".", "MAILROOM_").MAILROOM_DEV_SERVER ?? "http://localhost:3000";
  return {
    base: "/",
    plugins: [react()],
    build: { outDir: "dist", emptyOutDir: true, sourcemap: true },
    server: { proxy: { "/v1": target, "/auth": target } },
  };
});
