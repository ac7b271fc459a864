import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { PagePromise } from "../pagination.js";
import type { Account, Invitation, InvitationWithUrl, Member, QueryParams, RequestBody, WorkspaceMembership } from "../types.js";
import { Resource } from "./resource.js";

/**
 * People, not programs (tag `Accounts`): the signed-in user's account and workspaces, and the
 * members and invitations of the token's workspace. Every method needs a user access token
 * (`mru_live_…`, `mru_test_…`) as the client's `apiKey`; an API key gets `403 user_token_required`
 * (`PermissionDeniedError`).
 */
export class Accounts extends Resource {
  /** `getAccount`: the user behind the token and every workspace they belong to, with their role. */
  get(options?: RequestOptions): APIPromise<Account> {
    return this.client.unwrap(this.client.http.GET("/v1/account", this.client.init(options)));
  }

  /** `updateAccount`: change the calling user's display name (null or "" clears it). */
  update(params: RequestBody<"updateAccount">, options?: RequestOptions): APIPromise<Account> {
    return this.client.unwrap(this.client.http.PATCH("/v1/account", { body: params, ...this.client.init(options, "PATCH") }));
  }

  /** `createWorkspace`: a new workspace owned by the calling user. */
  createWorkspace(params: RequestBody<"createWorkspace">, options?: RequestOptions): APIPromise<WorkspaceMembership> {
    return this.client.unwrap(this.client.http.POST("/v1/workspaces", { body: params, ...this.client.init(options, "POST") }));
  }

  /** `listMembers`: the workspace's members, oldest account first. */
  listMembers(query: QueryParams<"listMembers"> = {}, options?: RequestOptions): PagePromise<Member> {
    return this.client.paginate(query, (query) => this.client.http.GET("/v1/members", { params: { query }, ...this.client.init(options) }));
  }

  /** `updateMember`: change a member's role (only owners grant or take away `owner`). */
  updateMember(userId: string, params: RequestBody<"updateMember">, options?: RequestOptions): APIPromise<Member> {
    return this.client.unwrap(
      this.client.http.PATCH("/v1/members/{user_id}", { params: { path: { user_id: userId } }, body: params, ...this.client.init(options, "PATCH") }),
    );
  }

  /** `removeMember`: take the user out of the workspace; their tokens for it stop working at once. */
  removeMember(userId: string, options?: RequestOptions): APIPromise<Member> {
    return this.client.unwrap(this.client.http.DELETE("/v1/members/{user_id}", { params: { path: { user_id: userId } }, ...this.client.init(options, "DELETE") }));
  }

  /**
   * `leaveWorkspace`: take the calling user out of the token's workspace, whatever their role; the
   * token stops working at once. The last owner cannot leave (`ConflictError`, `last_owner`).
   * Not sent again after an attempt whose outcome is unknown: its error is thrown (see the README).
   */
  leaveWorkspace(options?: RequestOptions): APIPromise<Member> {
    return this.client.unwrap(this.client.http.POST("/v1/workspace/leave", this.client.initEndingCredential(options)));
  }

  /** `createInvitation`: invite an address with a role; `accept_url` is shown only now. */
  createInvitation(params: RequestBody<"createInvitation">, options?: RequestOptions): APIPromise<InvitationWithUrl> {
    return this.client.unwrap(this.client.http.POST("/v1/invitations", { body: params, ...this.client.init(options, "POST") }));
  }

  /** `listInvitations`: pending invitations, newest first, without their links. */
  listInvitations(query: QueryParams<"listInvitations"> = {}, options?: RequestOptions): PagePromise<Invitation> {
    return this.client.paginate(query, (query) => this.client.http.GET("/v1/invitations", { params: { query }, ...this.client.init(options) }));
  }

  /** `revokeInvitation`: withdraw a pending invitation; its link stops working. */
  revokeInvitation(invitationId: string, options?: RequestOptions): APIPromise<Invitation> {
    return this.client.unwrap(
      this.client.http.DELETE("/v1/invitations/{invitation_id}", { params: { path: { invitation_id: invitationId } }, ...this.client.init(options, "DELETE") }),
    );
  }
}
