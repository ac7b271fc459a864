// TypeScript lint for the server, SDK, CLI, tests and benchmarks. generated/ is the generator's output
// and is never linted (it is drift-checked instead).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["generated/**", "**/generated/**", "**/node_modules/**", "data/**", "build/**", "**/dist/**", ".venv/**", "dashboard/**"] },
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
);
