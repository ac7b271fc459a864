import { useMemo } from "react";
import type { ApiKey } from "mailroom";
import { useApi } from "../../api/api-context";
import { collectPages } from "../../api/collect-pages";
import { useRequest, type RequestState } from "../../api/use-request";
import type { KeyNames } from "../../lib/request-log";

// Enough for any environment; past it, the rest are shown by their ids.
const KEYS_CAP = 1000;

/**
 * The environment's API keys (listApiKeys), to name the log's credentials and to offer them as a
 * filter. Without them (still loading, or refused) the log shows the keys' ids.
 */
export function useApiKeyNames(): { keys: RequestState<ApiKey[]>; names: KeyNames } {
  const api = useApi();
  const keys = useRequest(
    async (signal) =>
      (await collectPages((after) => api.call((mr) => mr.apiKeys.list({ limit: 100, ...(after ? { after } : {}) }, { signal })), { cap: KEYS_CAP })).items,
    [api],
  );
  const names = useMemo<KeyNames>(() => new Map(keys.data?.map((key) => [key.id, key.name] as const)), [keys.data]);
  return { keys, names };
}
