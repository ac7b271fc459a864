import react from "@vitejs/plugin-react";
import { defineConfig, loadEnv } from "vite";

// The editor itself (@uiw/react-codemirror and the Babel helpers it is compiled with, CodeMirror's
// view, state, commands and their helpers, Lezer's runtime) and the languages it highlights (HTML with its CSS and JavaScript,
// Liquid): the two code-editor chunks below.
const CODE_EDITOR = /[\\/]node_modules[\\/](@uiw[\\/]|@babel[\\/]runtime[\\/]|@codemirror[\\/](?!lang-)|@lezer[\\/](common|lr|highlight)[\\/]|@marijn[\\/]|style-mod[\\/]|w3c-keyname[\\/]|crelt[\\/])/;
const CODE_EDITOR_LANGUAGES = /[\\/]node_modules[\\/](@codemirror[\\/]lang-|@lezer[\\/])/;

// The server serves dist/ at `/` with a strict CSP (script-src 'self'), so everything is bundled:
// no inline script, no CDN. `npm run dev` proxies the API and the session routes to a local
// server (`make run`; MAILROOM_DEV_SERVER to point elsewhere), so the page and the API share one
// origin, as in production: the session cookie is SameSite=Strict and /auth checks the Origin.
export default defineConfig(({ mode }) => {
  const target = loadEnv(mode, ".", "MAILROOM_").MAILROOM_DEV_SERVER ?? "http://localhost:3000";
  return {
    base: "/",
    plugins: [react()],
    build: {
      outDir: "dist",
      emptyOutDir: true,
      sourcemap: true,
      rolldownOptions: {
        output: {
          // Each signed-in page is a chunk of its own (app.tsx), holding what only it uses. The
          // template editor's CodeMirror is the exception: with the HTML, CSS, JavaScript and
          // Liquid languages it is about 590 kB, past Vite's 500 kB warning, so it goes into two
          // chunks of its own, the editor and its languages, fetched only with the template page.
          codeSplitting: {
            // Only the modules named: their dependencies outside the editor (React) stay in the
            // entry, rather than being pulled into the editor's chunk and fetched at start.
            includeDependenciesRecursively: false,
            groups: [
              { name: "code-editor", test: CODE_EDITOR, priority: 2 },
              { name: "code-editor-languages", test: CODE_EDITOR_LANGUAGES, priority: 1 },
            ],
          },
        },
      },
    },
    server: { proxy: { "/v1": target, "/auth": target } },
  };
});
