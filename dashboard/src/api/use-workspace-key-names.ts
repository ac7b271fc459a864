import { useMemo } from "react";
import type { ApiKey } from "mailroom";
import type { KeyNames } from "../lib/actors";
import type { Environment } from "../lib/environment";
import { useApi } from "./api-context";
import { collectPages } from "./collect-pages";
import { useRequest } from "./use-request";

// Enough for any environment; past it, the rest are shown by their ids.
const KEYS_CAP = 1000;
const ENVIRONMENTS: readonly Environment[] = ["live", "sandbox"];

/**
 * The names of the workspace's API keys in both environments (listApiKeys in each), to put on the
 * key ids that the audit log carries: what both environments share (settings, domains,
 * templates) is in both logs, done by a key of either. Empty while loading; an environment whose
 * list fails leaves its keys shown by their ids.
 */
export function useWorkspaceKeyNames(): KeyNames {
  const api = useApi();
  const keys = useRequest(async (signal) => {
    const lists = await Promise.allSettled(
      ENVIRONMENTS.map((environment) =>
        collectPages((after) => api.call((mr) => mr.apiKeys.list({ limit: 100, ...(after ? { after } : {}) }, { signal }), environment), { cap: KEYS_CAP }),
      ),
    );
    return lists.flatMap((list): ApiKey[] => (list.status === "fulfilled" ? list.value.items : []));
  }, [api]);
  return useMemo<KeyNames>(() => new Map(keys.data?.map((key) => [key.id, key.name] as const)), [keys.data]);
}
