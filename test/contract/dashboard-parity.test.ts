import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Mailroom } from "mailroom";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { contractOperations, methodOf, resourceOf } from "../helpers/contract.js";

/**
 * The dashboard is the fourth door (docs/dashboard.md): it reaches /v1 only through the SDK, so
 * every operation it uses is in the contract and anything it does can be done in code. Read from
 * its sources with the TypeScript compiler (with types, so that an SDK call is recognised by the
 * type of its receiver, whatever the variable is called).
 */
const DASHBOARD = fileURLToPath(new URL("../../dashboard/", import.meta.url));
const DOCS = fileURLToPath(new URL("../../docs/dashboard.md", import.meta.url));
const AUTH_MODULE = "auth/auth-api.ts";

const program = (() => {
  const config = ts.readConfigFile(`${DASHBOARD}tsconfig.json`, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, DASHBOARD);
  return ts.createProgram(parsed.fileNames, parsed.options);
})();
const checker = program.getTypeChecker();
const sources = program
  .getSourceFiles()
  .filter((file) => file.fileName.startsWith(`${DASHBOARD}src/`))
  .map((file) => ({ file, name: file.fileName.slice(`${DASHBOARD}src/`.length) }));

function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

/** `mr.resource.method(…)` wherever `mr` is a Mailroom client: "resource.method" -> where. */
function sdkCalls(): Map<string, string[]> {
  const calls = new Map<string, string[]>();
  for (const { file, name } of sources) {
    walk(file, (node) => {
      if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return;
      const resource = node.expression.expression;
      if (!ts.isPropertyAccessExpression(resource)) return;
      if (checker.getTypeAtLocation(resource.expression).getSymbol()?.getName() !== "Mailroom") return;
      const call = `${resource.name.text}.${node.expression.name.text}`;
      const line = file.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      calls.set(call, [...(calls.get(call) ?? []), `${name}:${line}`]);
    });
  }
  return calls;
}

/** The text of every string and template literal but module specifiers, by module. */
function literals(): Array<{ name: string; text: string }> {
  const found: Array<{ name: string; text: string }> = [];
  for (const { file, name } of sources) {
    walk(file, (node) => {
      if (node.parent && (ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent))) return;
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
        found.push({ name, text: node.text });
      }
    });
  }
  return found;
}

/** The code the getting-started snippets teach (`mr.messages.create(` in a string): "resource.method". */
const taughtCalls = () => [...new Set(literals().flatMap(({ text }) => [...text.matchAll(/\bmr\.(\w+)\.(\w+)\(/g)].map(([, resource, method]) => `${resource}.${method}`)))];

const operations = contractOperations();

/**
 * The operationId an SDK call names, by the project's naming rule run backwards: the method
 * itself (`accounts.listMembers` -> `listMembers`), or with its tag's noun after the verb, plural
 * or singular (`messages.list` -> `listMessages`, `messages.listEvents` -> `listMessageEvents`).
 * Checked forwards too, with the rule the SDK and CLI are held to (test/contract/doors.test.ts).
 */
function operationOf(call: string): string | undefined {
  const [resource = "", method = ""] = call.split(".");
  const verb = /^[a-z]+/.exec(method)?.[0] ?? "";
  const rest = method.slice(verb.length);
  const tagged = operations.filter((operation) => resourceOf(operation.tag) === resource);
  const tag = tagged[0]?.tag ?? "";
  const singular = tag.endsWith("s") ? tag.slice(0, -1) : tag;
  const candidates = [method, `${verb}${tag}${rest}`, `${verb}${singular}${rest}`];
  return tagged.find((operation) => candidates.includes(operation.operationId) && methodOf(operation.operationId, tag) === method)?.operationId;
}

const used = sdkCalls();
const client = new Mailroom("svc_test_x");

describe("the dashboard and the contract", () => {
  it("finds the dashboard's SDK calls in its sources", () => {
    // Not vacuous: the pages' known calls are among them (a failure here may mean the SDK is not
    // built: `make -s build`, since the dashboard's types come from sdk/dist).
    expect([...used.keys()]).toEqual(expect.arrayContaining(["messages.list", "messages.get", "messages.listEvents", "apiKeys.create", "apiKeys.rotate", "apiKeys.revoke", "accounts.listMembers", "workspace.update"]));
    expect(taughtCalls()).toEqual(["messages.create"]);
  });

  it("uses only operationIds that the contract has", () => {
    const unknown = [...used].filter(([call]) => operationOf(call) === undefined).map(([call, where]) => `${call} (${where.join(", ")})`);
    expect(unknown).toEqual([]);
    for (const call of taughtCalls()) expect(operationOf(call), `taught: mr.${call}(`).toBeDefined();
  });

  it("does everything through SDK methods that any client has", () => {
    const resources = client as unknown as Record<string, Record<string, unknown>>;
    for (const call of [...used.keys(), ...taughtCalls()]) {
      const [resource = "", method = ""] = call.split(".");
      expect(typeof resources[resource]?.[method], `mr.${call}`).toBe("function");
    }
    // For the record: what the dashboard can do, by operationId.
    console.info(`dashboard operations: ${[...used.keys()].map((call) => operationOf(call)).sort().join(", ")}`);
  });

  it("calls exactly the operations that docs/dashboard.md's table of pages lists", () => {
    // Rows of "## Pages and operations": | page | `operationId`, … |
    const section = readFileSync(DOCS, "utf8").split(/^## Pages and operations$/m)[1]?.split(/^## /m)[0] ?? "";
    const listed = new Set([...section.matchAll(/^\|[^|\n]+\|([^|\n]+)\|$/gm)].flatMap(([, cell]) => [...cell!.matchAll(/`([a-z][A-Za-z]+)`/g)].map(([, id]) => id!)));
    expect(listed.size).toBeGreaterThan(0);
    expect([...listed].sort()).toEqual([...new Set([...used.keys()].map((call) => operationOf(call)))].sort());
  });

  it("calls fetch (or any other request API) only in the auth module", () => {
    const requesters = new Set(["fetch", "XMLHttpRequest", "EventSource", "WebSocket", "sendBeacon"]);
    const callers = new Set<string>();
    for (const { file, name } of sources) walk(file, (node) => ts.isIdentifier(node) && requesters.has(node.text) && callers.add(name));
    expect([...callers]).toEqual([AUTH_MODULE]);
  });

  it("mentions /v1 or /auth in no other module, but as the text of the curl snippet it teaches", () => {
    const mentions = literals()
      .filter(({ name, text }) => name !== AUTH_MODULE && /\/(v1|auth)(\/|\b)/.test(text))
      .map(({ name, text }) => `${name}: ${text}`);
    // Shown to the reader as text, never requested.
    expect(mentions).toEqual(["components/getting-started.tsx: /v1/messages \\"]);
  });

  it("calls exactly the /auth routes that docs/dashboard.md documents", () => {
    const called = new Set<string>();
    const auth = sources.find(({ name }) => name === AUTH_MODULE)!.file;
    walk(auth, (node) => {
      if (!ts.isCallExpression(node) || !ts.isIdentifier(node.expression) || node.expression.text !== "request") return;
      const [method, path] = node.arguments;
      if (!method || !ts.isStringLiteral(method) || !path) return;
      // `/auth/invitations/${encodeURIComponent(token)}` -> /auth/invitations/{}
      const route = ts.isStringLiteral(path) ? path.text : ts.isTemplateExpression(path) ? path.head.text + path.templateSpans.map((span) => `{}${span.literal.text}`).join("") : "?";
      called.add(`${method.text} ${route}`);
    });
    const documented = new Set(
      [...readFileSync(DOCS, "utf8").matchAll(/^\| `(GET|POST) (\/auth\/[^`]*)`/gm)].map(([, method, path]) => `${method} ${path!.replace(/\{\w+\}/g, "{}")}`),
    );
    expect(documented.size).toBeGreaterThan(0);
    expect([...called].sort()).toEqual([...documented].sort());
  });
});
