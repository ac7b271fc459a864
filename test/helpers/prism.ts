import { spawn } from "node:child_process";
import { createServer } from "node:net";

export interface PrismMock {
  baseUrl: string;
  stop(): void;
}

/** Starts `prism mock openapi/v1.yaml` (what `make mock` runs) on a free loopback port. */
export async function startPrism(): Promise<PrismMock> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const prism = spawn("node_modules/.bin/prism", ["mock", "openapi/v1.yaml", "-h", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
  const stop = () => void prism.kill();
  for (let i = 0; i < 150; i++) {
    if (await fetch(`${baseUrl}/health`).then(() => true, () => false)) return { baseUrl, stop };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  stop();
  throw new Error("Prism did not start within 30 s");
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}
