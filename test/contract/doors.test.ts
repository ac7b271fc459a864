import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { commandsByOperation, nouns, run, shortcuts } from "../../cli/src/index.js";
import { Mailroom } from "../../sdk/src/index.js";
import { contractOperations, methodOf, resourceOf } from "../helpers/contract.js";

/**
 * What a sample's `--file` reads: the messages batch sample names a JSON file of messages, the
 * suppressions one a CSV export, as a user migrating from another provider has.
 */
const SAMPLE_JSON = JSON.stringify({ messages: [{ to: "ada@example.com", subject: "Hi", text: "Hi" }] });
const SAMPLE_CSV = "email,reason\nada@example.com,unsubscribe\n";
const sampleFile = async (path: string) => Buffer.from(path.endsWith(".csv") ? SAMPLE_CSV : SAMPLE_JSON);

/**
 * One name, four doors (STYLE.md): every operation of the contract has its SDK method and its CLI
 * command, and its reference page shows both. A new operation without them fails here.
 */
const operations = contractOperations();

/** `ApiKeys` -> `api-keys` (the CLI noun). */
const nounOf = (tag: string) => tag.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const client = new Mailroom("svc_test_unused", { fetch: () => Promise.reject(new Error("no calls in this test")) });

describe("every operation of the contract", () => {
  it("has exactly one tag", () => {
    for (const operation of operations) expect(operation.tag, operation.operationId).toBeTypeOf("string");
  });

  it.each(operations)("$operationId has an SDK method", ({ operationId, tag }) => {
    const resource = (client as unknown as Record<string, Record<string, unknown>>)[resourceOf(tag)];
    expect(resource, `mr.${resourceOf(tag)}`).toBeDefined();
    expect(typeof resource?.[methodOf(operationId, tag)], `mr.${resourceOf(tag)}.${methodOf(operationId, tag)}`).toBe("function");
  });

  it.each(operations)("$operationId is documented in the SDK's README (its method table) and the CLI's", ({ operationId, tag }) => {
    const sdkReadme = readFileSync(join(REPO, "sdk/README.md"), "utf8");
    const cliReadme = readFileSync(join(REPO, "cli/README.md"), "utf8");
    expect(sdkReadme).toMatch(new RegExp(`^\\| \`mr\\.${resourceOf(tag)}\\.${methodOf(operationId, tag)}\\(.*\\| \`${operationId}\` \\|`, "m"));
    expect(cliReadme).toContain(`\`${operationId}\``);
  });

  it.each(operations)("$operationId has a CLI command under its tag's noun", ({ operationId, tag }) => {
    const command = commandsByOperation().get(operationId);
    expect(command, `no CLI command calls ${operationId}`).toBeDefined();
    expect(command?.split(" ")[0]).toBe(nounOf(tag));
  });

  it.each(operations.filter((operation) => operation.query.length > 0))("$operationId: each query parameter is a flag of its CLI command", async ({ operationId, query }) => {
    const words = commandsByOperation().get(operationId)!.split(" ").filter((word) => !word.startsWith("<") && !word.startsWith("["));
    let help = "";
    const sink = { write: (chunk: string) => ((help += chunk), true), isTTY: false };
    await run([...words, "--help"], { stdout: sink, stderr: sink, env: {}, readFile: sampleFile, writeFile: async () => undefined, interrupted: Promise.resolve(), fetch: () => Promise.reject(new Error("no calls in this test")) });
    for (const name of query) expect(help, `mailroom ${words.join(" ")} --${name.replace(/_/g, "-")}`).toMatch(new RegExp(`^\\s+(--[a-z-]+, )*--${name.replace(/_/g, "-")}\\b`, "m"));
  });

  it.each(operations)("$operationId shows SDK, CLI and curl samples that call it", ({ operationId, tag, samples }) => {
    expect(samples.map((sample) => sample.label)).toEqual(["Node SDK", "CLI", "curl"]);
    const [sdk, cli] = samples;
    expect(sdk?.source).toContain(`mr.${resourceOf(tag)}.${methodOf(operationId, tag)}(`);
    const [program, ...words] = (cli?.source.split("\n")[0] ?? "").split(" ");
    expect(program).toBe("mailroom");
    expect(operationOfCommand(words), `"mailroom ${words.slice(0, 2).join(" ")}"`).toBe(operationId);
  });
});

describe("the SDK's named types", () => {
  const sdkTypes = readFileSync(join(REPO, "sdk/src/types.ts"), "utf8");

  it.each(operations.filter((op) => op.body || op.query.length > 0).map((op) => [op.operationId]))("name what %s takes: <OperationId>Params", (operationId) => {
    const name = `${operationId[0]!.toUpperCase()}${operationId.slice(1)}Params`;
    // The type is the operation's body or query, or built on it (WithMessageContent<RequestBody<…>>).
    expect(sdkTypes).toMatch(new RegExp(`^export type ${name} = .*\\b(RequestBody|QueryParams)<"${operationId}">.*;$`, "m"));
  });
});

describe("the SDK and CLI", () => {
  it("call no operation that the contract lacks", () => {
    const ids = new Set(operations.map((operation) => operation.operationId));
    for (const noun of nouns) for (const command of noun.commands) if (command.operationId) expect(ids, `${noun.name} ${command.command}`).toContain(command.operationId);
    const resources = new Set(operations.map((operation) => resourceOf(operation.tag)));
    const sdkResources = Object.keys(client).filter((key) => typeof (client as unknown as Record<string, unknown>)[key] === "object" && key !== "http" && key !== "options");
    expect(new Set(sdkResources)).toEqual(resources);
  });
});

/** The operation a CLI invocation calls, found in the command tree itself. */
function operationOfCommand([noun = "", verb = ""]: string[]): string | undefined {
  if (noun in shortcuts) return shortcuts[noun]?.operationId;
  const commands = nouns.find((group) => group.name === noun)?.commands ?? [];
  return commands.find((command) => command.command.split(" ")[0] === verb || command.aliases?.includes(verb))?.operationId;
}

/**
 * The samples are documentation people paste: the SDK ones must compile against the SDK's
 * published types, and the CLI ones must be commands the CLI accepts, flags and values included.
 */
describe("the code samples in the reference", () => {
  it("compile, for the Node SDK, against the built package", () => {
    // Inside the repository, so that "mailroom" resolves as it does for a user of the package.
    mkdirSync(join(REPO, "build"), { recursive: true });
    const dir = mkdtempSync(join(REPO, "build", "samples-"));
    try {
      const files = operations.map(({ operationId, samples }) => {
        const file = join(dir, `${operationId}.mts`);
        writeFileSync(file, `${samples.find((sample) => sample.label === "Node SDK")?.source ?? ""}\nexport {};\n`);
        return file;
      });
      const program = ts.createProgram(files, {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ["node"],
      });
      const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => `${diagnostic.file?.fileName.replace(dir, "")}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`);
      expect(problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it.each(operations)("$operationId: the CLI sample is a command the CLI accepts", async ({ samples }) => {
    const source = samples.find((sample) => sample.label === "CLI")?.source ?? "";
    const [, ...argv] = shellWords(source.replace(/\\\n\s*/g, " ").split("\n")[0] ?? "");
    const answered: string[] = [];
    // Any well-formed answer will do: this checks the command line, not the API.
    const fetch = async (request: Request) => (answered.push(request.url), new Response(JSON.stringify({ data: [], has_more: false, next_cursor: null }), { status: 200, headers: { "content-type": "application/json" } }));
    let stderr = "";
    const sink = { write: () => true, isTTY: false };
    const code = await run(argv, { stdout: sink, stderr: { write: (chunk: string) => (stderr += chunk), isTTY: false }, env: { MAILROOM_API_KEY: "svc_test_sample" }, readFile: sampleFile, writeFile: async () => undefined, interrupted: Promise.resolve(), fetch });
    expect(code, stderr).toBe(0);
    expect(answered).toHaveLength(1);
  });
});

/** Splits one shell command line into words (single and double quotes; a trailing comment dropped). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const match of line.replace(/\s+#.*$/, "").matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3] ?? "");
  return words;
}
