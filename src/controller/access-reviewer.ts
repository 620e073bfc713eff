import {
  type ResourceAttributes,
  type SubjectAccessReview,
  SubjectAccessReviewKind,
} from '../api/subject-access-review.js';
import type { UserInfo } from '../api/user-info.js';
import type { ResourceStore } from '../store/resource-store.js';

/** Asks whether user may do what attributes describe; rejects when the question cannot be answered. */
export type AccessReviewer = (user: UserInfo, attributes: ResourceAttributes) => Promise<boolean>;

/**
 * Asks the cluster: creates a SubjectAccessReview through the store and reads its answer.
 * Only a Kubernetes store answers one (the API server never stores them).
 */
export function subjectAccessReviewer(store: ResourceStore): AccessReviewer {
  return async (user, attributes) => {
    const review: SubjectAccessReview = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: SubjectAccessReviewKind.kind,
      metadata: { name: '' },
      spec: {
        resourceAttributes: attributes,
        user: user.username,
        ...(user.uid !== undefined && { uid: user.uid }),
        ...(user.groups !== undefined && { groups: user.groups }),
        ...(user.extra !== undefined && { extra: user.extra }),
      },
    };
    const answered = await store.create<SubjectAccessReview>(SubjectAccessReviewKind, review);
    return answered.status?.allowed === true;
  };
}

/**
 * Embedded mode's answer: one machine, one user, no RBAC to consult, so every request is
 * allowed (README names this deviation).
 */
export const allowEveryone: AccessReviewer = async () => true;
