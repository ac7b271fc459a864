import { PageHeader } from "../../components/page-header";
import { InvitationsSection } from "./invitations-section";
import { MembersSection } from "./members-section";
import { PasswordSection } from "./password-section";
import { WorkspaceSection } from "./workspace-section";

/** `/settings`: the workspace, its members and invitations, and the user's password. */
export function SettingsPage() {
  return (
    <>
      <PageHeader title="Settings" />
      <WorkspaceSection />
      <MembersSection />
      <InvitationsSection />
      <PasswordSection />
    </>
  );
}
