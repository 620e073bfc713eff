/** A resource request path taken apart, before anyone knows whether the resource exists. */
export interface ApiPath {
  /** '' for the core group (`/api/v1`). */
  group: string;
  version: string;
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

// `/api/v1/namespaces/{name}/status` and `/finalize` are subresources of the Namespace
// itself, not a collection named "status" inside it.
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * Splits a request path the way the API server's RequestInfo resolver does:
 * `/api/v1[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]` and the same under
 * `/apis/{group}/{version}`. Undefined for anything that is not a resource request.
 */
export function parseApiPath(pathname: string): ApiPath | undefined {
  let segments: string[];
  try {
    segments = pathname
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => decodeURIComponent(segment));
  } catch {
    return undefined;
  }
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 2) {
    group = '';
    version = segments[1] as string;
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 3) {
    group = segments[1] as string;
    version = segments[2] as string;
    rest = segments.slice(3);
  } else {
    return undefined;
  }
  let namespace: string | undefined;
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    !NAMESPACE_SUBRESOURCES.has(rest[2] as string)
  ) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource, ...extra] = rest;
  if (resource === undefined || extra.length > 0) return undefined;
  return { group, version, resource, namespace, name, subresource };
}
