import { useState } from "react";
import { Link } from "wouter";
import { useWorkspace } from "../../api/api-context";
import { PageHeader } from "../../components/page-header";
import { hasRole } from "../../lib/roles";
import { InvitationsSection } from "./invitations-section";
import { MembersSection } from "./members-section";
import { PasswordSection } from "./password-section";
import { ProfileSection } from "./profile-section";
import { WorkspaceSection } from "./workspace-section";

/** `/settings`: the workspace, its members and invitations, and the user's name and password; the audit log for admins. */
export function SettingsPage() {
  const { workspace } = useWorkspace();
  // The members list names you too: each name you save in Your account asks it again.
  const [namesSaved, setNamesSaved] = useState(0);
  // listAuditEvents needs an admin: below that the link would only lead to a refusal.
  const auditLog = hasRole(workspace.role, "admin") ? (
    <Link href="/settings/audit-log" className="button">
      Audit log
    </Link>
  ) : undefined;
  return (
    <>
      <PageHeader title="Settings" actions={auditLog} />
      <WorkspaceSection />
      <MembersSection namesSaved={namesSaved} />
      <InvitationsSection />
      <ProfileSection onNameSaved={() => setNamesSaved((count) => count + 1)} />
      <PasswordSection />
    </>
  );
}
