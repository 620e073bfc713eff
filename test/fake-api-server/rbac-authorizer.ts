import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** Who is asking: what an API server's authenticator hands its authorizer. */
export interface UserInfo {
  username: string;
  groups?: readonly string[];
}

/** One resource rule of a Role or ClusterRole, as in rbac.authorization.k8s.io/v1. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  /** When present, only requests naming one of these objects match. */
  resourceNames?: string[];
}

/** What a resource request asks to do, as the API server's RequestInfo resolves it. */
export interface ResourceAttributes {
  user: UserInfo;
  verb: string;
  /** '' for the core group. */
  apiGroup: string;
  resource: string;
  subresource?: string | undefined;
  /** Absent for cluster-scoped objects and for lists or watches across namespaces. */
  namespace?: string | undefined;
  /** Absent for create, and for list or watch unless a `metadata.name=` field selector names one. */
  name?: string | undefined;
}

/** The answer; reason says which binding allowed it, as RBAC's audit annotation does. */
export interface AuthorizationDecision {
  allowed: boolean;
  reason: string;
}

/** A rule of a loaded role: role is `ClusterRole/<name>` or `Role/<namespace>/<name>`. */
export interface RoleRule {
  role: string;
  index: number;
  rule: PolicyRule;
}

/** A copy of an authorizer missing one rule, or one verb of it. */
export interface RuleRemoval {
  label: string;
  rbac: RbacAuthorizer;
  rule: RoleRule;
  /** The verb removed; undefined when the whole rule is. */
  verb: string | undefined;
}

interface Subject {
  kind: string;
  name: string;
  namespace: string | undefined;
}

interface Binding {
  /** `ClusterRoleBinding/<name>` or `RoleBinding/<namespace>/<name>`. */
  id: string;
  /** The namespace a RoleBinding grants in; undefined for a ClusterRoleBinding. */
  namespace: string | undefined;
  /** The role id the binding refers to (it may not exist: then it grants nothing). */
  roleId: string;
  subjects: Subject[];
}

const RBAC_API_VERSION = 'rbac.authorization.k8s.io/v1';
const ROLE_KINDS = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

/**
 * Kubernetes RBAC over a fixed set of Roles, ClusterRoles and their bindings: the same
 * matching rules as the API server's RBAC authorizer (verbs, apiGroups, resources with
 * `resource/subresource` and `*`/`*\/subresource`, resourceNames only for named requests,
 * RoleBindings granting in their own namespace). Immutable: withoutRule returns a copy.
 */
export class RbacAuthorizer {
  private constructor(
    private readonly roles: ReadonlyMap<string, readonly RoleRule[]>,
    private readonly bindings: readonly Binding[],
  ) {}

  /** Builds an authorizer from parsed objects; kinds other than the four RBAC kinds are skipped. */
  static fromObjects(objects: readonly unknown[]): RbacAuthorizer {
    const roles = new Map<string, RoleRule[]>();
    const bindings: Binding[] = [];
    for (const object of flattenLists(objects)) {
      if (!isRecord(object) || typeof object.kind !== 'string' || !ROLE_KINDS.has(object.kind)) {
        continue;
      }
      if (object.apiVersion !== RBAC_API_VERSION) continue;
      const metadata = recordField(object, 'metadata');
      const where = `${object.kind} "${String(metadata.name ?? '')}"`;
      const name = stringField(metadata, 'name', where);
      const namespace = object.kind.startsWith('Cluster')
        ? undefined
        : optionalString(metadata.namespace) || 'default';
      if (object.kind === 'Role' || object.kind === 'ClusterRole') {
        const id = roleId(object.kind, name, namespace);
        const rules = arrayField(object, 'rules', where).map((rule, index) => ({
          role: id,
          index,
          rule: parseRule(rule, `${where} rules[${index}]`),
        }));
        roles.set(id, rules);
      } else {
        bindings.push(parseBinding(object.kind, name, namespace, object, where));
      }
    }
    return new RbacAuthorizer(roles, bindings);
  }

  /** A copy that also holds extra's roles and bindings (a test's own grants beside the manifests'). */
  with(extra: RbacAuthorizer): RbacAuthorizer {
    return new RbacAuthorizer(new Map([...this.roles, ...extra.roles]), [
      ...this.bindings,
      ...extra.bindings,
    ]);
  }

  /** Every rule of every loaded role, in role then rule order. */
  rules(): RoleRule[] {
    return [...this.roles.values()].flat();
  }

  /**
   * One weakened copy per rule of roles and per verb of a rule with several: what a test of
   * "every rule is needed" runs the component under, each labelled.
   */
  removals(roles: readonly string[]): RuleRemoval[] {
    return this.rules()
      .filter((r) => roles.includes(r.role))
      .flatMap((rule) => [
        {
          label: 'the whole rule',
          rbac: this.withoutRule(rule.role, rule.index),
          rule,
          verb: undefined,
        },
        ...(rule.rule.verbs.length > 1
          ? rule.rule.verbs.map((verb) => ({
              label: `verb ${verb}`,
              rbac: this.withoutVerb(rule.role, rule.index, verb),
              rule,
              verb,
            }))
          : []),
      ]);
  }

  /** A copy without one rule; indices of the other rules stay as they were. Throws if absent. */
  withoutRule(role: string, index: number): RbacAuthorizer {
    const rules = this.roles.get(role);
    if (!rules?.some((rule) => rule.index === index)) {
      throw new Error(`no rule ${index} in ${role}; loaded: ${[...this.roles.keys()].join(', ')}`);
    }
    const roles = new Map(this.roles);
    roles.set(
      role,
      rules.filter((rule) => rule.index !== index),
    );
    return new RbacAuthorizer(roles, this.bindings);
  }

  /** A copy where one rule lacks one verb (the rule goes when it was its last verb). */
  withoutVerb(role: string, index: number, verb: string): RbacAuthorizer {
    const rule = this.roles.get(role)?.find((r) => r.index === index);
    if (!rule?.rule.verbs.includes(verb)) {
      throw new Error(`no verb ${verb} in rule ${index} of ${role}`);
    }
    const verbs = rule.rule.verbs.filter((v) => v !== verb);
    if (verbs.length === 0) return this.withoutRule(role, index);
    const roles = new Map(this.roles);
    roles.set(
      role,
      (this.roles.get(role) ?? []).map((r) =>
        r.index === index ? { ...r, rule: { ...r.rule, verbs } } : r,
      ),
    );
    return new RbacAuthorizer(roles, this.bindings);
  }

  /** Decides a resource request the way the RBAC authorizer does: allowed if any binding grants it. */
  authorize(request: ResourceAttributes): AuthorizationDecision {
    for (const binding of this.bindings) {
      if (binding.namespace !== undefined && binding.namespace !== request.namespace) continue;
      const subject = binding.subjects.find((s) => appliesTo(s, request.user, binding.namespace));
      if (!subject) continue;
      const granted = this.roles.get(binding.roleId)?.some((r) => ruleAllows(r.rule, request));
      if (granted) {
        return {
          allowed: true,
          reason: `RBAC: allowed by ${describe(binding.id)} of ${describe(binding.roleId)} to ${subject.kind} "${subject.namespace ? `${subject.namespace}/` : ''}${subject.name}"`,
        };
      }
    }
    return { allowed: false, reason: '' };
  }
}

/** Parses multi-document YAML (a manifest file's text) into an authorizer. */
export function loadRbacYaml(text: string, source = 'RBAC YAML'): RbacAuthorizer {
  return RbacAuthorizer.fromObjects(parseYamlDocuments(text, source));
}

/** An authorizer from already parsed manifests (objects of other kinds are ignored). */
export function loadRbacObjects(objects: readonly unknown[]): RbacAuthorizer {
  return RbacAuthorizer.fromObjects(objects);
}

/** Reads every .yaml, .yml and .json file under dir (recursively, in name order). */
export async function loadRbacFromDirectory(dir: string): Promise<RbacAuthorizer> {
  const names = (await readdir(dir, { recursive: true }))
    .filter((name) => /\.(ya?ml|json)$/i.test(name))
    .sort();
  const objects: unknown[] = [];
  for (const name of names) {
    const file = join(dir, name);
    objects.push(...parseYamlDocuments(await readFile(file, 'utf8'), file));
  }
  return RbacAuthorizer.fromObjects(objects);
}

/** The identity the API server gives a ServiceAccount token. */
export function serviceAccountUser(namespace: string, name: string): UserInfo {
  return {
    username: `system:serviceaccount:${namespace}:${name}`,
    groups: [
      'system:serviceaccounts',
      `system:serviceaccounts:${namespace}`,
      'system:authenticated',
    ],
  };
}

/**
 * Parsed documents by source and text: a test process starts many fake API servers over the same
 * manifests, and parsing them again was ~10 s of the suite's CPU. Each caller gets its own copy.
 */
const parsedDocuments = new Map<string, unknown[]>();

function parseYamlDocuments(text: string, source: string): unknown[] {
  const key = `${source}\n${text}`;
  let parsed = parsedDocuments.get(key);
  if (parsed === undefined) {
    parsed = parseYamlText(text, source);
    parsedDocuments.set(key, parsed);
  }
  return structuredClone(parsed);
}

function parseYamlText(text: string, source: string): unknown[] {
  const values: unknown[] = [];
  parseAllDocuments(text).forEach((document, index) => {
    if (document.errors.length > 0) {
      throw new Error(
        `${source} (document ${index + 1}): invalid YAML: ${document.errors[0]?.message ?? ''}`,
      );
    }
    const value: unknown = document.toJS();
    if (value !== null && value !== undefined) values.push(value);
  });
  return values;
}

/** Expands `kind: List` documents (kubectl's output format) into their items. */
function flattenLists(objects: readonly unknown[]): unknown[] {
  return objects.flatMap((object) =>
    isRecord(object) && object.kind === 'List' && Array.isArray(object.items)
      ? flattenLists(object.items)
      : [object],
  );
}

function parseRule(value: unknown, where: string): PolicyRule {
  if (!isRecord(value)) throw new Error(`${where}: a rule must be a mapping`);
  // nonResourceURLs rules (no resources) never match a resource request, so they are not kept.
  const rule: PolicyRule = {
    apiGroups: stringList(value, 'apiGroups', where),
    resources: stringList(value, 'resources', where),
    verbs: stringList(value, 'verbs', where),
  };
  const resourceNames = stringList(value, 'resourceNames', where);
  if (resourceNames.length > 0) rule.resourceNames = resourceNames;
  return rule;
}

function parseBinding(
  kind: string,
  name: string,
  namespace: string | undefined,
  object: Record<string, unknown>,
  where: string,
): Binding {
  const roleRef = recordField(object, 'roleRef');
  const refKind = stringField(roleRef, 'kind', `${where} roleRef`);
  if (refKind !== 'ClusterRole' && !(refKind === 'Role' && kind === 'RoleBinding')) {
    throw new Error(`${where}: roleRef.kind "${refKind}" cannot be bound by a ${kind}`);
  }
  const refName = stringField(roleRef, 'name', `${where} roleRef`);
  const subjects = arrayField(object, 'subjects', where).map((s, index) => {
    const at = `${where} subjects[${index}]`;
    if (!isRecord(s)) throw new Error(`${at}: a subject must be a mapping`);
    return {
      kind: stringField(s, 'kind', at),
      name: stringField(s, 'name', at),
      namespace: optionalString(s.namespace),
    };
  });
  return {
    id: roleId(kind, name, namespace),
    namespace,
    roleId: roleId(refKind, refName, refKind === 'Role' ? namespace : undefined),
    subjects,
  };
}

function roleId(kind: string, name: string, namespace: string | undefined): string {
  return namespace === undefined ? `${kind}/${name}` : `${kind}/${namespace}/${name}`;
}

/** `ClusterRole "x"` or `Role "ns/x"`, the way RBAC's reasons name them. */
function describe(id: string): string {
  const slash = id.indexOf('/');
  return `${id.slice(0, slash)} "${id.slice(slash + 1)}"`;
}

function appliesTo(
  subject: Subject,
  user: UserInfo,
  bindingNamespace: string | undefined,
): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.username;
    case 'Group':
      return user.groups?.includes(subject.name) ?? false;
    case 'ServiceAccount': {
      // A RoleBinding's ServiceAccount subject defaults to the binding's namespace.
      const namespace = subject.namespace || bindingNamespace;
      return (
        namespace !== undefined &&
        user.username === `system:serviceaccount:${namespace}:${subject.name}`
      );
    }
    default:
      return false;
  }
}

function ruleAllows(rule: PolicyRule, request: ResourceAttributes): boolean {
  return (
    matchesOrStar(rule.verbs, request.verb) &&
    matchesOrStar(rule.apiGroups, request.apiGroup) &&
    resourceMatches(rule.resources, request.resource, request.subresource) &&
    resourceNameMatches(rule.resourceNames, request.name)
  );
}

function matchesOrStar(values: readonly string[], wanted: string): boolean {
  return values.includes('*') || values.includes(wanted);
}

function resourceMatches(
  ruleResources: readonly string[],
  resource: string,
  subresource: string | undefined,
): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return ruleResources.some(
    (r) => r === '*' || r === combined || (subresource !== undefined && r === `*/${subresource}`),
  );
}

// resourceNames restricts a rule to named requests: create, and lists or watches without a
// metadata.name field selector, carry no name and so never match such a rule.
function resourceNameMatches(
  names: readonly string[] | undefined,
  name: string | undefined,
): boolean {
  if (!names) return true;
  return name !== undefined && names.includes(name);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function recordField(object: Record<string, unknown>, field: string): Record<string, unknown> {
  const value = object[field];
  return isRecord(value) ? value : {};
}

function stringField(object: Record<string, unknown>, field: string, where: string): string {
  const value = object[field];
  if (typeof value !== 'string' || value === '') throw new Error(`${where}: ${field} is required`);
  return value;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A list field; absent is empty, as in the API's JSON. */
function arrayField(object: Record<string, unknown>, field: string, where: string): unknown[] {
  const value = object[field] ?? [];
  if (!Array.isArray(value)) throw new Error(`${where}: ${field} must be a list`);
  return value;
}

function stringList(object: Record<string, unknown>, field: string, where: string): string[] {
  const value = arrayField(object, field, where);
  if (!value.every((item) => typeof item === 'string')) {
    throw new Error(`${where}: ${field} must be a list of strings`);
  }
  return value;
}
