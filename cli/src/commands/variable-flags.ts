import type { Argv } from "yargs";
import type { Args } from "../command.js";
import { UsageError, optionalString, pairs } from "../command.js";
import { readUserFile, type Io } from "../io.js";

/** The flags that give a template's variable values: `send --template` and `templates render`. */
export function variableFlags(yargs: Argv): Argv {
  return yargs
    .option("var", { type: "string", array: true, describe: "A template variable, key=value (repeatable; the value is a string)" })
    .option("var-json", { type: "string", alias: "variables", describe: 'Template variables as a JSON object, for numbers, booleans and nesting: \'{"order":{"id":7}}\'' })
    .option("variables-file", { type: "string", describe: "Template variables from a JSON file holding an object" });
}

/**
 * The variable values the flags give, or undefined for none. When they name the same variable,
 * the most specific wins: --var over --var-json over --variables-file.
 */
export async function variableValues(args: Args, io: Io): Promise<Record<string, unknown> | undefined> {
  const path = optionalString(args, "variables-file");
  const fromFile = path === undefined ? undefined : jsonObject((await readUserFile(io, path, "variables-file")).toString("utf8"), "variables-file", path);
  const json = optionalString(args, "var-json");
  const fromJson = json === undefined ? undefined : jsonObject(json, "var-json");
  const strings = pairs(args, "var", "=");
  if (fromFile === undefined && fromJson === undefined && strings === undefined) return undefined;
  return { ...fromFile, ...fromJson, ...strings };
}

/** Whether any variable flag was given (they mean nothing without a template). */
export function hasVariableFlags(args: Args): boolean {
  return ["var", "var-json", "variables-file"].some((key) => args[key] !== undefined);
}

function jsonObject(text: string, flag: string, source?: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--${flag}: ${source ?? "the value"} is not JSON (${(error as Error).message}).`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--${flag}: ${source ?? "the value"} must be a JSON object of variables, such as {"first_name": "Ada"}.`);
  }
  return parsed as Record<string, unknown>;
}
