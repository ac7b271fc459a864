// TypeScript lint for the server, SDK, CLI, dashboard, tests and benchmarks. generated/ is the
// generator's output and is never linted (it is drift-checked instead).
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["generated/**", "**/generated/**", "**/node_modules/**", "data/**", "build/**", "**/dist/**", ".venv/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-imports": ["error", { patterns: [{ group: ["fastify", "fastify/*"], message: "Only src/http and src/app.ts may import fastify." }] }],
    },
  },
  {
    files: ["src/http/**", "src/app.ts", "src/main.ts", "test/**", "bench/**", "sdk/**", "cli/**"],
    rules: { "no-restricted-imports": "off" },
  },
  // The dashboard: React's rules of hooks, with useRequest/usePaged deps checked like an effect's.
  // It reaches /v1 only through the SDK; fetch is for the /auth routes, in one module.
  {
    files: ["dashboard/**/*.{ts,tsx}"],
    ...reactHooks.configs.flat["recommended-latest"],
    rules: {
      ...reactHooks.configs.flat["recommended-latest"].rules,
      "react-hooks/exhaustive-deps": ["error", { additionalHooks: "^(useRequest|usePaged)$" }],
      "no-restricted-globals": ["error", { name: "fetch", message: "Call /v1 through the SDK (useApi().call), /auth through src/auth/auth-api.ts." }],
    },
  },
  {
    files: ["dashboard/src/auth/auth-api.ts"],
    rules: { "no-restricted-globals": "off" },
  },
);
