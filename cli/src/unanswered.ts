import { APIConnectionError, APIError } from "mailroom";

type Fetch = (request: Request) => Promise<Response>;

/**
 * The POST whose outcome a stop (Ctrl-C, SIGTERM) would leave in doubt, and the Idempotency-Key
 * that makes running the command again safe. A POST is in doubt from its sending until a success
 * answers it: before then it may have been carried out with its answer lost, may still be running
 * (409 idempotency_key_in_use, which the SDK waits out), or the SDK may be about to send it again
 * under the same key (after a 5xx, or a 409 domain_changed). An error answer ends the command at
 * once, and its report names the key where a rerun takes one (see rerunWith).
 */
export class Unanswered {
  #sent: string | undefined;
  /** Whether the server last answered the POST in doubt 409 idempotency_key_in_use: another run with its key is still going. */
  #inUse = false;
  /** Set while a rerunWith call runs: the key a rerun takes instead of the ones sent, or none. */
  #rerun: { key: string | undefined } | undefined;

  /** `fetch`, noting each POST's Idempotency-Key from its sending until a success answers it. */
  watch(fetch: Fetch): Fetch {
    return async (request) => {
      const key = request.method === "POST" ? (request.headers.get("idempotency-key") ?? undefined) : undefined;
      if (key !== undefined && key !== this.#sent) {
        this.#sent = key;
        this.#inUse = false;
      }
      const response = await fetch(request);
      if (key !== undefined && this.#sent === key) {
        this.#inUse = await isKeyInUse(response);
        if (response.ok) this.#sent = undefined;
      }
      return response;
    };
  }

  /**
   * Runs `call` with `key` as what `--idempotency-key` should be given to run the command again,
   * in place of the keys its requests are sent with (`suppressions import` sends `<key>#<n>`), or
   * none: a preview changes nothing, and leaving a workspace ends the token a rerun would need.
   * What an error of the call names, and what a stop during it names.
   */
  async rerunWith<T>(key: string | undefined, call: () => Promise<T>): Promise<T> {
    this.#rerun = { key };
    try {
      return await call();
    } catch (error) {
      if (error instanceof APIError || error instanceof APIConnectionError) error.idempotency_key = key;
      throw error;
    } finally {
      this.#rerun = undefined;
    }
  }

  /**
   * What a stop now would leave in doubt: the key to run the command again with, and whether the
   * first run with it is still going (a 409 being waited out); none while no POST is in doubt.
   */
  get inDoubt(): { key: string; stillGoing: boolean } | undefined {
    const key = this.#sent === undefined ? undefined : this.#rerun ? this.#rerun.key : this.#sent;
    return key === undefined ? undefined : { key, stillGoing: this.#inUse };
  }
}

/**
 * Whether `response` is a 409 idempotency_key_in_use. The SDK sends a POST again after a 409
 * domain_changed too (a race lost, nothing done), which is no other run still going: the code
 * tells them apart, as both carry Retry-After.
 */
async function isKeyInUse(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  const problem = (await response.clone().json().catch(() => undefined)) as { code?: unknown } | null | undefined;
  return problem?.code === "idempotency_key_in_use";
}
