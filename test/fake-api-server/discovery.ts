import type { ServedKind } from './kinds.js';

const OBJECT_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

/**
 * The discovery documents of the served kinds, as the API server answers them to any
 * authenticated user (the default system:discovery role): `/api` (APIVersions), `/apis`
 * (APIGroupList), `/api/v1` and `/apis/<group>/<version>` (APIResourceList, each resource and
 * its status subresource). Undefined for any other path, and for a group version not served.
 */
export function discoveryDocument(
  pathname: string,
  kinds: Iterable<ServedKind>,
): object | undefined {
  const served = [...kinds];
  const segments = pathname.split('/').filter((s) => s !== '');
  if (segments.length === 1 && segments[0] === 'api') {
    return { kind: 'APIVersions', apiVersion: 'v1', versions: ['v1'] };
  }
  if (segments.length === 1 && segments[0] === 'apis') {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: apiGroups(served) };
  }
  const [root, ...rest] = segments;
  const groupVersion =
    root === 'api' && rest.length === 1
      ? { group: '', version: rest[0] as string }
      : root === 'apis' && rest.length === 2
        ? { group: rest[0] as string, version: rest[1] as string }
        : undefined;
  if (!groupVersion) return undefined;
  const inGroup = served.filter(
    (s) => s.kind.group === groupVersion.group && s.kind.version === groupVersion.version,
  );
  if (inGroup.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion:
      groupVersion.group === ''
        ? groupVersion.version
        : `${groupVersion.group}/${groupVersion.version}`,
    resources: inGroup.flatMap((s) => [
      {
        name: s.kind.plural,
        singularName: s.kind.kind.toLowerCase(),
        namespaced: s.kind.namespaced,
        kind: s.kind.kind,
        verbs: s.createOnly ? ['create'] : OBJECT_VERBS,
      },
      ...(s.statusSubresource
        ? [
            {
              name: `${s.kind.plural}/status`,
              singularName: '',
              namespaced: s.kind.namespaced,
              kind: s.kind.kind,
              verbs: ['get', 'patch', 'update'],
            },
          ]
        : []),
    ]),
  };
}

function apiGroups(served: readonly ServedKind[]): object[] {
  const versions = new Map<string, string[]>();
  for (const { kind } of served) {
    if (kind.group === '') continue;
    const list = versions.get(kind.group) ?? [];
    if (!list.includes(kind.version)) list.push(kind.version);
    versions.set(kind.group, list);
  }
  return [...versions].map(([name, list]) => {
    const entries = [...list]
      .sort(byVersionPriority)
      .map((version) => ({ groupVersion: `${name}/${version}`, version }));
    return { name, versions: entries, preferredVersion: entries[0] };
  });
}

/**
 * Kubernetes' version priority (apimachinery's CompareKubeAwareVersionStrings): GA before beta
 * before alpha, a higher number first; the first of a group is its preferred version.
 */
export function byVersionPriority(a: string, b: string): number {
  return priority(b) - priority(a);
}

function priority(version: string): number {
  const match = /^v([0-9]+)(?:(alpha|beta)([0-9]+))?$/.exec(version);
  if (!match) return -1;
  const stage = match[2] === undefined ? 2 : match[2] === 'beta' ? 1 : 0;
  return stage * 1e6 + Number(match[1]) * 1e3 + Number(match[3] ?? 0);
}
