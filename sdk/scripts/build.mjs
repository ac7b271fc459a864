// Builds the publishable package: compiles src/ to dist/ and copies the contract's generated
// types next to it. src/generated is a symlink to the repository's generated/ (the one copy that
// is committed); tsc does not emit .d.ts inputs, so the copy makes dist/ self-contained.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
rmSync(join(root, "dist"), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.json")], { stdio: "inherit" });
mkdirSync(join(root, "dist", "generated"), { recursive: true });
copyFileSync(join(root, "src", "generated", "v1.d.ts"), join(root, "dist", "generated", "v1.d.ts"));
