import type { Workspace } from "mailroom";
import type { Noun } from "../command.js";
import { UsageError, definedOnly, optionalString } from "../command.js";
import { fields } from "../output.js";

const renderWorkspace = (workspace: Workspace) =>
  fields([
    ["id", workspace.id],
    ["name", workspace.name],
    ["environment", workspace.environment],
    ["default_from", workspace.default_from ?? "(none)"],
    ["created_at", workspace.created_at],
    ["updated_at", workspace.updated_at],
  ]);

export const workspace: Noun = {
  name: "workspace",
  describe: "The workspace and environment of the key in use",
  commands: [
    {
      command: "get",
      describe: "Show the workspace, its environment and settings",
      operationId: "getWorkspace",
      examples: [["$0 workspace get", "Which workspace and environment this key is for"]],
      async run({ client, output }) {
        const current = await client().workspace.get();
        output.result(current, () => renderWorkspace(current));
      },
    },
    {
      command: "update",
      describe: "Change the name or the default sender",
      operationId: "updateWorkspace",
      examples: [
        ['$0 workspace update --default-from "Acme <hello@acme.example>"', "Set the default sender"],
        ["$0 workspace update --no-default-from", "Clear the default sender"],
      ],
      builder: (yargs) =>
        yargs
          .option("name", { type: "string", describe: "The workspace's name" })
          .option("default-from", { type: "string", describe: "Default sender; --no-default-from clears it" }),
      async run({ client, output }, args) {
        const defaultFrom = args["default-from"];
        const body = definedOnly({
          name: optionalString(args, "name"),
          default_from: defaultFrom === false ? null : optionalString(args, "default-from"),
        });
        if (Object.keys(body).length === 0) throw new UsageError("Nothing to update: give --name or --default-from (or --no-default-from).");
        const updated = await client().workspace.update(body);
        output.result(updated, () => renderWorkspace(updated));
      },
    },
  ],
};
