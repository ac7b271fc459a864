import type { Workspace } from "mailroom";
import type { Noun } from "../command.js";
import { UsageError, definedOnly, isNone, optionalString } from "../command.js";
import { fields } from "../output.js";
import { switchesOn } from "./render.js";
import { TRACKING_FLAGS, trackingFlags, trackingValues } from "./tracking-flags.js";

const days = (count: number) => `${count} ${count === 1 ? "day" : "days"}`;

const renderWorkspace = (workspace: Workspace) =>
  fields([
    ["id", workspace.id],
    ["name", workspace.name],
    ["environment", workspace.environment],
    ["default_from", workspace.default_from ?? "(none)"],
    ["monthly_quota", workspace.monthly_quota ?? "(no limit)"],
    ["content_retention_days", workspace.content_retention_days === null ? "(kept for good)" : days(workspace.content_retention_days)],
    ["tracking", switchesOn(workspace.tracking)],
    ["created_at", workspace.created_at],
    ["updated_at", workspace.updated_at],
  ]);

/** The settings that are a whole number or nothing, with the contract's bounds (UpdateWorkspaceRequest). */
const MONTHLY_QUOTA = { flag: "monthly-quota", unit: "messages", max: 1_000_000_000 };
const CONTENT_RETENTION_DAYS = { flag: "content-retention-days", unit: "days", max: 3650 };

/**
 * `--<flag> N`: a whole number from 1 to `max`, or `none` / `--no-<flag>` (which yargs gives as
 * false) to clear the setting (null). Checked here, so that a typo is a usage error rather than
 * a round trip.
 */
function countOrNone(value: unknown, { flag, unit, max }: { flag: string; unit: string; max: number }): number | null | undefined {
  if (value === undefined) return undefined;
  if (isNone(value)) return null;
  const text = String(value);
  const count = Number(text);
  if (!/^\d+$/.test(text) || count < 1 || count > max) {
    throw new UsageError(`--${flag} takes a whole number of ${unit} from 1 to ${max}, or none; got "${String(value)}".`);
  }
  return count;
}

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
      describe: "Change the name, the default sender, the monthly quota, the content retention or the tracking defaults",
      operationId: "updateWorkspace",
      examples: [
        ['$0 workspace update --default-from "Acme <hello@acme.example>"', "Set the default sender"],
        ["$0 workspace update --no-default-from", "Clear the default sender"],
        ["$0 workspace update --monthly-quota 50000", "Cap live messages at 50 000 per month"],
        ["$0 workspace update --no-monthly-quota", "Remove the cap"],
        ["$0 workspace update --content-retention-days 30", "Remove message content after 30 days"],
        ["$0 workspace update --no-content-retention-days", "Keep content for good"],
        ["$0 workspace update --track-opens --track-clicks --no-unsubscribe", "Track opens and clicks by default, without unsubscribe headers"],
      ],
      noForms: ["default-from", "monthly-quota", "content-retention-days"],
      builder: (yargs) =>
        trackingFlags(
          yargs
            .option("name", { type: "string", describe: "The workspace's name" })
            .option("default-from", { type: "string", describe: "Default sender; --no-default-from clears it" })
            .option("monthly-quota", { type: "string", describe: "Live messages allowed per UTC month; --no-monthly-quota (or none) removes the cap" })
            .option("content-retention-days", {
              type: "string",
              describe: "Days a settled message keeps its content (bodies, source, attachments), which is then removed for good; --no-content-retention-days (or none) keeps it",
            }),
          "Default:",
        ).group(
          TRACKING_FLAGS.map(({ flag }) => flag),
          "Tracking defaults, for messages that do not say (a domain's own opens and clicks defaults come first):",
        ),
      async run({ client, output }, args) {
        const defaultFrom = args["default-from"];
        const tracking = trackingValues(args, "field");
        const body = definedOnly({
          name: optionalString(args, "name"),
          default_from: defaultFrom === false ? null : optionalString(args, "default-from"),
          monthly_quota: countOrNone(args["monthly-quota"], MONTHLY_QUOTA),
          content_retention_days: countOrNone(args["content-retention-days"], CONTENT_RETENTION_DAYS),
          tracking: Object.keys(tracking).length > 0 ? tracking : undefined,
        });
        if (Object.keys(body).length === 0) {
          throw new UsageError(
            "Nothing to update: give --name, --default-from (or --no-default-from), --monthly-quota (or --no-monthly-quota), --content-retention-days (or --no-content-retention-days), or a tracking default (--track-opens, --track-clicks, --track-replies, --unsubscribe, or their --no- forms).",
          );
        }
        const updated = await client().workspace.update(body);
        output.result(updated, () => renderWorkspace(updated));
      },
    },
  ],
};
