import type { Account, Invitation, InvitationWithUrl, Mailroom, Member, PagePromise, Role, WorkspaceMembership } from "mailroom";
import type { Command, Noun } from "../command.js";
import { definedOnly, optionalString, requiredString } from "../command.js";
import { listFlags, listQuery, printList } from "../list.js";
import { cell, fields, table } from "../output.js";
import { confirm, withYes } from "../confirm.js";

/** The contract's `Role` values, in its order; `satisfies` keeps the list to values it has. */
const ROLES = ["owner", "admin", "developer", "viewer"] as const satisfies readonly Role[];

const idempotencyFlag = { type: "string", describe: "Make retries of this call safe" } as const;

const membershipColumns = {
  headers: ["ID", "NAME", "ROLE", "JOINED"],
  row: (workspace: WorkspaceMembership) => [workspace.id, cell(workspace.name, 40), workspace.role, workspace.joined_at],
};

const memberColumns = {
  headers: ["USER ID", "EMAIL", "NAME", "ROLE", "JOINED"],
  row: (member: Member) => [member.user_id, member.email, cell(member.name, 30), member.role, member.joined_at],
};

const invitationColumns = {
  headers: ["ID", "EMAIL", "ROLE", "INVITED BY", "EXPIRES"],
  row: (invitation: Invitation) => [invitation.id, invitation.email, invitation.role, invitation.invited_by ?? "", invitation.expires_at],
};

/** The flags and the run of a list of the Accounts tag: --limit, --after, --all (no date range). */
function accountsList<Item>(
  list: (accounts: Mailroom["accounts"], query: ReturnType<typeof listQuery>) => PagePromise<Item>,
  columns: { headers: string[]; row: (item: Item) => string[] },
): Pick<Command, "builder" | "run"> {
  return {
    builder: (yargs) => listFlags(yargs, { createdRange: false }),
    run: (context, args) => printList(context, args, list(context.client().accounts, listQuery(args, { createdRange: false })), columns),
  };
}

function renderAccount(account: Account): string {
  const user = fields([
    ["id", account.user.id],
    ["email", account.user.email],
    ["name", account.user.name],
    ["created_at", account.user.created_at],
  ]);
  return `${user}\n\n${table(membershipColumns.headers, account.workspaces.map(membershipColumns.row))}`;
}

const renderMembership = (workspace: WorkspaceMembership) =>
  fields([
    ["id", workspace.id],
    ["name", workspace.name],
    ["role", workspace.role],
    ["joined_at", workspace.joined_at],
  ]);

const renderMember = (member: Member) =>
  fields([
    ["user_id", member.user_id],
    ["email", member.email],
    ["name", member.name],
    ["role", member.role],
    ["joined_at", member.joined_at],
  ]);

function renderInvitation(invitation: Invitation & { accept_url?: string }): string {
  const details = fields([
    ["id", invitation.id],
    ["email", invitation.email],
    ["role", invitation.role],
    ["invited_by", invitation.invited_by],
    ["created_at", invitation.created_at],
    ["expires_at", invitation.expires_at],
  ]);
  if (!invitation.accept_url) return details;
  return `${details}\n\naccept_url  ${invitation.accept_url}`;
}

/**
 * The Accounts tag: people rather than programs. Every command here needs a user access token
 * (`mru_…`, passed with --api-key or MAILROOM_API_KEY); an API key gets `403 user_token_required`.
 */
export const accounts: Noun = {
  name: "accounts",
  describe: "Your account, workspaces, members and invitations (needs a user access token, mru_…)",
  commands: [
    {
      command: "get",
      describe: "Show the signed-in user and every workspace they belong to, with their role",
      operationId: "getAccount",
      examples: [['$0 accounts get --api-key "$MAILROOM_USER_TOKEN"', "Who this token is for, and their workspaces"]],
      async run({ client, output }) {
        const account = await client().accounts.get();
        output.result(account, () => renderAccount(account));
      },
    },
    {
      command: "update",
      describe: "Change your display name, as every workspace you belong to shows it",
      operationId: "updateAccount",
      examples: [
        ['$0 accounts update --name "Ada Lovelace" --api-key "$MAILROOM_USER_TOKEN"', "Set your name"],
        ['$0 accounts update --no-name --api-key "$MAILROOM_USER_TOKEN"', "Clear it"],
      ],
      noForms: ["name"],
      builder: (yargs) => yargs.option("name", { type: "string", describe: "Your display name; --no-name clears it", demandOption: "Give a --name (or --no-name to clear it)." }),
      async run({ client, output }, args) {
        const name = args.name === false ? null : requiredString(args, "name");
        const account = await client().accounts.update({ name });
        output.result(account, () => renderAccount(account));
      },
    },
    {
      command: "create-workspace",
      describe: "Create a workspace owned by you",
      operationId: "createWorkspace",
      examples: [['$0 accounts create-workspace --name "Acme staging"', "A second workspace, for staging"]],
      builder: (yargs) =>
        yargs
          .option("name", { type: "string", describe: "The workspace's name", demandOption: "Give the workspace a --name." })
          .option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        const workspace = await client().accounts.createWorkspace(
          { name: requiredString(args, "name") },
          definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }),
        );
        output.result(workspace, () => renderMembership(workspace));
      },
    },
    {
      command: "list-members",
      aliases: ["members"],
      describe: "List the workspace's members, oldest account first",
      operationId: "listMembers",
      examples: [
        ["$0 accounts list-members", "Everyone in the workspace and their role"],
        ["$0 accounts list-members --role owner", "Who can grant and take away the owner role"],
      ],
      builder: (yargs) => listFlags(yargs, { createdRange: false }).option("role", { type: "string", choices: ROLES, describe: "Only the members with this role" }),
      run: (context, args) => {
        const query = { ...listQuery(args, { createdRange: false }), ...definedOnly({ role: optionalString(args, "role") as Role | undefined }) };
        return printList(context, args, context.client().accounts.listMembers(query), memberColumns);
      },
    },
    {
      command: "update-member <user_id>",
      describe: "Change a member's role (only owners grant or take away owner)",
      operationId: "updateMember",
      examples: [["$0 accounts update-member usr_01jd3k8m2q5v7w9x1y3z5a7b9c --role admin", "Make a member an admin"]],
      builder: (yargs) => yargs.option("role", { type: "string", choices: ROLES, describe: "The new role", demandOption: "Give the new --role." }),
      async run({ client, output }, args) {
        const member = await client().accounts.updateMember(requiredString(args, "user_id"), { role: requiredString(args, "role") as Role });
        output.result(member, () => renderMember(member));
      },
    },
    {
      command: "remove-member <user_id>",
      describe: "Take a member out of the workspace; their tokens for it stop working at once",
      operationId: "removeMember",
      examples: [["$0 accounts remove-member usr_01jd3k8m2q5v7w9x1y3z5a7b9c", "Remove someone who left"], ["$0 accounts remove-member usr_01jd3k8m2q5v7w9x1y3z5a7b9c --yes", "The same without asking, as a script must"]],
      builder: withYes,
      async run(context, args) {
        const { client, output } = context;
        const id = requiredString(args, "user_id");
        await confirm(context, args, { command: "accounts remove-member", verb: "remove", what: `member ${id} from the workspace`, consequence: "Their tokens for it stop working at once." });
        const member = await client().accounts.removeMember(id);
        output.result(member, () => `${renderMember(member)}\n\nRemoved.`);
      },
    },
    {
      command: "leave-workspace",
      describe: "Leave the token's workspace, whatever your role; your tokens for it stop working at once",
      operationId: "leaveWorkspace",
      examples: [["$0 accounts leave-workspace", "Leave the workspace (the last owner cannot)"]],
      // No --idempotency-key: leaving ends the token, so a rerun is refused 401 whatever its key.
      async run({ client, output, rerunWith }) {
        const member = await rerunWith(undefined, () => client().accounts.leaveWorkspace());
        output.result(member, () => `${renderMember(member)}\n\nLeft the workspace.`);
      },
    },
    {
      command: "create-invitation",
      aliases: ["invite"],
      describe: "Invite an address with a role; prints the link to accept, shown only once",
      operationId: "createInvitation",
      examples: [
        ["$0 accounts create-invitation --email grace@acme.example --role developer", "Invite a developer; pass the printed link on"],
        ["$0 accounts invite --email ops@acme.example --role viewer --json | jq -r .accept_url", "Just the link"],
      ],
      builder: (yargs) =>
        yargs
          .option("email", { type: "string", describe: "The address to invite", demandOption: "Give the --email to invite." })
          .option("role", { type: "string", choices: ROLES, describe: "Their role once they accept (default developer)" })
          .option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        const body = { email: requiredString(args, "email"), ...definedOnly({ role: optionalString(args, "role") as Role | undefined }) };
        const invitation: InvitationWithUrl = await client().accounts.createInvitation(body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(invitation, () => renderInvitation(invitation), () => `The link is shown only now: send it to ${invitation.email}; it works until ${invitation.expires_at}.`);
      },
    },
    {
      command: "list-invitations",
      aliases: ["invitations"],
      describe: "List pending invitations, newest first (their links are not shown again)",
      operationId: "listInvitations",
      examples: [["$0 accounts list-invitations", "Who has been invited and not joined yet"]],
      ...accountsList((accounts, query) => accounts.listInvitations(query), invitationColumns),
    },
    {
      command: "revoke-invitation <invitation_id>",
      describe: "Withdraw a pending invitation; its link stops working",
      operationId: "revokeInvitation",
      examples: [["$0 accounts revoke-invitation inv_01jd3k8m2q5v7w9x1y3z5a7b9c", "Withdraw an invitation sent by mistake"], ["$0 accounts revoke-invitation inv_01jd3k8m2q5v7w9x1y3z5a7b9c --yes", "The same without asking, as a script must"]],
      builder: withYes,
      async run(context, args) {
        const { client, output } = context;
        const id = requiredString(args, "invitation_id");
        await confirm(context, args, { command: "accounts revoke-invitation", verb: "revoke", what: `invitation ${id}`, consequence: "Its link stops working at once." });
        const invitation = await client().accounts.revokeInvitation(id);
        output.result(invitation, () => `${renderInvitation(invitation)}\n\nRevoked.`);
      },
    },
  ],
};
