#!/usr/bin/env node
import { readFile, writeFile } from "node:fs/promises";
import { run } from "./run.js";

const interrupted = new Promise<void>((resolve) => {
  process.once("SIGINT", () => resolve());
  process.once("SIGTERM", () => resolve());
});

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  readFile: (path) => readFile(path),
  writeFile: (path, data) => writeFile(path, data),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  },
  interrupted,
});
