import type { KubeObject, ResourceKind } from './meta.js';

export const SubjectAccessReviewKind: ResourceKind = {
  group: 'authorization.k8s.io',
  version: 'v1',
  kind: 'SubjectAccessReview',
  plural: 'subjectaccessreviews',
  namespaced: false,
};

/** What a SubjectAccessReview asks to do (authorization/v1 ResourceAttributes). */
export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  version?: string;
  subresource?: string;
  /** Empty or absent: cluster-wide (or a cluster-scoped resource). */
  namespace?: string;
  /** Empty or absent: any object. */
  name?: string;
}

/** A SubjectAccessReview: is this user allowed this request? Created, answered, never stored. */
export interface SubjectAccessReview extends KubeObject {
  spec: {
    resourceAttributes: ResourceAttributes;
    user: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
  };
  status?: {
    allowed: boolean;
    denied?: boolean;
    reason?: string;
    evaluationError?: string;
  };
}
